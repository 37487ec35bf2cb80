#pragma once
// Pivotal tuning (★ beyond sd-scripts; OneTrainer's "additional embeddings"): the embeddings a LoRA
// run trains beside its network, for new tokens (data/pivotal_embedding_specs.h's `embeddings`
// items). As textual inversion does (textual_inversion_method.h), each embedding's rows are added
// to the family's CLIP tokenizer and to each of its text encoders as their own parameters, so the
// token tables stay frozen and bit-equal; here each embedding is an optimizer group of its own, at
// its learning_rate (text_encoder_lr, else learning_rate, where unset). Saved inside the LoRA file
// in the layout A1111/Forge read there (bundle_emb.<token>.string_to_param.* for SD 1.x/2.x,
// bundle_emb.<token>.clip_l / .clip_g for SDXL: extensions-builtin/Lora/networks.py's
// load_network), and each apart as textual inversion writes it (embedding_file.h).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/pivotal_embedding_specs.h"
#include "network/lora_metadata.h"
#include "train/methods/embedding_file.h"
#include "train/methods/full_weights_method.h"  // Refusal
#include "train/parts/training_parts.h"

namespace sinter::train {

// Why the config's embeddings cannot be trained, or nullopt (none set, or all fine): a family
// without textual inversion (FLUX, SD 3.x), a malformed item, cached text encoder outputs, a token
// the CLIP tokenizer already has. `config`'s values have parsed.
std::optional<Refusal> pivotalEmbeddingsRefusal(const Config& config, bool familyTrainsEmbeddings);

// An embedding's key inside the LoRA file for the encoder whose embedding file key is `fileKey`:
// bundle_emb.<token>.string_to_param.* for emb_params (SD 1.x/2.x), bundle_emb.<token>.clip_l / .clip_g.
std::string bundledEmbeddingKey(const std::string& tokenString, const std::string& fileKey);

// Where an embedding is written apart, beside the LoRA file `loraPath`: "<stem>_<token>.safetensors".
std::string pivotalEmbeddingFilePath(const std::string& loraPath, const std::string& tokenString);

class PivotalEmbeddings {
 public:
  PivotalEmbeddings(const RunContext& run, std::vector<data::PivotalEmbeddingSpec> specs);

  // Adds every embedding's tokens to the family's tokenizer and its rows to each text encoder. Each
  // starts from its item's `weights` file where set, else from the rows `networkWeightsFile` (the
  // LoRA file network_weights continues from, where set) bundles for its token, else from init_word;
  // logged per embedding. Bundled rows of another shape, or a part missing, are an InputError naming
  // the file, the key and both shapes. Returns the file's bundle_emb keys of this run's tokens (used,
  // or passed over for `weights`): they are no keys of the network.
  std::vector<std::string> attach(FamilyPart& family, const std::string& networkWeightsFile = {});
  std::vector<OptimizerGroup> parameterGroups() const;
  // The bundle_emb tensors for the LoRA file, cast to `dtype` on the CPU.
  std::vector<std::pair<std::string, torch::Tensor>> bundleTensors(torch::Dtype dtype) const;
  // Each embedding apart (pivotalEmbeddingFilePath), with textual inversion's modelspec.* metadata.
  void saveApart(const std::string& loraPath, torch::Dtype dtype, const network::LoraRunFacts& facts) const;
  std::vector<std::string> filePathsApart(const std::string& loraPath) const;
  NamedTensors stateTensors() const;
  // After attach: what a LoRA file of this run bundles (each embedding's key per encoder,
  // bundledEmbeddingKey, with its rows' shape), and a file's rows (readEmbeddingFile's of that
  // layout, in its order) put in place of the trained ones, as the checkpoint grid renders each
  // saved LoRA file (loop/checkpoint_grid.h).
  std::vector<ExpectedEmbedding> bundleLayout() const;
  void putRows(const std::vector<torch::Tensor>& rows);
  // Copies this run's rows from `tensors` (those named "pivotal_embeddings/..."); throws InputError
  // naming a missing or differently shaped one.
  void loadStateTensors(const NamedTensors& tensors, const std::string& source);
  // Each token_string of several vectors becomes its tokens in sample prompts.
  std::vector<data::CaptionReplacement> promptReplacements() const { return data::pivotalCaptionReplacements(specs_); }

 private:
  struct Embedding {
    data::PivotalEmbeddingSpec spec;
    std::vector<std::string> keys;     // each encoder's file key: emb_params, or clip_l and clip_g
    std::vector<torch::Tensor> rows;   // [vectors, width] per encoder: what trains
  };
  const Config& config_;
  torch::Device device_;
  torch::Dtype dtype_;
  double defaultLr_;  // text_encoder_lr, else learning_rate
  std::vector<data::PivotalEmbeddingSpec> specs_;
  std::vector<Embedding> embeddings_;
};

}  // namespace sinter::train
