#pragma once
// What merge_lora (into one LoRA) and svd_merge_lora share: the LoRA files of --models with the
// --ratios, and the metadata of the LoRA they write.
#include <string>
#include <vector>

#include "network/lora_metadata.h"
#include "tools/lora_merge.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

// --models and --ratios, one ratio per file, each a .safetensors LoRA, read (its bundled embeddings
// apart from its modules); std::invalid_argument (or network::LoraError for an unreadable file) otherwise.
std::vector<LoraToMerge> lorasToMerge(const ToolFlags& flags);

// Every file's bundled embeddings, each token once (combineBundledEmbeddings: the same token with
// other rows is a std::invalid_argument naming both files), each logged. A merge into one LoRA
// carries them unchanged beside the merged modules (no ratio applies to an embedding); a merge into
// a checkpoint writes each apart.
std::vector<BundledEmbedding> carriedEmbeddings(const std::vector<LoraToMerge>& loras);

// build_minimum_network_metadata of a merged LoRA: ss_network_dim / ss_network_alpha as given, ss_v2,
// ss_base_model_version and ss_network_module from the first file that has them ("networks.lora"
// where none has); unless `noMetadata`, modelspec.* with the first file's model facts (architecture,
// implementation, resolution, prediction type), the output's title and the inputs' as merged_from.
network::Metadata mergedLoraMetadata(const std::vector<LoraToMerge>& loras, const std::string& dims, const std::string& alphas,
                                     bool noMetadata, const std::string& saveTo);

}  // namespace sinter::tools
