#pragma once
// A saved LoRA file put on a family's models as the run that saved it had its network on them, to
// render samples with it (the checkpoint grid, loop/checkpoint_grid.h), and taken off again when it
// goes: the models are the base model again.
#include <memory>
#include <string>
#include <vector>

#include "network/lora_network.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

class AppliedLora {
 public:
  // The network is the run's (network_module, network_args, network_train_unet_only /
  // network_train_text_encoder_only, as network_weights loads into it), except that each module's
  // rank and alpha come from the file where the network allows it (networks.lora*, as
  // dim_from_weights): a file resized after training loads too. InputError naming the file when it
  // fills no module of this network, or not all of them, or with tensors of other shapes (a LoRA of
  // another model family or base model: the message says what the file's metadata names).
  // `keysReadApart`: the file's keys another part reads (a pivotal run's bundled embeddings,
  // pivotal_embeddings.h), left out of the network's load and of its warnings.
  AppliedLora(const RunContext& run, FamilyPart& family, const std::string& path, const std::vector<std::string>& keysReadApart = {});
  ~AppliedLora();
  AppliedLora(const AppliedLora&) = delete;
  AppliedLora& operator=(const AppliedLora&) = delete;

  size_t moduleCount() const { return network_->modules().size(); }
  // The file's keys that name no module of the network (they change nothing), for the log.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::unique_ptr<network::LoraNetwork> network_;
  std::vector<std::string> warnings_;
};

// Whether the file holds LoRA modules in kohya's layout (lora_unet_*, lora_te*_*: networks.lora's and
// LyCORIS's saved files), rather than a model.
bool isKohyaLoraFile(const std::string& path);

}  // namespace sinter::train
