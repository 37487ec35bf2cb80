#pragma once
// A run is three parts (DESIGN.md §5, one training loop for every family and method):
//   a family part: the models, the conditioning, the caches and the objective (a folder each: sdxl/, flux/);
//   a method part: what is trained, saved and resumed (methods/: LoRA, full weights);
//   the training loop (loop/training_loop.h), which knows neither.
// loop/training_table.h chooses the parts for a (family, method) pair, among the families that
// family_registration.h lists.
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compile/compile_plan.h"
#include "models/layers/block_swap.h"
#include "models/text_encoders/clip_text_model.h"
#include "core/config.h"
#include "data/batch_loader.h"
#include "data/caption.h"
#include "data/dataset.h"
#include "distributed/process_group.h"
#include "network/lora_targets.h"
#include "sample/sample_naming.h"
#include "text/clip_tokenizer.h"
#include "train/base/compute_copies.h"
#include "train/base/event_sink.h"
#include "train/base/mixed_precision.h"
#include "train/base/shape_plan.h"
#include "train/base/step_derived_weights.h"
#include "train/base/train_state.h"
#include "train/capture/graphed_regions.h"
#include "train/optim/optimizer.h"

namespace sinter::train {

// What every part of a run is given.
struct RunContext {
  const Config& config;
  torch::Device device;
  PrecisionPlan precision;
  std::uint64_t seed = 0;
  EventSink& events;
  std::chrono::steady_clock::time_point setupStart;
  compile::CompilePlan compile;  // what the compile settings turn on for this run
  distributed::ProcessGroup* group = nullptr;  // one of several ranks (data parallel), or null

  int rank() const { return group ? group->rank() : 0; }
  int worldSize() const { return group ? group->size() : 1; }
  // The training step's noise and timesteps: each rank draws its own (seed + rank, as accelerate's
  // device-specific seeding), so the ranks' samples are noised as one process's batch would be.
  std::uint64_t noiseSeed() const { return seed + static_cast<std::uint64_t>(rank()); }
};

// One of a family's models that a method can train, with the family's LoRA rule for it.
struct TrainableModel {
  std::string label;  // "U-Net", "Text Encoder 1", ...
  bool textEncoder = false;
  torch::nn::Module* module = nullptr;
  network::LoraTargetRule loraRule;
};

// Textual inversion (methods/textual_inversion_method.h): the family's CLIP tokenizer, to which the
// new tokens are added (captions and sample prompts are tokenized with it), and each text encoder
// that gets rows for them, under the key embedding files give its rows.
struct TokenEmbeddingTarget {
  std::string fileKey;                          // "emb_params" (SD 1.x/2.x), "clip_l", "clip_g" (SDXL)
  models::ClipTextTransformerImpl* encoder = nullptr;  // its token table and added rows
};
struct TextualInversionTargets {
  text::ClipTokenizer* tokenizer = nullptr;
  std::vector<TokenEmbeddingTarget> encoders;  // in sd-scripts' order; empty: the family trains no embeddings
};

// Facts a method writes into its files' metadata, from the family's side.
struct FamilyFacts {
  std::string familyName;        // "sdxl"
  std::string baseModelVersion;  // ss_base_model_version
  std::string checkpointFile;    // base name of pretrained_model_name_or_path
  std::string vaeFile;           // base name of vae, empty for the checkpoint's own
  // modelspec.architecture before "/lora", and modelspec.implementation (each family sets its own).
  std::string modelSpecArchitecture;
  std::string modelSpecImplementation;
  bool modelSpecPredictionType = true;  // FLUX files carry no modelspec.prediction_type
  // What the family's trainer adds to the ss_* metadata: ss_<key> = str(option) for each key, and
  // fixed values (flux_train_network's update_metadata).
  std::vector<std::string> metadataOptionKeys;
  std::map<std::string, std::string> metadataValues;
  // Data parallel: whether gradient buckets are all-reduced during backward or after it
  // (distributed::GradientReducer::setOverlapWithBackward says when each pays).
  bool overlapGradientReduction = true;
};

class FamilyPart {
 public:
  virtual ~FamilyPart() = default;
  virtual FamilyFacts facts() const = 0;
  // The models a method may train, in the order sd-scripts creates their modules.
  virtual std::vector<TrainableModel> trainableModels() = 0;
  // Caches latents and text-encoder outputs where the config asks (the encoders are frozen), and
  // tells the step whether the dataset's batches carry loss masks (before any shape is staged).
  virtual void buildCaches(const data::Dataset& dataset, int workers) = 0;
  virtual const data::LatentCache* latentCache() const = 0;
  virtual const data::TextCache* textCache() const = 0;
  // Train/eval state of the models for training (text encoders train only with their adapters).
  virtual void setTraining(bool textEncoders) = 0;
  // The captions' token ids as this family's text encoders take them: the loader runs this in its
  // workers (LoaderOptions::tokenize), so a step's inputs are tensors. Thread-safe.
  virtual data::CaptionTokenizer captionTokenizer() const = 0;
  // A batch's token ids: the loader's, or tokenized now for a batch made without a tokenizer.
  data::TokenIds tokenIdsOf(const data::Batch& batch) const {
    return batch.tokenIds.empty() ? captionTokenizer()(batch.captions) : batch.tokenIds;
  }
  // The loss of one micro-batch (0-dim, float32, on the device, with its autograd graph):
  // conditioning, noise, prediction and the objective. Nothing here reads a host value.
  virtual torch::Tensor loss(const data::Batch& batch, bool textEncodersTrain) = 0;
  // The same split for capture: staging copies what a batch needs into the static buffers of its
  // shape (token ids, or encodings made here without gradients); the staged loss is device work
  // only, on whatever those buffers hold.
  virtual StepShape stage(const data::Batch& batch) = 0;
  virtual torch::Tensor stagedLoss(const StepShape& shape) = 0;
  // The validation pass (validation_split): the timesteps every held-out batch is evaluated at
  // (validation_timesteps.h, from the run's min/max_timestep), and the loss of one batch at one of
  // them (0-dim, float32, on the device) with its noise, and its latents when not cached, drawn from
  // `generator`, never the training generator. Without gradients and always eager (never a captured
  // step); it leaves the models in eval mode (setTraining restores them).
  virtual std::vector<int64_t> validationTimesteps() const = 0;
  virtual torch::Tensor validationLoss(const data::Batch& batch, int64_t timestep, const at::Generator& generator) = 0;
  // Neutral inputs for a planned signature, to warm up and capture it before step 1.
  virtual StepShape stageWarmup(const data::ShapeSignature& signature) = 0;
  // Batched gradient accumulation (docs/DESIGN.md §6): "" where loss() and stage() take a batch
  // joining several micro-batches (data::Batch::microBatches) and train it as those micro-batches
  // one after another, each drawing its random values from the same generator calls in the same
  // order as its own pass; else why not, for the run's log.
  virtual std::string microBatchJoinRefusal() const { return "its step has no joined pass"; }
  // The refusal of a family whose step encodes the latents (their distribution sampled from the
  // noise's generator, before the noise: a joined pass would draw all of them first).
  static constexpr const char* kLatentsEncodedInStep =
      "the latents are encoded in each step (cache_latents is off), their sampling drawn before the noise";
  // Per-block CUDA graphs (compile_fullgraph=false): the model's blocks run through `regions` from
  // now on, or as by default again (nullptr).
  virtual void captureRegions(GraphedRegions* regions) = 0;
  // The noise generator, saved with the training state so a resumed run draws the same noise.
  virtual at::Generator& generator() = 0;
  // Every model of the family's checkpoint under its key in the file users load (SDXL: the four
  // models of the single-file checkpoint; FLUX: the transformer in BFL's layout), as they are now.
  virtual std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors() const = 0;
  // Sample images: the family's defaults for what a prompt leaves unset (size, steps, scales, sampler).
  virtual sample::ResolvedSample sampleDefaults() const = 0;
  // One image of `s` from the models as they are now, [1, 3, H, W] about [-1, 1], its noise drawn
  // from `generator`; `s` gets the size and sampler actually used. Without gradients; it leaves the
  // models in eval mode (setTraining restores them).
  virtual torch::Tensor renderSample(sample::ResolvedSample& s, const at::Generator& generator) = 0;
  // blocks_to_swap: the swaps whose streamed weights are trainable models' (FLUX's transformer).
  virtual std::vector<std::shared_ptr<models::BlockSwap>> blockSwaps() const { return {}; }
  // Textual inversion's tokenizer and text encoders (FamilyRegistration::textualInversion says
  // which families have them); empty by default.
  virtual TextualInversionTargets textualInversionTargets() { return {}; }
};

// When a save is made, for the file's metadata.
struct SaveStamp {
  long long step = 0;
  long long epoch = 0;
  // A save_best_k file's validation loss: written as ss_validation_loss (Sinter's own key).
  std::optional<double> validationLoss;
  // The metadata entries the stamp adds beyond sd-scripts' (none without a validation loss).
  std::map<std::string, std::string> sinterMetadata() const {
    std::map<std::string, std::string> m;
    if (validationLoss) {
      char text[32];
      std::snprintf(text, sizeof text, "%.9g", *validationLoss);
      m["ss_validation_loss"] = text;
    }
    return m;
  }
};

class MethodPart {
 public:
  virtual ~MethodPart() = default;
  // Attaches what trains to the family's models (LoRA: adapters by the family's rules).
  virtual void attach(FamilyPart& family) = 0;
  virtual bool trainsTextEncoders() const = 0;
  virtual std::vector<OptimizerGroup> parameterGroups() const = 0;
  // Compute-dtype copies of the trained weights that the forward pass uses, or null (the weights
  // are cast where they are used, or need no cast).
  virtual ComputeCopies* computeCopies() { return nullptr; }
  // Run right after each optimizer step (eagerly or inside the captured step: device work only),
  // e.g. scale_weight_norms' max-norm; empty: nothing.
  virtual std::function<void()> afterOptimizerStep() { return {}; }
  // Weights the forward passes take from a derivation made once per step instead of in each pass
  // (the loop asks only where a step accumulates micro-batches); the method switches to them and
  // returns how the update keeps them, or nullopt when it has none.
  virtual std::optional<StepDerivedWeights> derivePerStep() { return std::nullopt; }
  // Figures of the step just taken, as a 1-dim device tensor that the loop reads back with the
  // loss (stepFigureNames() names them, in the order of sd-scripts' logs); undefined: none.
  virtual torch::Tensor stepFigures() const { return {}; }
  virtual std::vector<std::string> stepFigureNames() const { return {}; }
  // Dataset facts for the metadata, once the loop knows them.
  virtual void describeRun(const data::Dataset& dataset, long long batchesPerEpoch, long long numEpochs, long long maxTrainSteps,
                           int gradientAccumulationSteps) = 0;
  // The trained weights as the ecosystem loads them (LoRA: a kohya file with ss_* metadata).
  virtual void saveModel(const std::string& path, const SaveStamp& stamp) = 0;
  // The files saveModel(modelPath) writes beside that file (pivotal tuning's embeddings apart),
  // removed with it (save_last_n_*, save_best_k); none by default.
  virtual std::vector<std::string> filesBeside(const std::string& modelPath) const { return {}; }
  // What a training state holds of the method, and loading it back (resume).
  virtual NamedTensors stateTensors() const = 0;
  virtual void loadStateTensors(const NamedTensors& tensors, const std::string& source) = 0;
  // The trained tensors were written between steps (the EMA's weights put into the models for a
  // sample or an EMA file, and back: loop/run_ema.h): what the models read in their place (compute
  // copies, swapped blocks' device copies) follows them again.
  virtual void trainedWeightsChanged() {}
  // What sample prompts (and negative prompts) replace before they are rendered (textual inversion:
  // the token string by its tokens, sd-scripts' prompt_replacement; pivotal tuning: each
  // embedding's), in order; empty: nothing.
  virtual std::vector<data::CaptionReplacement> samplePromptReplacements() const { return {}; }
};

}  // namespace sinter::train
