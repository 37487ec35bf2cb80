#pragma once
// The LoRA network (sd-scripts' networks.lora): adapters attached to the default target Linears
// of the SDXL UNet and text encoders, kohya names, parameter groups for the optimizer, and the
// state dict in the kohya layout (<name>.lora_down.weight [rank,in], .lora_up.weight [out,rank],
// .alpha scalar). The models keep their modules and keys: an adapter is set on Linear::lora.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/linear.h"
#include "network/lora_targets.h"

namespace sinter::network {

// Bad LoRA options or files: the message names the option, key or file.
class LoraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// network_args ("key=value" strings) this build honours; anything else is a LoraError listing them.
struct LoraNetworkArgs {
  std::optional<double> loraplusLrRatio;             // loraplus_lr_ratio
  std::optional<double> loraplusUnetLrRatio;         // loraplus_unet_lr_ratio
  std::optional<double> loraplusTextEncoderLrRatio;  // loraplus_text_encoder_lr_ratio
  std::optional<std::string> trainBlocks;             // train_blocks (networks.lora_flux): all, double, single
  std::vector<std::pair<std::string, std::string>> raw;  // as given, in order (for ss_network_args)
};
const std::vector<std::string>& supportedNetworkArgs();
LoraNetworkArgs parseNetworkArgs(const std::vector<std::string>& args);

struct LoraRankAlpha {
  int64_t rank = 0;
  double alpha = 0.0;
};

struct LoraNetworkOptions {
  int64_t dim = 4;          // network_dim
  double alpha = 1.0;       // network_alpha; 0 means alpha = dim (no scaling), as sd-scripts
  double dropout = 0.0;     // network_dropout
  double multiplier = 1.0;
  torch::Dtype dtype = torch::kFloat32;  // the adapters' dtype: fp32 unless full_bf16/full_fp16
  torch::Device device = torch::kCPU;
  LoraNetworkArgs args;
  // dim_from_weights: rank and alpha per module name, read from a file; modules not listed get no
  // adapter (sd-scripts' create_network_from_weights).
  std::optional<std::map<std::string, LoraRankAlpha>> moduleRanks;
};

// One adapter and where it sits.
struct LoraModule {
  std::string name;        // lora_unet_..., lora_te1_..., lora_te2_...
  std::string modulePath;  // the path inside its model
  LoraComponent component = LoraComponent::Unet;
  models::Linear linear;   // the module it is attached to
  std::shared_ptr<models::LoraAdapter> adapter;
};

// An optimizer parameter group, as sd-scripts' prepare_optimizer_params builds them.
struct LoraParamGroup {
  std::string label;  // "textencoder", "textencoder plus", "unet", "unet plus"
  double lr = 0.0;
  std::vector<torch::Tensor> params;
};

struct LoraLoadReport {
  size_t loadedModules = 0;
  std::vector<std::string> missing;     // network modules the file has no weights for
  std::vector<std::string> unexpected;  // file keys the network has no module for
  std::vector<std::string> warnings;
};

class LoraNetwork {
 public:
  explicit LoraNetwork(LoraNetworkOptions options);
  ~LoraNetwork();
  LoraNetwork(const LoraNetwork&) = delete;
  LoraNetwork& operator=(const LoraNetwork&) = delete;

  // Attaches adapters to the models::Linear modules of `root` (found by walking named_modules())
  // that the family's `rule` selects. `pathPrefix` is prepended to the module paths for naming
  // (e.g. when `root` is a submodule of the Hugging Face layout). Returns how many were attached.
  size_t attach(const LoraTargetRule& rule, torch::nn::Module& root, const std::string& pathPrefix = "");
  // Removes every adapter from its Linear (the models become plain again).
  void detach();

  const LoraNetworkOptions& options() const { return options_; }
  const std::vector<LoraModule>& modules() const { return modules_; }
  size_t moduleCount(LoraComponent component) const;
  const LoraModule* find(const std::string& name) const;

  std::vector<torch::Tensor> parameters() const;  // down, up per module, in module order
  int64_t parameterCount() const;
  // sd-scripts' prepare_optimizer_params: text encoders at text_encoder_lr, UNet at unet_lr, each
  // falling back to defaultLr; LoRA+ splits lora_up into a "plus" group at lr * ratio; groups
  // whose lr is 0 are left out (their parameters are not trained).
  std::vector<LoraParamGroup> parameterGroups(std::optional<double> textEncoderLr, std::optional<double> unetLr,
                                              double defaultLr) const;

  void setMultiplier(double multiplier);
  void setTraining(bool training);  // dropout on/off is the Linear's is_training(); kept for symmetry

  // The kohya state dict: <name>.lora_down.weight, <name>.lora_up.weight, <name>.alpha (0-dim),
  // converted to `dtype` (save_precision) on the CPU.
  std::vector<std::pair<std::string, torch::Tensor>> stateDict(torch::Dtype dtype) const;
  // Loads weights by kohya name (non-strict, as sd-scripts' load_weights): shapes must match.
  // `source` names the file in error messages.
  LoraLoadReport loadStateDict(const std::map<std::string, torch::Tensor>& tensors, const std::string& source);

 private:
  int64_t rankFor(const std::string& name, double* alpha) const;
  LoraNetworkOptions options_;
  std::vector<LoraModule> modules_;
};

}  // namespace sinter::network
