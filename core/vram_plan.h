#pragma once
// vram_budget_gb: the memory plan. From the model's parameter counts (exact, per block), measured
// activation costs per token and block (vram_costs.h) and the optimizer's state, every combination
// of fp8_base, blocks_to_swap, gradient_checkpointing, cpu_offload_checkpointing and (full-weight
// runs) fused_backward_pass is estimated; the fastest whose peak fits the budget is chosen.
// Plain arithmetic (no torch): the runner plans with the checkpoint's own counts, the app with the
// full-size architecture's (vram_costs.h).
//
// The rules (docs/DESIGN.md, memory):
// - An option the user set to a value other than its default is kept; the planner chooses only
//   the options left at their default (the app writes defaults, so "set" alone cannot tell).
// - The batch size is never changed (it changes training); a batch that does not fit is reported.
// - The estimate is of the training step (the weights resident on the device, the trainable
//   weights, their gradients and optimizer state, the activations) and of the run's start, which
//   builds its caches one stage at a time (FLUX, SDXL: its largest stage counts); a run's plan must
//   fit both.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"

namespace sinter {

// One kind of repeated block: how many, and the parameters of one (Linear weights, which fp8_base
// stores in 1 byte and blocks_to_swap streams, and the rest).
struct BlockKind {
  std::string name;
  int64_t count = 0;
  int64_t linearParams = 0;
  int64_t otherParams = 0;
};

// What a family's step keeps and computes, in parameters and per-token costs.
struct MemoryModel {
  Family family = kDefaultFamily;        // set by fullSizeMemoryModel from the family table's row
  std::string architecture;              // "FLUX.1-dev transformer", ...: for the plan's text
  std::string autoencoderName = "the VAE (encoding at the resolution)";  // the latent-caching stage, for the plan's text
  std::vector<BlockKind> blocks;         // the denoiser's blocks (FLUX: double, single)
  int64_t trunkLinearParams = 0;         // the denoiser outside its blocks
  int64_t trunkOtherParams = 0;
  int64_t encoderParams = 0;             // text encoders (frozen; on the device until their outputs are cached)
  // The text encoders' Linear weights, 1 byte under fp8_base without fp8_base_unet (FLUX: T5-XXL's;
  // SDXL: CLIP-L's and bigG's transformer layers).
  int64_t encoderFp8LinearParams = 0;
  int64_t autoencoderParams = 0;
  // The autoencoder's working memory while it encodes one image of width x height with weights of
  // `dtypeBytes` (the latent-caching stage); null where not modelled.
  double (*autoencoderEncodeBytes)(int64_t width, int64_t height, int dtypeBytes) = nullptr;
  double autoencoderEncodeScale = 1;     // its first level's width against the full size's (a smaller test model)
  bool swappable = false;                // blocks_to_swap applies
  bool fp8Capable = false;               // fp8_base applies
  // blocks_to_swap s swaps s/2 blocks of the first kind and (s - s/2) * 2 of the second
  // (sd-scripts' split); at most this many.
  int maxBlocksToSwap = 0;
  // LoRA: sum of (in + out) over the network's Linear modules, per unit of rank, for the denoiser
  // and for the text encoders.
  int64_t loraUnitsDenoiser = 0;
  int64_t loraUnitsEncoders = 0;
  // Textual inversion: the width of each text encoder's token rows, summed (a new token's trained
  // parameters; SDXL: CLIP-L's 768 + bigG's 1280). 0: the family trains no embeddings.
  int64_t embeddingWidth = 0;
  // Activations: tokens of one image at width x height, and the bytes per token (vram_costs.h).
  int64_t (*tokens)(int64_t width, int64_t height) = nullptr;
  double fullBytesPerToken = 0;          // all blocks, no checkpointing
  double savedBytesPerToken = 0;         // with checkpointing: the blocks' saved inputs
  double recomputeBytesPerToken = 0;     // with checkpointing: one block recomputed in the backward pass
  double fixedBytes = 0;                 // workspaces, the loss, the step's small tensors
};

// The full-size architectures (FLUX.1-dev, SDXL base 1.0), by formula from their configurations.
MemoryModel fluxDevMemoryModel();
MemoryModel sdxlBaseMemoryModel();
// The family table's model (core/family_table.h), its family set; nullopt for a family without one (SD 1.x/2.x).
std::optional<MemoryModel> fullSizeMemoryModel(Family family);

// One candidate: the settings the planner may choose.
struct PlanSettings {
  bool fp8Base = false;
  int blocksToSwap = 0;
  bool gradientCheckpointing = false;
  bool cpuOffloadCheckpointing = false;
  bool fusedBackwardPass = false;
};

struct PlanEstimate {
  PlanSettings settings;
  double residentWeightsBytes = 0, trainableBytes = 0, gradientBytes = 0, optimizerBytes = 0, activationBytes = 0;
  double stepPeakBytes = 0;       // the sum, with the allocator's margin
  double startPeakBytes = 0;      // the start's largest stage (the autoencoder, the text encoders or the step's weights)
  double relativeStepTime = 1;    // 1: the resident bf16 step without checkpointing
  double limitingBytes = 0;       // what must fit: the step peak, and the start peak where it counts
  bool fits = false;
  bool breaksCapture = false;     // with wholeStepCaptured: settings the whole-step graph cannot hold
  std::string why;                // why it was not chosen (or "chosen")
};

// What the planner reads of a config, resolved.
struct PlanRequest {
  Family family = kDefaultFamily;
  bool lora = true;
  // training_type textual_inversion: the base frozen as under LoRA (fp8_base and blocks_to_swap
  // apply), the trained parameters the new tokens' rows (embeddingVectors x embeddingWidth), and the
  // step's activations those of a LoRA run (gradients flow through the U-Net to the conditioning).
  bool textualInversion = false;
  int64_t embeddingVectors = 1;      // num_vectors_per_token
  int64_t width = 1024, height = 1024, batch = 1;
  int64_t rank = 4;
  bool trainEncoders = false;        // LoRA modules on the text encoders train
  bool cachedText = false, cachedLatents = false;
  int weightBytes = 2;               // frozen weights' dtype (bf16/fp16 2, fp32 4)
  int autoencoderBytes = 2;          // the autoencoder's: 4 under fp16 or no_half_vae (PrecisionPlan::vaeDtype)
  int64_t vaeBatch = 1;              // vae_batch_size: images encoded at once while latents are cached
  int trainableBytes = 4;            // trainable weights (fp32 masters, or full_bf16/full_fp16: 2)
  bool fp8BaseUnet = false;          // fp8_base_unet: float8 for the denoiser only (FLUX's T5-XXL keeps weightBytes)
  double optimizerBytesPerParam = 8; // AdamW: two fp32 moments
  bool fusedBackwardAllowed = false; // full weights with an optimizer that supports it, no accumulation
  double budgetBytes = 0;
  double correction = 1;             // from the last run's measured peak (vram_budget_record.h)
  // A run's start (its largest stage while the caches are built) must fit too; false for
  // --benchmark_steps, which builds the denoiser alone.
  bool startMustFit = true;
  // compile_fullgraph with CUDA graphs: the whole step is replayed as one graph, which blocks_to_swap,
  // cpu_offload_checkpointing and the fused backward pass break (compile_plan.cpp refuses the run),
  // so the planner leaves them out.
  bool wholeStepCaptured = false;
  PlanSettings userFixed;            // the values the user set
  std::vector<std::string> fixedKeys;  // which of the planned options the user set (kept)

  // The base model is frozen and what trains is small beside it (LoRA, textual inversion), rather
  // than the denoiser's own weights (DreamBooth, fine-tune).
  bool frozenBase() const { return lora || textualInversion; }
  // "lora", "textual_inversion" or "full": the method in the plan's text and its record key.
  std::string methodName() const { return lora ? "lora" : textualInversion ? "textual_inversion" : "full"; }
};

struct VramPlan {
  PlanRequest request;
  std::optional<PlanEstimate> chosen;
  std::vector<PlanEstimate> candidates;  // every one estimated, fastest first
  double smallestReachableBytes = 0;      // the least limitingBytes of any candidate
  std::vector<std::string> notes;
  // The chosen settings as config keys, only those the planner sets (not the user's).
  std::vector<std::pair<std::string, Value>> settingsToApply() const;
  // The plan as text lines ("vram budget: ..."), for the dry run, the log and the app.
  std::vector<std::string> lines() const;
  // Why nothing fits, naming the smallest reachable budget; empty when a plan fits.
  std::string error() const;
};

// The request from a config that passed validateConfig; `model` sized from the checkpoint or the
// full-size architecture. Throws std::invalid_argument naming the key for a value it cannot read.
PlanRequest planRequestFromConfig(const Config& config, const MemoryModel& model, double correction = 1);

PlanEstimate estimatePlan(const MemoryModel& model, const PlanRequest& request, const PlanSettings& settings);

VramPlan planVram(const MemoryModel& model, const PlanRequest& request);

// GiB, as the option counts them.
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace sinter
