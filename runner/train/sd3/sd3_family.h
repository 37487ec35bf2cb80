#pragma once
// SD 3.x's part of a run (sd3_train_network.py, sd3_train.py): the MMDiT, its VAE, CLIP-L, CLIP-G and
// T5-XXL from their files, captions encoded as sd-scripts' Sd3TextEncodingStrategy does (CLIP-L's and
// CLIP-G's penultimate states side by side, zero-padded to T5-XXL's width, then T5-XXL's states; the
// two projected pooled outputs), the per-encoder caption dropout, cached latents and text outputs
// (T5-XXL's alone while the CLIPs' LoRA trains: sd-scripts' partial cache), and the flow-matching
// objective (sd3_train_step.h); a staged start (each model on the device when it is needed). Eager:
// no compile panel, as SD 1.x/2.x.
#include <memory>
#include <optional>

#include "text/clip_tokenizer.h"
#include "text/t5_tokenizer.h"
#include "train/base/host_parking.h"
#include "train/parts/training_parts.h"
#include "train/sd3/sd3_model_set.h"
#include "train/sd3/sd3_train_step.h"

namespace sinter::train {

// The config's SD 3 options, typed.
struct Sd3FamilyOptions {
  Sd3ModelFiles files;
  std::string clipTokenizer, t5Tokenizer;
  int t5MaxTokens = 256;  // t5xxl_max_token_length; sd-scripts' SD 3 default
  bool applyT5AttnMask = false;
  bool applyLgAttnMask = false;  // apply_lg_attn_mask: CLIP-L and CLIP-G attend past no padding token
  std::vector<int64_t> embDims;  // network_args emb_dims: LoRA on the embedders and final layer too
  double clipLDropout = 0.0, clipGDropout = 0.0, t5Dropout = 0.0;  // clip_l/clip_g/t5_dropout_rate
  // A LoRA run that trains the text encoders (not network_train_unet_only): CLIP-L's and CLIP-G's
  // LoRA modules; T5-XXL's too with network_args train_t5xxl=True.
  bool trainClip = false, trainT5xxl = false;
  bool gradientCheckpointing = false, checkpointOffload = false;
  bool cacheLatents = false, cacheLatentsToDisk = false;
  bool cacheText = false, cacheTextToDisk = false;
  int vaeBatchSize = 1;
  Sd3StepOptions step;

  static Sd3FamilyOptions fromConfig(const Config& config, torch::Dtype computeDtype);
  // Whether the CLIPs encode in each step: nothing cached, or sd-scripts' partial cache (T5-XXL's
  // outputs cached while the CLIPs' LoRA trains).
  bool clipsEncodeInStep() const { return !cacheText || trainClip; }
};

class Sd3Family : public FamilyPart {
 public:
  explicit Sd3Family(const RunContext& run);

  FamilyFacts facts() const override;
  std::vector<TrainableModel> trainableModels() override;
  void buildCaches(const data::Dataset& dataset, int workers) override;
  const data::LatentCache* latentCache() const override { return latentCache_ ? &*latentCache_ : nullptr; }
  const data::TextCache* textCache() const override { return textCache_ ? &*textCache_ : nullptr; }
  void setTraining(bool textEncoders) override;
  torch::Tensor loss(const data::Batch& batch, bool textEncodersTrain) override;
  data::CaptionTokenizer captionTokenizer() const override;
  // SD 3.x runs eagerly (no compile panel): the loop never stages its batches.
  StepShape stage(const data::Batch& batch) override;
  torch::Tensor stagedLoss(const StepShape& shape) override;
  StepShape stageWarmup(const data::ShapeSignature& signature) override;
  std::string microBatchJoinRefusal() const override;
  void captureRegions(GraphedRegions*) override {}
  std::vector<int64_t> validationTimesteps() const override;
  torch::Tensor validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) override;
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors() const override;
  std::vector<std::shared_ptr<models::BlockSwap>> blockSwaps() const override;
  at::Generator& generator() override { return step_->generator(); }
  sample::ResolvedSample sampleDefaults() const override;
  torch::Tensor renderSample(sample::ResolvedSample& s, const at::Generator& generator) override;

 private:
  struct ClipOutputs {
    torch::Tensor lgOut, lgPooled;  // [B, 77, wL + wG], [B, pL + pG]
  };
  // "clip_l", "clip_g" [B, 77]; "t5", "t5_mask" [B, t5MaxTokens] (int64), on the host.
  data::TokenIds tokenize(const std::vector<std::string>& captions) const;
  ClipOutputs encodeClips(const data::TokenIds& ids, bool withGrad);
  torch::Tensor encodeT5(const data::TokenIds& ids, bool withGrad);
  // Sd3TextEncodingStrategy.concat_encodings: [lg_out padded to T5's width, t5_out] along the tokens.
  torch::Tensor context(const torch::Tensor& lgOut, const torch::Tensor& t5Out) const;
  // The caption dropout of each encoder, per sample (zeros in its part of lg_out and lg_pooled, or all of t5_out).
  void dropCaptions(ClipOutputs& clips, torch::Tensor& t5Out, const at::Generator& generator) const;
  Sd3StepBatch stepInputs(const data::Batch& batch, bool textEncodersTrain, const at::Generator* generator = nullptr,
                          bool dropout = true);

  Sd3FamilyOptions options_;
  torch::Device device_;
  bool mmditAfterCaches_ = false;  // a LoRA run's frozen MMDiT comes to the device after the caches
  std::uint64_t seed_;
  Sd3ModelSet models_;
  HostParking parking_;
  text::ClipTokenizer clipTokenizer_;
  text::T5Tokenizer t5Tokenizer_;
  std::optional<data::LatentCache> latentCache_;
  std::optional<data::TextCache> textCache_;
  std::unique_ptr<Sd3TrainStep> step_;
};

}  // namespace sinter::train
