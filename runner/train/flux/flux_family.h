#pragma once
// FLUX.1's part of a run (flux_train_network's): the transformer, AE, CLIP-L and T5-XXL from their
// files, captions encoded into T5 hidden states and CLIP-L's pooled vector (or their cached
// outputs), cached latents, and the flow-matching objective of the transformer (flux_train_step.h).
#include <map>
#include <memory>
#include <optional>

#include "text/clip_tokenizer.h"
#include "text/t5_tokenizer.h"
#include "train/base/host_parking.h"
#include "train/flux/flux_model_set.h"
#include "train/flux/flux_train_step.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// FLUX's data-parallel gradients are all-reduced after backward, not during it: its step is
// compute-bound, and NCCL's kernels beside its GEMMs cost more than they hide (4 H100s, captured
// step: 3.87x overlapped, 3.93x after backward; tests/gpu/RESULTS.md).
constexpr bool kFluxOverlapsGradientReduction = false;

// The config's FLUX options, typed.
struct FluxFamilyOptions {
  FluxModelFiles files;
  // Chroma (fluxRunIsChroma): no CLIP-L, so no pooled vector (zeros stand in the step's buffer, as
  // sd-scripts' dummy CLIP-L does; the transformer reads none), and no CLIP-L LoRA.
  bool chroma = false;
  std::string clipTokenizer, t5Tokenizer;
  std::optional<int> t5MaxTokens;  // t5xxl_max_token_length; unset: 512 for dev, 256 for schnell
  std::string trainBlocks = "all";  // network_args train_blocks
  // network_args train_t5xxl=True in a LoRA run that trains text encoders: T5-XXL gets LoRA
  // modules (lora_te3) and encodes in each step with its autograd graph (never cached, as sd-scripts).
  bool trainT5xxl = false;
  bool gradientCheckpointing = false;
  bool checkpointOffload = false;  // cpu_offload_checkpointing
  FluxWeightPlacement placement;  // fp8_base, blocks_to_swap
  bool cacheLatents = false, cacheLatentsToDisk = false;
  bool cacheText = false, cacheTextToDisk = false;
  // sd-scripts' partial cache (flux_train_network.py): with cached text outputs and CLIP-L's LoRA
  // modules training, T5-XXL's outputs come from the cache and CLIP-L encodes in each step.
  bool clipLEncodesInStep = false;
  int vaeBatchSize = 1;
  // With cached text encoder outputs and samples asked for: the sample prompts' texts (prompts and
  // negative prompts), encoded at the start while the encoders are on the device for caching.
  std::vector<std::string> sampleTexts;
  FluxStepOptions step;
  // min_timestep/max_timestep: FLUX's training draws sigmas without them (as sd-scripts); only the
  // validation pass's fixed timesteps are read from them.
  std::optional<int64_t> minTimestep, maxTimestep;

  static FluxFamilyOptions fromConfig(const Config& config, torch::Dtype computeDtype);
  // Whether CLIP-L (and T5-XXL where its outputs are not cached) encode inside the step's loss.
  bool textInStep() const { return !cacheText || clipLEncodesInStep; }
};

// Whether a config's T5-XXL gets LoRA modules: networks.lora_flux's train_t5xxl=True in a LoRA run
// whose text encoders train.
bool fluxT5xxlTrains(const Config& config);

// Whether a FLUX-family run trains Chroma: model_type = "chroma", or a transformer file that is one
// (its distilled_guidance_layer; read from the header). sd-scripts needs model_type; Sinter reads the file too.
bool fluxRunIsChroma(const Config& config);

class FluxFamily : public FamilyPart {
 public:
  explicit FluxFamily(const RunContext& run);

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
  sample::ResolvedSample sampleDefaults() const override;
  torch::Tensor renderSample(sample::ResolvedSample& s, const at::Generator& generator) override;
  std::vector<std::shared_ptr<models::BlockSwap>> blockSwaps() const override;

  int t5MaxTokens() const { return t5MaxTokens_; }

 private:
  struct TokenIds {
    torch::Tensor clipL;           // [B, 77] on the device; undefined for Chroma
    torch::Tensor t5, t5Mask;      // [B, t5MaxTokens] on the device (the mask in float32)
  };
  struct TextConditioning {
    torch::Tensor t5, t5Mask, pooled;
  };
  // "clip_l" [B, 77], "t5" and "t5_mask" [B, t5MaxTokens] (int64), on the host.
  data::TokenIds hostTokenIds(const std::vector<std::string>& captions) const;
  // The same on the device, the mask in float32.
  TokenIds onDevice(const data::TokenIds& ids) const;
  TokenIds tokenize(const std::vector<std::string>& captions) const { return onDevice(hostTokenIds(captions)); }
  // CLIP-L's pooled vector and T5's hidden states; with `textEncodersTrain`, CLIP-L's with its
  // autograd graph and T5's too where its LoRA modules train (trainT5xxl).
  TextConditioning encode(const TokenIds& ids, bool textEncodersTrain);
  // CLIP-L's pooled output of token ids on the device, with or without its autograd graph.
  torch::Tensor clipLPooled(const torch::Tensor& clipIds, bool withGrad);
  // Chroma's stand-in for the pooled vector: zeros [batch, vec] on the device (the transformer reads none).
  torch::Tensor noPooled(int64_t batch) const;
  // T5-XXL's hidden states of token ids on the device (padding masked with apply_t5_attn_mask).
  torch::Tensor t5Hidden(const torch::Tensor& t5Ids, const torch::Tensor& t5Mask, bool withGrad);
  // Where the text outputs are not all cached: CLIP-L (and T5-XXL where its outputs are not cached)
  // encode inside the staged loss from staged token ids, so a captured step holds them.
  FluxStagedText stagedText();
  // The texts' conditioning on the device from the start's encodings; nullopt if one is missing.
  std::optional<TextConditioning> cachedSampleText(const std::vector<std::string>& texts) const;
  // Latents not cached are encoded with `latentGenerator`, or the step's generator when null.
  // `staged`: the text encoders' token ids for the staged loss where the step encodes them
  // (stagedText); otherwise the conditioning, encoded without gradients where it is not cached.
  FluxStepBatch stepInputs(const data::Batch& batch, bool staged, const at::Generator* latentGenerator = nullptr);
  // The transformer on the device with its placement (fp8_base, blocks_to_swap), logged.
  void placeTransformer();

  FluxFamilyOptions options_;
  torch::Device device_;
  bool captureVae_ = false, captureTextEncoders_ = false;
  int captureLimit_ = 8;
  std::uint64_t seed_;
  torch::Dtype weightDtype_, trainableDtype_;
  bool transformerAfterCaches_ = false;  // placed at the end of buildCaches (a LoRA run)
  bool textEncodersTrain_ = false;  // setTraining's: the staged loss encodes with gradients
  FluxModelSet models_;
  HostParking parking_;
  bool dev_ = true;  // guidance goes to the transformer (dev, Chroma)
  int t5MaxTokens_ = 512;
  text::ClipTokenizer clipTokenizer_;
  text::T5Tokenizer t5Tokenizer_;
  std::optional<data::LatentCache> latentCache_;
  std::optional<data::TextCache> textCache_;
  // sd-scripts' sample_prompts_te_outputs: the sample texts' encodings in host memory, so a sample
  // brings only the AE back to the device.
  std::map<std::string, TextConditioning> sampleText_;  // clipLEncodesInStep: T5-XXL's part alone is read
  bool toldCachedSampleText_ = false;
  std::unique_ptr<FluxTrainStep> step_;
};

}  // namespace sinter::train
