#pragma once
// LoRA files in the kohya layout, read and written through io/safetensors.h (atomic writes;
// "_orig_mod." stripped on read, never written).
#include <torch/torch.h>

#include <map>
#include <string>

#include "network/lora_metadata.h"
#include "network/lora_network.h"

namespace sinter::network {

// save_precision: "float" / "fp32" / "" (keep fp32), "fp16", "bf16"; anything else is a LoraError.
torch::Dtype savePrecisionDtype(const std::string& savePrecision);

// Writes the network's weights in `dtype` with `metadata` (atomically).
void saveLoraFile(const LoraNetwork& network, const std::string& path, torch::Dtype dtype, const Metadata& metadata);

// Every tensor of a LoRA file by key (CPU). A missing or malformed file is a LoraError naming it.
std::map<std::string, torch::Tensor> readLoraTensors(const std::string& path);
Metadata readLoraMetadata(const std::string& path);

// dim_from_weights: rank (lora_down rows) and alpha per module; files without alpha use alpha = rank.
std::map<std::string, LoraRankAlpha> readLoraModuleRanks(const std::map<std::string, torch::Tensor>& tensors);

// network_weights: loads `path` into the network; the report lists what did not match.
LoraLoadReport loadLoraFile(LoraNetwork& network, const std::string& path);

// network_weights must fill every module of the network (a base checkpoint or another model's LoRA
// fills none, and the run would train from scratch): else a LoraError saying how many of
// `networkModules` matched and naming the first few that did not, and a few of the file's keys
// that name no module. With `partialAllowed` (network_weights_partial, as sd-scripts' load_weights
// with strict=False) a file that fills some is loaded, and the returned warnings say what starts
// fresh; one that fills none is refused all the same. The file's keys that name no module of the
// network (a text encoder's, in a run training the U-Net alone) are a warning.
std::vector<std::string> checkWeightsMatch(const LoraLoadReport& report, size_t networkModules, const std::string& path,
                                           bool partialAllowed);

}  // namespace sinter::network
