#pragma once
// The kohya LoRA name of every weight in a checkpoint file, for the tools that work on a checkpoint
// and a LoRA together (merge_lora, extract_lora_from_models). sd-scripts names a LoRA module after
// its path in the model it builds from the file (networks/lora.py, lora_flux.py); these tools need
// the other direction: for each weight of the file, the module name a LoRA would give it, and the
// rows of the tensor that module's product covers (OpenCLIP stores q, k and v in one in_proj_weight
// where sd-scripts' Hugging Face model has three Linears).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "network/lora_targets.h"

namespace sinter::network {

// How a part of the file lays out its model's weights, relative to the paths the rule names.
enum class CheckpointPartLayout {
  Model,            // the keys are the module paths (SDXL and SD U-Nets, FLUX, T5)
  HuggingFaceClip,  // CLIP in Hugging Face's layout; older files lack the "text_model." level
  OpenClip,         // OpenCLIP's resblocks, read as the Hugging Face CLIP model sd-scripts builds
};

// One model inside a checkpoint file: its keys start with `prefix`, and `rule` names its modules
// (the component's kohya prefix, and sd-scripts' own path where ours differs: SD's diffusers U-Net).
struct CheckpointLoraPart {
  std::string prefix;
  LoraTargetRule rule;
  CheckpointPartLayout layout = CheckpointPartLayout::Model;
};

// Where a LoRA module's product lands: the tensor's key and the rows it covers.
struct LoraWeightSlot {
  std::string key;
  int64_t rowOffset = 0;
  int64_t rows = -1;  // -1: the whole tensor
  std::vector<int64_t> shape;  // of the module's weight (rows taken out of the tensor's)
  std::string modulePath;      // in our model, as the part's rule takes it
  size_t part = 0;             // index into the parts
};

// Every 2-D or 4-D weight under the parts' prefixes by the kohya name of its module, from the
// file's keys and shapes. A name two weights would share keeps the first.
std::map<std::string, LoraWeightSlot> checkpointLoraSlots(const std::map<std::string, std::vector<int64_t>>& shapes,
                                                          const std::vector<CheckpointLoraPart>& parts);

// The slots sd-scripts' create_network gives a LoRA module (extract_lora_from_models): each part's
// rule's default targets among its Linear weights (and 1x1 convolutions where the rule takes them),
// with `convBlocks` (conv_dim) also every weight inside the U-Net's ResBlocks, Downsamples and
// Upsamples; never a module sd-scripts' model lacks. Names in the slots' order.
std::vector<std::string> sdScriptsLoraTargets(const std::map<std::string, LoraWeightSlot>& slots,
                                              const std::vector<CheckpointLoraPart>& parts, bool convBlocks);

}  // namespace sinter::network
