#pragma once
// SD 1.x/2.x's part of a run (sd-scripts' train_network.py, train_db.py, fine_tune.py): the three
// models from one single-file checkpoint, caption encoding through the one text encoder with
// clip_skip (or its cached output), cached latents, and the UNet's DDPM objective
// (objectives/unet_train_step.h) without size conditioning. No compile panel: the eager path.
#include <memory>
#include <optional>

#include "models/checkpoints/sd_checkpoint.h"
#include "text/clip_token_chunks.h"
#include "text/clip_tokenizer.h"
#include "train/base/host_parking.h"
#include "train/objectives/unet_train_step.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// The config's SD options, typed.
struct SdFamilyOptions {
  models::SdVersion version = models::SdVersion::V1;
  std::string checkpoint;  // pretrained_model_name_or_path
  std::string vae;         // a separate VAE file, or empty
  std::string clipTokenizer;
  int maxTokenLength = 75;
  int clipSkip = 1;  // unset: 1, the encoder's output as sd-scripts' model gives it
  bool gradientCheckpointing = false;
  bool checkpointOffload = false;  // cpu_offload_checkpointing
  bool cacheLatents = false, cacheLatentsToDisk = false;
  bool cacheText = false, cacheTextToDisk = false;
  int vaeBatchSize = 1;
  std::string sampleSampler = "ddim";
  UnetStepOptions step;

  static SdFamilyOptions fromConfig(const Config& config, models::SdVersion version, torch::Dtype computeDtype);
};

// SD 1.x's tokenizer pads with <|endoftext|>; SD 2.x's (stabilityai/stable-diffusion-2) with "!" (0).
text::ClipPadding sdTextPadding(models::SdVersion version);

// Textual inversion's tokenizer and encoder (train_textual_inversion.py's file key emb_params, 768
// wide for SD 1.x, 1024 for SD 2.x), of a run's models or --module_outputs'.
TextualInversionTargets sdEmbeddingTargets(text::ClipTokenizer& tokenizer, models::SdCheckpoint& models);

class SdFamily : public FamilyPart {
 public:
  SdFamily(const RunContext& run, models::SdVersion version);

  FamilyFacts facts() const override;
  std::vector<TrainableModel> trainableModels() override;
  void buildCaches(const data::Dataset& dataset, int workers) override;
  const data::LatentCache* latentCache() const override { return latentCache_ ? &*latentCache_ : nullptr; }
  const data::TextCache* textCache() const override { return textCache_ ? &*textCache_ : nullptr; }
  void setTraining(bool textEncoders) override;
  torch::Tensor loss(const data::Batch& batch, bool textEncodersTrain) override;
  data::CaptionTokenizer captionTokenizer() const override;
  StepShape stage(const data::Batch& batch) override;
  torch::Tensor stagedLoss(const StepShape& shape) override { return step_->stagedLoss(shape); }
  StepShape stageWarmup(const data::ShapeSignature& signature) override;
  std::string microBatchJoinRefusal() const override { return options_.cacheLatents ? "" : kLatentsEncodedInStep; }
  std::vector<int64_t> validationTimesteps() const override;
  torch::Tensor validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) override;
  // No per-block regions: SD 1.x/2.x run eagerly (the compile panel is SDXL's and FLUX's).
  void captureRegions(GraphedRegions*) override {}
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors() const override { return models_.checkpointTensors(); }
  at::Generator& generator() override { return step_->generator(); }
  TextualInversionTargets textualInversionTargets() override;
  sample::ResolvedSample sampleDefaults() const override;
  torch::Tensor renderSample(sample::ResolvedSample& s, const at::Generator& generator) override;

 private:
  // staged: the text encoder's token ids, which the step's staged conditioning encodes (else the
  // context, encoded here without gradients), where its outputs are not cached.
  UnetStepBatch stepInputs(const data::Batch& batch, bool staged, const at::Generator* latentGenerator = nullptr);
  StagedConditioning stagedConditioning();
  data::TokenIds tokenize(const std::vector<std::string>& captions) const;  // "clip": [B, chunks, 77] on the host
  torch::Tensor encode(const data::TokenIds& ids);
  torch::Tensor encodeCaptions(const std::vector<std::string>& captions) { return encode(tokenize(captions)); }
  torch::Tensor encodeLatents(const torch::Tensor& images, const at::Generator& generator);

  SdFamilyOptions options_;
  torch::Device device_;
  std::uint64_t seed_;
  models::SdCheckpoint models_;
  int64_t textLayersToRun_ = 0;
  HostParking parking_;
  text::ClipTokenizer tokenizer_;
  std::optional<data::LatentCache> latentCache_;
  std::optional<data::TextCache> textCache_;
  std::unique_ptr<UnetTrainStep> step_;
  bool textEncodersTrain_ = false;  // setTraining's: the staged conditioning encodes with gradients
};

}  // namespace sinter::train
