#pragma once
// SDXL's part of a run: the four models from one single-file checkpoint, caption encoding through
// CLIP-L and bigG (or their cached outputs), cached latents, the size/crop conditioning, and the
// DDPM noise-prediction objective of the UNet (objectives/unet_train_step.h).
#include <memory>
#include <optional>

#include "models/text_encoders/sdxl_text_encoding.h"
#include "text/clip_tokenizer.h"
#include "train/base/host_parking.h"
#include "train/parts/training_parts.h"
#include "train/sdxl/sdxl_model_set.h"
#include "train/objectives/unet_train_step.h"

namespace sinter::train {

// The config's SDXL options, typed.
struct SdxlFamilyOptions {
  std::string checkpoint;  // pretrained_model_name_or_path
  std::string vae;         // a separate VAE file, or empty
  std::string clipTokenizer;
  int maxTokenLength = 75;
  bool gradientCheckpointing = false;
  bool checkpointOffload = false;  // cpu_offload_checkpointing
  SdxlWeightPlacement placement;   // fp8_base, fp8_base_unet
  bool cacheLatents = false, cacheLatentsToDisk = false;
  bool cacheText = false, cacheTextToDisk = false;
  int vaeBatchSize = 1;
  std::string sampleSampler = "ddim";  // sample_sampler
  UnetStepOptions step;

  static SdxlFamilyOptions fromConfig(const Config& config, torch::Dtype computeDtype);
};

// Textual inversion's tokenizer and encoders (sdxl_train_textual_inversion.py's file keys: clip_l for
// CLIP-L's rows, clip_g for bigG's), of a run's models or --module_outputs'.
TextualInversionTargets sdxlEmbeddingTargets(text::ClipTokenizer& tokenizer, SdxlModelSet& models);

class SdxlFamily : public FamilyPart {
 public:
  explicit SdxlFamily(const RunContext& run);

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
  void captureRegions(GraphedRegions* regions) override;
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors() const override;
  at::Generator& generator() override { return step_->generator(); }
  TextualInversionTargets textualInversionTargets() override;
  sample::ResolvedSample sampleDefaults() const override;
  torch::Tensor renderSample(sample::ResolvedSample& s, const at::Generator& generator) override;

 private:
  // The step's inputs for a batch: latents (encoded here when not cached) and the conditioning
  // (with gradients only when the text encoders train).
  // Latents not cached are encoded with `latentGenerator`, or the step's generator when null.
  // Without cached text outputs the conditioning is staged as the encoders' inputs (the step
  // encodes them, with gradients when the text encoders train), or computed here without
  // gradients for the validation pass (`staged` false).
  UnetStepBatch stepInputs(const data::Batch& batch, bool staged, const at::Generator* latentGenerator = nullptr);
  // CLIP-L's and bigG's token chunks, "clip_l" and "big_g": [B, chunks, 77] int64 on the host.
  data::TokenIds tokenize(const std::vector<std::string>& captions) const;
  // The captions' conditioning (token ids as tokenize gives them, on any device).
  models::SdxlTextConditioning encode(const data::TokenIds& ids);
  models::SdxlTextConditioning encodeCaptions(const std::vector<std::string>& captions) { return encode(tokenize(captions)); }
  // The step's staged conditioning (no cached text outputs): token ids and the size/crop
  // conditioning staged, the text encoders and the adm vector inside the step.
  StagedConditioning stagedConditioning();
  void placeUnet();          // logged
  void placeTextEncoders();  // CLIP-L and bigG
  // The end of the staged start (buildCaches): the VAE and text encoders the step uses (their
  // outputs not cached), then the U-Net, each where the constructor left it in host memory.
  void placeForTraining();

  SdxlFamilyOptions options_;
  torch::Device device_;
  bool captureVae_ = false, captureTextEncoders_ = false;  // the compile plan's, for the caching passes
  int captureLimit_ = 8;
  std::uint64_t seed_;
  // The start in stages, as FLUX's (train/flux/flux_family.h) and sd-scripts': the models load and
  // take the run's precision in host memory; the VAE goes to the device while latents are cached,
  // then CLIP-L and bigG while their outputs are (each back in host memory after, and moved only
  // when something is encoded); then the models the step uses whose outputs are not cached, and
  // the U-Net last. A trained model (a full-weight run's U-Net, its text encoders under
  // train_text_encoder) is placed before the method attaches, so only the frozen ones wait.
  bool unetAfterCaches_ = false, encodersAfterCaches_ = false;
  SdxlModelSet models_;
  HostParking parking_;
  text::ClipTokenizer tokenizer_;
  std::optional<data::LatentCache> latentCache_;
  std::optional<data::TextCache> textCache_;
  std::unique_ptr<UnetTrainStep> step_;
  bool textEncodersTrain_ = false;  // setTraining's: the staged conditioning encodes with gradients
};

}  // namespace sinter::train
