#pragma once
// What every LoRA tool checks of its files and devices the same way.
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tools/tool_flags.h"

namespace sinter::tools {

// A .safetensors path for `flag` ("--save_to"), or std::invalid_argument: the tools read and write
// safetensors only (sd-scripts' .ckpt / .pt are pickles). `writing` words the message.
void requireSafetensorsPath(const std::string& flag, const std::string& path, bool writing);

// `name` ("cpu", "cuda", "cuda:1") as a device this machine has, or std::invalid_argument naming `flag`.
torch::Device toolDevice(const std::string& flag, const std::string& name);

// A LoRA file's tensors as the tools read them: another trainer's FLUX layout (ai-toolkit,
// diffusers, OneTrainer; flux_lora_layouts.h) or OneTrainer's diffusers-named SDXL U-Net
// (sdxl_lora_layouts.h) converted to kohya's on read, which the log says. Bundled embeddings
// (bundle_emb.*, bundled_embeddings.h) are kept as they are.
std::map<std::string, torch::Tensor> readToolLora(const std::string& path);

// --new_rank (default 4) and --new_conv_rank (default: --new_rank), each at least 1, as resize_lora.py
// and svd_merge_lora.py take them.
std::pair<int64_t, int64_t> newRankFlags(const ToolFlags& flags);

// sai_model_spec.build_merged_from: each file's modelspec.title, or its name without extension,
// joined with ", ".
std::string mergedFromTitles(const std::vector<std::string>& paths);

// The name of `path` without folder and extension (a written file's modelspec.title).
std::string fileStem(const std::string& path);

}  // namespace sinter::tools
