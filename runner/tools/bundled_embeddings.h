#pragma once
// The textual inversion embeddings a LoRA file bundles (pivotal tuning, train/methods/pivotal_embeddings.h;
// OneTrainer's additional embeddings): `bundle_emb.<token>.<part>` tensors, the layout A1111/Forge read
// inside a LoRA (string_to_param.* for SD 1.x/2.x, clip_l and clip_g for SDXL). The LoRA tools take
// them apart from the modules: resize_lora and svd_merge_lora / merge_lora into one LoRA carry them
// unchanged (each token once), merge_lora into a checkpoint writes each apart as an embedding file,
// and check_lora_weights lists them.
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sinter::tools {

// Whether `key` is a bundled embedding's tensor ("bundle_emb.<token>.<part>").
bool isBundledEmbeddingKey(const std::string& key);

struct BundledEmbedding {
  std::string token;  // "sks"
  std::string path;   // the LoRA file it is bundled in
  // Its tensors by the key after the token ("string_to_param.*", "clip_l", "clip_g"), as stored, in key order.
  std::vector<std::pair<std::string, torch::Tensor>> parts;

  int64_t vectors() const;  // the rows of its first part
  // The tensors of the embedding file it is apart (train/methods/embedding_file.h's keys:
  // string_to_param.* is emb_params, SDXL's clip_l and clip_g keep their names), as stored.
  std::vector<std::pair<std::string, torch::Tensor>> embeddingFileTensors() const;
  // "sks (2 vectors: clip_g 1280 wide, clip_l 768 wide)".
  std::string describe() const;
};

struct LoraWithEmbeddings {
  std::map<std::string, torch::Tensor> modules;  // every tensor that is not a bundled embedding's
  std::vector<BundledEmbedding> embeddings;      // by token
};

// A LoRA file's tensors split into its modules and its bundled embeddings. A bundle_emb key without
// a token and a part ("bundle_emb.sks"), or a part that is no [vectors, width] or [width] tensor of
// floating point, is a std::invalid_argument naming `path` and the key.
LoraWithEmbeddings splitBundledEmbeddings(const std::map<std::string, torch::Tensor>& tensors, const std::string& path);

// Several files' embeddings, each token once, in the order first seen: a token two files bundle
// with the same parts, shapes and values is kept once (the first file's); with other rows it is a
// std::invalid_argument naming both files and the token (an embedding cannot be merged as modules
// are: which rows would the token mean?).
std::vector<BundledEmbedding> combineBundledEmbeddings(const std::vector<std::vector<BundledEmbedding>>& perFile);

// The bundle_emb tensors to write back into a LoRA file, as stored.
std::vector<std::pair<std::string, torch::Tensor>> bundledEmbeddingTensors(const std::vector<BundledEmbedding>& embeddings);

}  // namespace sinter::tools
