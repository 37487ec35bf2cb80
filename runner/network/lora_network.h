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

#include "core/network_rank.h"
#include "models/layers/conv2d.h"
#include "models/layers/linear.h"
#include "models/adapters/lycoris_adapter.h"
#include "network/lora_targets.h"
#include "network/lycoris_args.h"

namespace sinter::network {

// Bad LoRA options or files: the message names the option, key or file.
class LoraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// network_args ("key=value" strings) this build honours, with sd-scripts' meaning
// (networks/lora.py and networks/lora_flux.py create_network); anything else is a LoraError
// naming the key (and why, for the ones sd-scripts has that this build does not train).
struct LoraNetworkArgs {
  std::optional<double> loraplusLrRatio;             // loraplus_lr_ratio
  std::optional<double> loraplusUnetLrRatio;         // loraplus_unet_lr_ratio
  std::optional<double> loraplusTextEncoderLrRatio;  // loraplus_text_encoder_lr_ratio
  std::optional<int64_t> convDim;                    // conv_dim: LoRA on the UNet's 3x3 convs
  std::optional<double> convAlpha;                   // conv_alpha (1 where conv_dim comes without it)
  std::optional<double> rankDropout;                 // rank_dropout
  std::optional<double> moduleDropout;               // module_dropout
  // networks.lora (SDXL), 23 values each (get_block_index: 0 embeddings, 1-9 input_blocks,
  // 10-12 middle_block, 13-21 output_blocks, 22 out).
  std::optional<std::vector<int64_t>> blockDims, convBlockDims;   // block_dims, conv_block_dims
  std::optional<std::vector<double>> blockAlphas, convBlockAlphas;  // block_alphas, conv_block_alphas
  // down_lr_weight, mid_lr_weight, up_lr_weight, block_lr_zero_threshold, as get_block_lr_weight
  // turns them into 23 factors of the UNet's learning rate.
  std::optional<std::vector<double>> blockLrWeight;
  // networks.lora_flux (FLUX)
  std::optional<std::string> trainBlocks;             // train_blocks: all, double, single
  std::optional<std::vector<bool>> trainDoubleBlocks;  // train_double_block_indices, 19 flags
  std::optional<std::vector<bool>> trainSingleBlocks;  // train_single_block_indices, 38 flags
  // img_attn_dim, txt_attn_dim, img_mlp_dim, txt_mlp_dim, img_mod_dim, txt_mod_dim, single_dim,
  // single_mod_dim (0 leaves those modules out).
  std::vector<std::optional<int64_t>> fluxTypeDims = std::vector<std::optional<int64_t>>(8);
  bool trainT5xxl = false;  // train_t5xxl=True: LoRA on T5-XXL too (lora_te3), T5-XXL encodes in the step
  // networks.lora_sd3 (SD 3.x): context_attn_dim, context_mlp_dim, context_mod_dim, x_attn_dim, x_mlp_dim,
  // x_mod_dim (0 leaves those modules out); train_block_indices over the joint blocks.
  std::vector<std::optional<int64_t>> sd3TypeDims = std::vector<std::optional<int64_t>>(6);
  std::optional<std::vector<bool>> trainJointBlocks;
  // emb_dims: LoRA ranks on the MMDiT's context_embedder, t_embedder, x_embedder (a 2x2 conv), y_embedder,
  // final_layer's adaLN_modulation and linear (all 0: none).
  std::vector<int64_t> sd3EmbDims = std::vector<int64_t>(6, 0);
  std::vector<std::pair<std::string, std::string>> raw;  // as given, in order (for ss_network_args)
  // network_module = "lycoris.kohya": its arguments (network/lycoris_args.h); the loraplus ratios
  // above still apply, everything else of networks.lora is not read.
  std::optional<LycorisArgs> lycoris;

  bool usesBlocks() const { return blockDims || blockLrWeight; }  // sd-scripts' per-block dims are on
};
const std::vector<std::string>& supportedNetworkArgs();
// `networkModule` "lycoris.kohya" reads LyCORIS's arguments instead (parseLycorisArgs).
LoraNetworkArgs parseNetworkArgs(const std::vector<std::string>& args, const std::string& networkModule = "networks.lora");
// The keys of `args` that belong to another network module than `module`: a LoraError naming the first
// (block_dims with networks.lora_flux, train_blocks with networks.lora, x_attn_dim with networks.lora_flux, ...).
void checkNetworkArgsFamily(const LoraNetworkArgs& args, LoraNetworkModule module);
// get_block_lr_weight's named weights for 9 blocks: cosine, sine, linear, reverse_linear, zeros,
// each with an optional "+number" added; a LoraError for other names.
std::vector<double> namedBlockLrWeights(const std::string& key, const std::string& spec);

struct LoraRankAlpha {
  int64_t rank = 0;
  double alpha = 0.0;
};

struct LoraNetworkOptions {
  int64_t dim = kNetworkDimWhenUnset;  // network_dim
  double alpha = 1.0;       // network_alpha; 0 means alpha = dim (no scaling), as sd-scripts
  double dropout = 0.0;     // network_dropout (neuron dropout)
  double multiplier = 1.0;
  torch::Dtype dtype = torch::kFloat32;  // the adapters' dtype: fp32 unless full_bf16/full_fp16
  torch::Device device = torch::kCPU;
  LoraNetworkArgs args;
  // dim_from_weights: rank and alpha per module name, read from a file; modules not listed get no
  // adapter (sd-scripts' create_network_from_weights).
  std::optional<std::map<std::string, LoraRankAlpha>> moduleRanks;
};

// One adapter and where it sits: on a Linear, or on a Conv2d (conv_dim).
struct LoraModule {
  std::string name;        // lora_unet_..., lora_te1_..., lora_te2_...
  std::string modulePath;  // the path inside its model
  LoraComponent component = LoraComponent::Unet;
  models::Linear linear{nullptr};  // the module it is attached to, or
  models::Conv2d conv{nullptr};
  std::shared_ptr<models::LoraAdapter> adapter;    // networks.lora / networks.lora_flux, or
  std::shared_ptr<models::LycorisAdapter> lycoris;  // lycoris.kohya

  // The trained tensors by their state-dict names (lora_down.weight, lora_up.weight; LyCORIS's).
  std::vector<std::pair<std::string, torch::Tensor>> trainedTensors() const;
};

// An optimizer parameter group, as sd-scripts' prepare_optimizer_params builds them.
struct LoraParamGroup {
  std::string label;  // "textencoder", "textencoder plus", "unet", "unet plus", "unet_block5", ...
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

  // Attaches adapters to the models::Linear (and, with conv_dim, conv_block_dims or ranks from a
  // file, models::Conv2d) modules of `root` (found by walking named_modules()) that the family's
  // `rule` selects, at the rank sd-scripts gives each. `pathPrefix` is prepended to the module paths for naming
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
  // falling back to defaultLr; with per-block lr weights (SDXL) one UNet group per block
  // ("unet_block<i>") at that lr times the block's weight; LoRA+ splits lora_up into a "plus"
  // group at lr * ratio; groups whose lr is 0 are left out (their parameters are not trained).
  // FLUX's T5-XXL modules (lora_te3) form their own group, "textencoder 2", at `t5xxlLr` (falling
  // back to the text encoders' rate), as lora_flux's prepare_optimizer_params_with_multiple_te_lrs;
  // under networks.lora_sd3 CLIP-G's (lora_te2) are that group and T5-XXL's a fourth, "textencoder 3",
  // at `sd3T5xxlLr` (falling back to t5xxlLr), as lora_sd3 reads text_encoder_lr's three values.
  // Whether a module trains at text_encoder_lr's value at `place` (1: the second, t5xxlLr: FLUX's
  // T5-XXL, SD 3's CLIP-G and T5-XXL; 2: the third, sd3T5xxlLr: SD 3's T5-XXL).
  bool readsTextEncoderLrAt(size_t place) const;
  std::vector<LoraParamGroup> parameterGroups(std::optional<double> textEncoderLr, std::optional<double> unetLr,
                                              double defaultLr, std::optional<double> t5xxlLr = std::nullopt,
                                              std::optional<double> sd3T5xxlLr = std::nullopt) const;

  void setMultiplier(double multiplier);
  void setTraining(bool training);  // dropout on/off is the Linear's is_training(); kept for symmetry

  // The kohya state dict: <name>.lora_down.weight, <name>.lora_up.weight, <name>.alpha (0-dim),
  // converted to `dtype` (save_precision) on the CPU.
  std::vector<std::pair<std::string, torch::Tensor>> stateDict(torch::Dtype dtype) const;
  // Loads weights by kohya name (non-strict, as sd-scripts' load_weights): shapes must match.
  // `source` names the file in error messages.
  LoraLoadReport loadStateDict(const std::map<std::string, torch::Tensor>& tensors, const std::string& source);

  // A training state's tensors: the state dict, except that LyCORIS modules keep their tensors as
  // trained (scalar unfolded, full's weight rather than its difference), so a resume is exact.
  std::vector<std::pair<std::string, torch::Tensor>> resumeTensors() const;
  LoraLoadReport loadResumeTensors(const std::map<std::string, torch::Tensor>& tensors, const std::string& source);

 private:
  // Per-block ranks (get_block_dims_and_alphas, then remove_block_dims_and_alphas): 23 each.
  struct BlockRanks {
    std::vector<int64_t> dims;
    std::vector<double> alphas;
    std::optional<std::vector<int64_t>> convDims;
    std::vector<double> convAlphas;
  };
  // The rank (0: no adapter) and alpha sd-scripts' create_modules gives a module; `conv3x3` for
  // a Conv2d whose kernel is not 1x1.
  int64_t rankFor(const LoraTargetRule& rule, const std::string& name, bool conv3x3, double* alpha) const;
  // The place of the text_encoder_lr value a text encoder's module trains at: 0 the first, 1 the
  // second (FLUX's T5-XXL, SD 3's CLIP-G), 2 the third (SD 3's T5-XXL).
  size_t textEncoderLrPlace(const LoraModule& m) const;
  // lycoris.kohya's modules (network/lycoris_network.cpp).
  size_t attachLycoris(const LoraTargetRule& rule, torch::nn::Module& root, const std::string& pathPrefix);
  void appendLycorisState(const LoraModule& m, torch::Dtype dtype, std::vector<std::pair<std::string, torch::Tensor>>& out) const;
  bool loadLycorisModule(LoraModule& m, const std::map<std::string, torch::Tensor>& tensors, const std::string& source,
                         std::map<std::string, bool>& used, LoraLoadReport& report);
  LoraNetworkOptions options_;
  std::optional<BlockRanks> blocks_;
  std::vector<LoraModule> modules_;
  LoraNetworkModule networkModule_ = LoraNetworkModule::Lora;  // the rules' network module, as attached
};

// "[a, b, c]", as errors about a tensor's shape print it.
std::string shapeText(at::IntArrayRef shape);

}  // namespace sinter::network
