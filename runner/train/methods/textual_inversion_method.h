#pragma once
// Textual inversion's part of a run (sd-scripts' train_textual_inversion.py and
// sdxl_train_textual_inversion.py): num_vectors_per_token new tokens (token_string, token_string1,
// ...) added to the family's CLIP tokenizer, and for each of its text encoders (SDXL: CLIP-L and
// bigG) as many new embedding rows, which are all that trains: the token table itself, the text
// encoders, the U-Net and the VAE stay frozen. Decided: the new rows are the trained parameter
// itself (ClipTextTransformer's added token embeddings), not a grown table whose other rows are
// restored after each step as sd-scripts does; every other row is then untouched by construction,
// and the optimizer's state and gradient are the new rows' alone. The rows start from init_word's
// token embeddings (repeated or cut to the vector count, sd-scripts' rule), or from `weights`;
// saved as an embedding file (embedding_file.h) with sd-scripts' modelspec.* metadata.
#include <optional>
#include <string>
#include <vector>

#include "network/lora_metadata.h"
#include "train/methods/embedding_file.h"
#include "train/methods/textual_inversion_options.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

class TextualInversionMethod : public MethodPart {
 public:
  explicit TextualInversionMethod(const RunContext& run);

  void attach(FamilyPart& family) override;
  // The text encoders run with gradients (to the new rows); their own weights are frozen.
  bool trainsTextEncoders() const override { return true; }
  std::vector<OptimizerGroup> parameterGroups() const override;
  void describeRun(const data::Dataset& dataset, long long batchesPerEpoch, long long numEpochs, long long maxTrainSteps,
                   int gradientAccumulationSteps) override;
  void saveModel(const std::string& path, const SaveStamp& stamp) override;
  NamedTensors stateTensors() const override;
  void loadStateTensors(const NamedTensors& tensors, const std::string& source) override;
  std::vector<data::CaptionReplacement> samplePromptReplacements() const override {
    const std::optional<data::CaptionReplacement> r = options_.captions.promptReplacement();
    return r ? std::vector<data::CaptionReplacement>{*r} : std::vector<data::CaptionReplacement>{};
  }

  // After attach: what an embedding file of this run holds (each encoder's key and its rows'
  // shape), and a file's rows (readEmbeddingFile's, in that order) put in place of the trained ones,
  // as the checkpoint grid renders each saved file (loop/checkpoint_grid.h).
  const std::vector<ExpectedEmbedding>& fileLayout() const { return fileLayout_; }
  void putRows(const std::vector<torch::Tensor>& rows);

 private:
  const Config& config_;
  TextualInversionOptions options_;
  torch::Device device_;
  torch::Dtype dtype_;  // the trained rows': float32, or the weight dtype with full_fp16 / full_bf16
  std::vector<std::string> keys_;     // the file's key of each encoder's rows
  std::vector<torch::Tensor> rows_;   // [vectors, width] each: what trains
  std::vector<ExpectedEmbedding> fileLayout_;  // keys_ with the rows' shapes
  network::LoraRunFacts facts_;       // the modelspec's facts
  std::optional<torch::Dtype> saveDtype_;  // save_precision; unset: as trained
};

}  // namespace sinter::train
