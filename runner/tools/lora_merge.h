#pragma once
// merge_lora's two merges, as sd-scripts' merge_lora.py, sdxl_merge_lora.py and flux_merge_lora.py
// make them:
//  - into a checkpoint: each weight a LoRA module names becomes W + ratio · (its delta), in the
//    merge precision, every tensor of the file then written in the save precision, its keys and
//    layout kept (LyCORIS modules by LyCORIS's deltas);
//  - LoRAs into one LoRA (merge_lora_models): each module's lora_down and lora_up summed over the
//    files with √(alpha / first alpha) · ratio (lora_up with its magnitude), so the ranks must match,
//    or, with concat, stacked so the ranks add up; the first file's alpha kept.
#include <torch/torch.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/safetensors.h"
#include "network/checkpoint_lora_names.h"
#include "tools/bundled_embeddings.h"
#include "tools/layer_block_weights.h"
#include "tools/lora_file_modules.h"

namespace sinter::tools {

// A LoRA file to merge and its ratio (--models / --ratios).
struct LoraToMerge {
  std::string path;
  double ratio = 1.0;
  std::map<std::string, torch::Tensor> tensors;
  std::optional<LayerBlockWeights> lbw;  // --lbws: its blocks' weights
  std::map<std::string, std::string> metadata;  // the file's, read with its tensors
  std::vector<BundledEmbedding> embeddings;     // its bundle_emb tensors (pivotal tuning), kept out of `tensors`
};

struct MergedLora {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;  // in the merge dtype
  std::string dims, alphas;  // ss_network_dim / ss_network_alpha: the value, or "Dynamic" when modules differ
};

// merge_lora_models: std::invalid_argument naming the module when ranks differ without `concat`,
// or when a file holds tensors other than lora_down / lora_up / alpha (LyCORIS: use svd_merge_lora).
// `shuffle` permutes each module's rank directions (torch.randperm, as sd-scripts).
MergedLora mergeLoraFiles(const std::vector<LoraToMerge>& loras, torch::Dtype mergeDtype, bool concat, bool shuffle);

// One module's delta to add to a checkpoint tensor.
struct LoraAddition {
  const LoraFileModule* module = nullptr;
  double ratio = 1.0;
  network::LoraWeightSlot slot;
  bool bias = false;  // LyCORIS full's diff_b, added to the weight's bias
};

// A LoRA file's modules and its ratio.
struct LoraModulesToMerge {
  const std::map<std::string, LoraFileModule>* modules = nullptr;
  double ratio = 1.0;
  const LayerBlockWeights* lbw = nullptr;  // --lbws, read by SDXL's block names as sdxl_merge_lora.py reads them
};

// What merging the LoRAs into a file with `slots` adds to each of its tensors, by key, in the
// LoRAs' order, and which modules (LoRA index, name) found their weight there.
struct CheckpointMergePlan {
  std::map<std::string, std::vector<LoraAddition>> byKey;
  std::set<std::pair<size_t, std::string>> matched;
};
CheckpointMergePlan planCheckpointMerge(const std::map<std::string, network::LoraWeightSlot>& slots,
                                        const std::vector<LoraModulesToMerge>& loras);

// The tensor `key` of `file` with the plan's additions, in `mergeDtype` on `device` (its stored
// value in `mergeDtype` where nothing is added).
torch::Tensor mergedTensor(const io::SafetensorsFile& file, const std::string& key, const std::vector<LoraAddition>& additions,
                           torch::Dtype mergeDtype, const torch::Device& device);

// Writes every tensor of `file` to `out` (atomically, one tensor in memory at a time): floating
// ones in `saveDtype` after the plan's additions in `mergeDtype`, others as stored.
void writeMergedCheckpoint(const io::SafetensorsFile& file, const std::string& out, const CheckpointMergePlan& plan,
                           torch::Dtype mergeDtype, torch::Dtype saveDtype, const torch::Device& device,
                           const std::map<std::string, std::string>& metadata);

}  // namespace sinter::tools
