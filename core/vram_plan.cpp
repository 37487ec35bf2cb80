#include "core/vram_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <tuple>

#include "core/compile_settings.h"
#include "core/family_table.h"
#include "core/network_rank.h"
#include "core/optimizer_table.h"
#include "core/registry.h"
#include "core/vram_costs.h"

namespace sinter {

namespace {

using namespace vram_costs;

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kGiB);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t fluxTokens(int64_t w, int64_t h) { return (w / 16) * (h / 16) + 512; }  // + T5's 512 (FLUX.1-dev)
int64_t sdxlTokens(int64_t w, int64_t h) { return (w / 8) * (h / 8); }

// vram_costs.h: the VAE encoder's first level (where it peaks), or its chunked mid-block attention
// (SDXL's VAE and FLUX's AE alike).
double vaeEncodeBytes(int64_t w, int64_t h, int dtypeBytes) {
  const double pixels = static_cast<double>(w) * static_cast<double>(h);
  const double firstLevel = pixels * kVaeEncodeChannels * kVaeEncodeTensorsInDtype * dtypeBytes * kVaeEncodeRounding;
  const double tokens = static_cast<double>(sdxlTokens(w, h));
  const double scores = std::min(tokens * tokens, std::max(tokens, std::floor(kVaeAttentionMaxScores / tokens) * tokens));
  return std::max(firstLevel, 2 * scores * 4);
}

// A Linear's parameters: its weight (the part fp8_base and blocks_to_swap touch) and its bias.
struct Linear {
  int64_t in, out;
};
void add(BlockKind& b, Linear l) {
  b.linearParams += l.in * l.out;
  b.otherParams += l.out;
}

// blocks_to_swap s: how many blocks of each kind the device no longer holds (sd-scripts' split).
std::pair<int64_t, int64_t> swapSplit(int s) { return {s / 2, static_cast<int64_t>(s - s / 2) * 2}; }

std::string describe(const PlanSettings& s, const MemoryModel& m, bool frozenBase) {
  std::string out;
  auto put = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (m.fp8Capable && frozenBase) put(std::string("fp8_base ") + (s.fp8Base ? "on" : "off"));
  if (m.swappable) put("blocks_to_swap " + std::to_string(s.blocksToSwap));
  put(std::string("gradient_checkpointing ") + (s.gradientCheckpointing ? "on" : "off"));
  put(std::string("cpu_offload_checkpointing ") + (s.cpuOffloadCheckpointing ? "on" : "off"));
  if (!frozenBase) put(std::string("fused_backward_pass ") + (s.fusedBackwardPass ? "on" : "off"));
  return out;
}

bool isDefault(const Config& config, const std::string& key) {
  if (!config.has(key)) return true;
  const OptionSpec* spec = findOption(key);
  return spec && (spec->isUnsetValue(config.get(key)) || config.get(key) == spec->defaultValue);
}

// Bytes of optimizer state per trained parameter (the optimizer's row; sd-scripts' older switches
// name AdamW8bit and Lion; an empty optimizer_type is AdamW, and so is an unknown one here: the run
// refuses it).
double optimizerStateBytes(const Config& config) {
  const std::string type = config.getBool("use_8bit_adam")       ? "AdamW8bit"
                           : config.getBool("use_lion_optimizer") ? "Lion"
                                                                  : config.getString("optimizer_type");
  const OptimizerRow* row = findOptimizerRow(type);
  return (row ? *row : *findOptimizerRow("AdamW")).stateBytesPerParameter;
}

std::pair<int64_t, int64_t> parseResolution(const Config& config) {
  const std::string text = config.getString("resolution");
  if (text.empty()) return {1024, 1024};
  try {
    const size_t comma = text.find(',');
    const int64_t w = std::stoll(text.substr(0, comma));
    const int64_t h = comma == std::string::npos ? w : std::stoll(text.substr(comma + 1));
    if (w < 64 || h < 64) throw std::invalid_argument("");
    return {w, h};
  } catch (const std::exception&) {
    throw std::invalid_argument("resolution: '" + text + "' is no width,height the memory plan can read");
  }
}

std::string describeSettings(const PlanSettings& s, const PlanRequest& r) {
  const std::optional<MemoryModel> m = fullSizeMemoryModel(r.family);
  return describe(s, m.value_or(MemoryModel{}), r.frozenBase());
}

}  // namespace

MemoryModel fluxDevMemoryModel() {
  // FLUX.1-dev's configuration (flux/model.py FluxParams): width 3072, 24 heads of 128, MLP 4x,
  // 19 double and 38 single blocks, 64 latent channels in, T5 4096 wide, CLIP pooled 768.
  const int64_t h = 3072, m = 12288, d = 128, in = 64, ctx = 4096, vec = 768, t = 256;
  MemoryModel model;
  model.architecture = "FLUX.1-dev";
  model.autoencoderName = "the AE";
  BlockKind dbl{"double", 19, 0, 0}, sgl{"single", 38, 0, 0};
  for (int stream = 0; stream < 2; ++stream) {  // img and txt
    for (Linear l : {Linear{h, 6 * h}, Linear{h, 3 * h}, Linear{h, h}, Linear{h, m}, Linear{m, h}}) add(dbl, l);
    dbl.otherParams += 2 * d;  // the QK RMSNorms' scales
  }
  for (Linear l : {Linear{h, 3 * h + m}, Linear{h + m, h}, Linear{h, 3 * h}}) add(sgl, l);
  sgl.otherParams += 2 * d;
  model.blocks = {dbl, sgl};
  BlockKind trunk;
  for (Linear l : {Linear{in, h}, Linear{t, h}, Linear{h, h}, Linear{vec, h}, Linear{h, h}, Linear{t, h}, Linear{h, h},
                   Linear{ctx, h}, Linear{h, in}, Linear{h, 2 * h}})
    add(trunk, l);
  model.trunkLinearParams = trunk.linearParams;
  model.trunkOtherParams = trunk.otherParams;
  model.encoderParams = 4762310656LL + 123060480LL;  // T5-XXL encoder, CLIP-L text model
  // T5-XXL's Linears: 24 layers of q, k, v, o (4096 x 4096) and wi_0, wi_1, wo (4096 x 10240); the
  // rest is its token embedding, relative attention bias and layer norms.
  model.encoderFp8LinearParams = 24LL * (4 * 4096 * 4096 + 3 * 4096 * 10240);
  model.autoencoderParams = 83819683LL;              // ae.safetensors
  model.autoencoderEncodeBytes = vaeEncodeBytes;  // the AE's encoder is SDXL's VAE encoder
  model.swappable = true;
  model.fp8Capable = true;
  model.maxBlocksToSwap = 35;  // 17 double + 36 single (two of each kind stay: the ring)
  // networks.lora_flux: per double block 2 x (mod 7h, qkv 4h, proj 2h, mlp 2(h+m)); per single
  // block linear1 (4h+m), linear2 (2h+m), modulation 4h; CLIP-L's 72 Linears (--print_lora_layout).
  model.loraUnitsDenoiser = 19 * 2 * (15 * h + 2 * m) + 38 * (10 * h + 2 * m);
  model.loraUnitsEncoders = 165888;
  model.tokens = fluxTokens;
  model.fullBytesPerToken = kFluxFullBytesPerToken;
  model.savedBytesPerToken = kFluxSavedBytesPerToken;
  model.recomputeBytesPerToken = kFluxRecomputeBytesPerToken;
  model.fixedBytes = kFluxFixedGiB * kGiB;
  return model;
}

MemoryModel sdxlBaseMemoryModel() {
  // sd_xl_base_1.0.safetensors' tensors: U-Net 2,567,463,684; CLIP-L 123,060,480 and OpenCLIP
  // bigG 694,659,841 text models; VAE 83,653,863. The U-Net has no swappable blocks here, so it
  // is one block. Its "Linear" parameters are what fp8_base stores in 1 byte: the Linear weights
  // (2,232,647,680: attention, feed-forward, projections, embeddings) and the blocks' Conv2d
  // kernels (333,209,600), which Sinter stores in float8 too (sd-scripts casts the whole U-Net);
  // the rest (1,606,404) are norms, biases and the 4-channel stem and head convolutions.
  MemoryModel model;
  model.architecture = "SDXL base 1.0";
  model.blocks = {BlockKind{"U-Net", 1, 2232647680LL + 333209600LL, 1606404LL}};
  model.fp8Capable = true;  // LoRA: the planner's fp8_base (full weights train what fp8 would store)
  model.encoderParams = 123060480LL + 694659841LL;
  // fp8_base stores the text encoders' Linear weights too (sdxl_model_set.h): CLIP-L's 12 layers of
  // q, k, v, out (768 x 768) and fc1, fc2 (768 x 3072), bigG's 32 of 1280 x 1280 and 1280 x 5120.
  model.encoderFp8LinearParams = 12LL * (4 * 768 * 768 + 2 * 768 * 3072) + 32LL * (4 * 1280 * 1280 + 2 * 1280 * 5120);
  model.autoencoderParams = 83653863LL;
  // The start's latent-caching stage holds the VAE's working memory at the training resolution.
  model.autoencoderEncodeBytes = vaeEncodeBytes;
  // networks.lora (--print_lora_layout): U-Net 2,659,840 per rank; text encoders 165,888 + 737,280.
  model.loraUnitsDenoiser = 2659840;
  model.loraUnitsEncoders = 165888 + 737280;
  model.embeddingWidth = 768 + 1280;  // sdxl_train_textual_inversion.py's clip_l and clip_g rows
  model.tokens = sdxlTokens;
  model.fullBytesPerToken = kSdxlFullBytesPerToken;
  model.savedBytesPerToken = kSdxlSavedBytesPerToken;
  model.recomputeBytesPerToken = kSdxlRecomputeBytesPerToken;
  model.fixedBytes = kSdxlFixedGiB * kGiB;
  return model;
}

std::optional<MemoryModel> fullSizeMemoryModel(Family family) {
  const FamilyRow& row = familyRow(family);
  if (!row.memoryModel) return std::nullopt;
  MemoryModel model = row.memoryModel();
  model.family = family;
  return model;
}

PlanRequest planRequestFromConfig(const Config& config, const MemoryModel& model, double correction) {
  PlanRequest r;
  r.family = model.family;
  r.lora = config.tab() == Tab::LoRA;
  r.textualInversion = config.tab() == Tab::TextualInversion;
  if (r.textualInversion) {
    if (model.embeddingWidth <= 0)
      throw std::invalid_argument("vram_budget_gb: " + model.architecture + "'s memory model has no text encoder rows for textual inversion");
    r.embeddingVectors = std::max<long long>(1, config.getInt("num_vectors_per_token"));
  }
  std::tie(r.width, r.height) = parseResolution(config);
  r.batch = std::max<long long>(1, config.getInt("train_batch_size"));
  r.rank = networkDim(config);
  r.cachedText = config.getBool("cache_text_encoder_outputs") || config.getBool("cache_text_encoder_outputs_to_disk");
  r.cachedLatents = config.getBool("cache_latents") || config.getBool("cache_latents_to_disk");
  // Textual inversion's encoders run with gradients to the new rows, but train no weights of theirs.
  r.trainEncoders = r.lora               ? !config.getBool("network_train_unet_only") && !r.cachedText
                    : r.textualInversion ? false
                                         : config.getBool("train_text_encoder");
  const std::string mp = config.getString("mixed_precision");
  r.weightBytes = mp == "no" ? 4 : 2;
  r.autoencoderBytes = mp == "no" || mp == "fp16" || config.getBool("no_half_vae") ? 4 : 2;
  r.vaeBatch = std::max<long long>(1, config.getInt("vae_batch_size"));
  r.trainableBytes = (config.getBool("full_bf16") || config.getBool("full_fp16")) ? 2 : 4;
  r.fp8BaseUnet = config.getBool("fp8_base_unet");
  r.optimizerBytesPerParam = optimizerStateBytes(config);
  // ema_decay with ema_device "gpu": a float32 average of every trained weight beside it, held like optimizer state.
  if (config.isSet("ema_decay") && config.getString("ema_device") == "gpu")
    r.optimizerBytesPerParam += 4;
  const std::string optimizer = lower(config.getString("optimizer_type"));
  r.fusedBackwardAllowed = !r.frozenBase() && optimizer == "adafactor" && config.getInt("gradient_accumulation_steps") <= 1;
  r.budgetBytes = isUnset(config.get("vram_budget_gb")) ? 0 : config.getDouble("vram_budget_gb") * kGiB;
  r.correction = std::max(1.0, correction);
  const CompileRequest compile = resolveCompileRequest(config);
  r.wholeStepCaptured = compile.enabled && compile.fullgraph && compile.capturesGraphs();
  // The user's values: kept where they differ from the default (the planner leaves them).
  PlanSettings& u = r.userFixed;
  u.fp8Base = config.getBool("fp8_base") || config.getBool("fp8_base_unet");
  u.blocksToSwap = isUnset(config.get("blocks_to_swap")) ? 0 : static_cast<int>(config.getInt("blocks_to_swap"));
  u.gradientCheckpointing = config.getBool("gradient_checkpointing");
  u.cpuOffloadCheckpointing = config.getBool("cpu_offload_checkpointing");
  u.fusedBackwardPass = config.getBool("fused_backward_pass");
  for (const char* key : {"fp8_base", "fp8_base_unet", "blocks_to_swap", "gradient_checkpointing", "cpu_offload_checkpointing",
                          "fused_backward_pass"})
    if (!isDefault(config, key)) r.fixedKeys.push_back(key);
  return r;
}

PlanEstimate estimatePlan(const MemoryModel& m, const PlanRequest& r, const PlanSettings& s) {
  PlanEstimate e;
  e.settings = s;
  const auto [swappedFirst, swappedSecond] = swapSplit(s.blocksToSwap);
  // The denoiser's weights on the device: Linear weights in 1 byte under fp8_base; a swapped
  // block's Linear weights live in host memory (the ring of two is among the blocks kept).
  const double linearBytes = s.fp8Base ? 1.0 : r.weightBytes;
  double linearOnDevice = static_cast<double>(m.trunkLinearParams), linearAll = linearOnDevice, other = m.trunkOtherParams;
  for (size_t k = 0; k < m.blocks.size(); ++k) {
    const BlockKind& b = m.blocks[k];
    const int64_t swapped = !m.swappable ? 0 : k == 0 ? swappedFirst : k == 1 ? swappedSecond : 0;
    linearOnDevice += static_cast<double>(b.linearParams) * (b.count - swapped);
    linearAll += static_cast<double>(b.linearParams) * b.count;
    other += static_cast<double>(b.otherParams) * b.count;
  }
  const double denoiserParams = linearAll + other;
  // fp8_base without fp8_base_unet stores FLUX's T5-XXL Linears in 1 byte too (sd-scripts' fp8 T5).
  const double encoderFp8 = s.fp8Base && !r.fp8BaseUnet ? static_cast<double>(m.encoderFp8LinearParams) : 0;
  const double encoderBytes = (static_cast<double>(m.encoderParams) - encoderFp8) * r.weightBytes + encoderFp8;
  const double aeBytes = static_cast<double>(m.autoencoderParams) * r.autoencoderBytes;
  double trained = 0;
  if (r.frozenBase()) {
    e.residentWeightsBytes = linearOnDevice * linearBytes + other * r.weightBytes;
    trained = r.lora ? static_cast<double>(r.rank) * (m.loraUnitsDenoiser + (r.trainEncoders ? m.loraUnitsEncoders : 0))
                     : static_cast<double>(r.embeddingVectors) * static_cast<double>(m.embeddingWidth);
  } else {
    // Full weights: the denoiser is the trained model (fp32 masters keep a bf16 compute copy).
    trained = denoiserParams + (r.trainEncoders ? static_cast<double>(m.encoderParams) : 0);
    if (r.trainableBytes == 4 && r.weightBytes == 2) e.residentWeightsBytes = trained * 2;
  }
  e.trainableBytes = trained * r.trainableBytes;
  // The fused backward pass steps each parameter as its gradient completes: no gradients held.
  e.gradientBytes = s.fusedBackwardPass ? 0 : trained * r.trainableBytes;
  e.optimizerBytes = trained * r.optimizerBytesPerParam;
  // Encoders and autoencoder stay on the device through the step unless their outputs are cached.
  if (!r.cachedText) e.residentWeightsBytes += encoderBytes;
  if (!r.cachedLatents) e.residentWeightsBytes += aeBytes;
  const double tokens = static_cast<double>(m.tokens(r.width, r.height)) * r.batch;
  if (!s.gradientCheckpointing) {
    e.activationBytes = tokens * m.fullBytesPerToken;
  } else {
    const double blocks = std::max<double>(1, [&] {
      double n = 0;
      for (const BlockKind& b : m.blocks) n += b.count;
      return n;
    }());
    // Offloaded, the saved inputs wait in host memory; about two blocks' are on the device at a time.
    const double saved = tokens * m.savedBytesPerToken * (s.cpuOffloadCheckpointing ? std::min(1.0, 2.0 / blocks) : 1.0);
    e.activationBytes = saved + tokens * m.recomputeBytesPerToken;
  }
  e.stepPeakBytes = (e.residentWeightsBytes + e.trainableBytes + e.gradientBytes + e.optimizerBytes + e.activationBytes + m.fixedBytes) *
                    kAllocatorMargin * r.correction;
  // The start, staged (train/flux/flux_family.h, train/sdxl/sdxl_family.h): the LoRA (or textual
  // inversion's rows, made as the LoRA is) from the start
  // (its weights, their gradient buffers and, trained in float32 for a bf16/fp16 step, their compute
  // copies and theirs: train/base/compute_copies.h), or a full-weight run's denoiser (and SDXL's text
  // encoders under train_text_encoder) and its gradients; then the autoencoder alone while latents
  // are cached, the text encoders alone while their outputs are, and last the step's weights (before
  // any activation). Its peak is the largest stage.
  const double denoiserAtStart = (linearOnDevice + other) * r.trainableBytes;  // a full-weight run's
  const double lora = e.trainableBytes + e.gradientBytes + (r.trainableBytes != r.weightBytes ? 2.0 * trained * r.weightBytes : 0);
  const double trainedEncoders = !r.frozenBase() && r.trainEncoders ? static_cast<double>(m.encoderParams) * r.trainableBytes : 0;
  // A full-weight run's gradient buffers are made with its optimizer, before the caches (measured:
  // an SDXL fine-tune's start held its U-Net and their gradients; none under fused_backward_pass).
  const double throughout = r.frozenBase() ? lora : denoiserAtStart + trainedEncoders + e.gradientBytes;
  double largest = e.residentWeightsBytes + (r.frozenBase() ? lora : e.trainableBytes);
  // The latent-caching stage encodes vae_batch_size images at once, with the encoder's working memory.
  const double aeWork =
      m.autoencoderEncodeBytes ? m.autoencoderEncodeBytes(r.width, r.height, r.autoencoderBytes) * m.autoencoderEncodeScale * r.vaeBatch : 0;
  if (r.cachedLatents) largest = std::max(largest, throughout + aeBytes + aeWork);
  if (r.cachedText) largest = std::max(largest, throughout + encoderBytes);
  e.startPeakBytes = largest * kAllocatorMargin;
  // Relative step time.
  double t = 1;
  if (s.gradientCheckpointing) t += kCheckpointingCost;
  if (s.cpuOffloadCheckpointing) t += kCheckpointOffloadCost;
  if (s.fp8Base) t += kFp8BaseCost;
  if (s.fusedBackwardPass) t += kFusedBackwardCost;
  if (m.swappable && s.blocksToSwap > 0) {
    double streamed = 0;  // bytes of the swapped blocks' Linear weights, streamed in both passes
    if (!m.blocks.empty()) streamed += static_cast<double>(m.blocks[0].linearParams) * swappedFirst;
    if (m.blocks.size() > 1) streamed += static_cast<double>(m.blocks[1].linearParams) * swappedSecond;
    t += kSwapCostPerGB * streamed * linearBytes * 2 / 1e9;
  }
  e.relativeStepTime = t;
  e.limitingBytes = r.startMustFit ? std::max(e.stepPeakBytes, e.startPeakBytes) : e.stepPeakBytes;
  // Host traffic inside the step, or optimizer steps inside autograd: no whole-step graph.
  e.breaksCapture = r.wholeStepCaptured && (s.blocksToSwap > 0 || s.cpuOffloadCheckpointing || s.fusedBackwardPass);
  e.fits = r.budgetBytes > 0 && e.limitingBytes <= r.budgetBytes && !e.breaksCapture;
  return e;
}

VramPlan planVram(const MemoryModel& m, const PlanRequest& r) {
  VramPlan plan;
  plan.request = r;
  auto fixed = [&](const char* key) { return std::find(r.fixedKeys.begin(), r.fixedKeys.end(), key) != r.fixedKeys.end(); };
  std::vector<bool> fp8Choices{r.userFixed.fp8Base};
  if (m.fp8Capable && r.frozenBase() && !fixed("fp8_base") && !fixed("fp8_base_unet")) fp8Choices = {false, true};
  std::vector<int> swapChoices{r.userFixed.blocksToSwap};
  // A full-weight run trains the swapped weights inside the fused backward pass; the planner
  // leaves blocks_to_swap to the user there.
  if (m.swappable && r.frozenBase() && !fixed("blocks_to_swap")) {
    swapChoices.clear();
    for (int s = 0; s <= m.maxBlocksToSwap; ++s) swapChoices.push_back(s);
  }
  std::vector<bool> ckptChoices{r.userFixed.gradientCheckpointing};
  if (!fixed("gradient_checkpointing")) ckptChoices = {false, true};
  std::vector<bool> offloadChoices{r.userFixed.cpuOffloadCheckpointing};
  if (!fixed("cpu_offload_checkpointing")) offloadChoices = {false, true};
  std::vector<bool> fusedChoices{r.userFixed.fusedBackwardPass};
  if (!r.frozenBase() && r.fusedBackwardAllowed && !fixed("fused_backward_pass")) fusedChoices = {false, true};
  for (bool fp8 : fp8Choices)
    for (int swap : swapChoices)
      for (bool ckpt : ckptChoices)
        for (bool offload : offloadChoices)
          for (bool fused : fusedChoices) {
            if (offload && !ckpt) continue;                 // offload turns checkpointing on: the same plan
            if (offload && swap > 0) continue;              // not with blocks_to_swap (sd-scripts' rule)
            PlanSettings s{fp8, swap, ckpt, offload, fused};
            plan.candidates.push_back(estimatePlan(m, r, s));
          }
  std::stable_sort(plan.candidates.begin(), plan.candidates.end(), [](const PlanEstimate& a, const PlanEstimate& b) {
    if (a.relativeStepTime != b.relativeStepTime) return a.relativeStepTime < b.relativeStepTime;
    return a.stepPeakBytes < b.stepPeakBytes;
  });
  // The smallest budget any plan the run can take reaches (with compile_fullgraph, the capturable ones).
  plan.smallestReachableBytes = 0;
  for (const PlanEstimate& c : plan.candidates)
    if (!c.breaksCapture && (plan.smallestReachableBytes == 0 || c.limitingBytes < plan.smallestReachableBytes))
      plan.smallestReachableBytes = c.limitingBytes;
  for (PlanEstimate& c : plan.candidates) {
    if (!plan.chosen && c.fits) {
      c.why = "chosen: the fastest that fits";
      plan.chosen = c;
    } else if (c.breaksCapture) {
      c.why = "compile_fullgraph captures the whole step, which it cannot hold";
    } else if (!c.fits) {
      c.why = c.stepPeakBytes >= c.limitingBytes ? "needs " + gib(c.stepPeakBytes)
                                                 : "the step needs " + gib(c.stepPeakBytes) + ", the start " + gib(c.startPeakBytes);
    } else {
      c.why = "fits, slower (x" + std::to_string(c.relativeStepTime).substr(0, 4) + ")";
    }
  }
  if (plan.chosen) plan.candidates.front().why = plan.chosen->why;  // keep the list's first in step
  for (const std::string& key : r.fixedKeys) plan.notes.push_back(key + " is set in the config: kept as set");
  if (r.batch > 1)
    plan.notes.push_back("train_batch_size " + std::to_string(r.batch) + " is kept (the batch size changes training); the estimate is for it");
  if (r.correction > 1)
    plan.notes.push_back("estimates raised by x" + std::to_string(r.correction).substr(0, 4) +
                         ": an earlier run with these settings peaked above its plan (vram_budget_record.h)");
  return plan;
}

std::vector<std::pair<std::string, Value>> VramPlan::settingsToApply() const {
  std::vector<std::pair<std::string, Value>> out;
  if (!chosen) return out;
  auto fixed = [&](const char* key) {
    return std::find(request.fixedKeys.begin(), request.fixedKeys.end(), key) != request.fixedKeys.end();
  };
  const PlanSettings& s = chosen->settings;
  // The family's options (its full-size model's), whatever this build's float8 allows.
  const MemoryModel family = fullSizeMemoryModel(request.family).value_or(MemoryModel{});
  if (family.fp8Capable && request.frozenBase() && !fixed("fp8_base") && !fixed("fp8_base_unet"))
    out.emplace_back("fp8_base", Value(s.fp8Base));
  if (family.swappable && request.frozenBase() && !fixed("blocks_to_swap"))
    out.emplace_back("blocks_to_swap", Value(static_cast<long long>(s.blocksToSwap)));
  if (!fixed("gradient_checkpointing")) out.emplace_back("gradient_checkpointing", Value(s.gradientCheckpointing));
  if (!fixed("cpu_offload_checkpointing")) out.emplace_back("cpu_offload_checkpointing", Value(s.cpuOffloadCheckpointing));
  if (!request.frozenBase() && request.fusedBackwardAllowed && !fixed("fused_backward_pass"))
    out.emplace_back("fused_backward_pass", Value(s.fusedBackwardPass));
  return out;
}

std::vector<std::string> VramPlan::lines() const {
  std::vector<std::string> out;
  char head[256];
  const char* method = request.lora ? "LoRA" : request.textualInversion ? "textual inversion" : "full weights";
  std::snprintf(head, sizeof head, "vram budget %.1f GiB: %s at %lldx%lld, batch %lld", request.budgetBytes / kGiB, method,
                static_cast<long long>(request.width), static_cast<long long>(request.height),
                static_cast<long long>(request.batch));
  out.push_back(head);
  std::optional<MemoryModel> model = fullSizeMemoryModel(request.family);
  const MemoryModel m = model.value_or(MemoryModel{});
  if (chosen) {
    const PlanEstimate& c = *chosen;
    out.push_back("  plan: " + describe(c.settings, m, request.frozenBase()));
    out.push_back("  estimated step peak " + gib(c.stepPeakBytes) + " (weights " + gib(c.residentWeightsBytes) + ", trained " +
                  gib(c.trainableBytes) + ", gradients " + gib(c.gradientBytes) + ", optimizer " + gib(c.optimizerBytes) +
                  ", activations " + gib(c.activationBytes) + "); step time x" + std::to_string(c.relativeStepTime).substr(0, 4) +
                  " of the resident step");
    out.push_back("  estimated start peak " + gib(c.startPeakBytes) + " (its largest stage: " + m.autoencoderName +
                  ", the text encoders or the step's weights, one at a time)");
  } else {
    out.push_back("  no plan fits: " + error());
  }
  // The alternatives: the fastest few that were passed over, and why.
  int shown = 0;
  for (const PlanEstimate& c : candidates) {
    if (chosen && c.settings.fp8Base == chosen->settings.fp8Base && c.settings.blocksToSwap == chosen->settings.blocksToSwap &&
        c.settings.gradientCheckpointing == chosen->settings.gradientCheckpointing &&
        c.settings.cpuOffloadCheckpointing == chosen->settings.cpuOffloadCheckpointing &&
        c.settings.fusedBackwardPass == chosen->settings.fusedBackwardPass)
      continue;
    if (chosen && c.relativeStepTime > chosen->relativeStepTime && shown >= 2) break;
    if (++shown > 6) break;
    out.push_back("  passed over: " + describe(c.settings, m, request.frozenBase()) + ": " + c.why);
  }
  for (const std::string& n : notes) out.push_back("  note: " + n);
  return out;
}

std::string VramPlan::error() const {
  if (chosen) return "";
  std::string text = "vram_budget_gb = " + std::to_string(request.budgetBytes / kGiB).substr(0, 5) +
                     ": no plan fits; the smallest reachable is " + gib(smallestReachableBytes) + " at " + std::to_string(request.width) +
                     "x" + std::to_string(request.height) + ", batch " + std::to_string(request.batch) +
                     (request.fixedKeys.empty() ? "" : " with the options you set kept (leave them at their defaults to let the plan choose)");
  // Where the start is what does not fit: say so (the step alone would).
  for (const PlanEstimate& c : candidates)
    if (request.startMustFit && !c.breaksCapture && c.stepPeakBytes <= request.budgetBytes && c.startPeakBytes > request.budgetBytes) {
      text += "; the training step would fit (" + describeSettings(c.settings, request) + ": " + gib(c.stepPeakBytes) +
              ") but the start's largest stage does not (the text encoders or " + fullSizeMemoryModel(request.family).value_or(MemoryModel{}).autoencoderName +
              " while the caches are built: " + gib(c.startPeakBytes) + ")";
      break;
    }
  if (request.wholeStepCaptured) {
    double withoutCapture = 0;
    for (const PlanEstimate& c : candidates)
      if (c.breaksCapture && (withoutCapture == 0 || c.limitingBytes < withoutCapture)) withoutCapture = c.limitingBytes;
    if (withoutCapture > 0 && withoutCapture < smallestReachableBytes)
      text += "; compile_fullgraph captures the whole step, which rules out blocks_to_swap, cpu_offload_checkpointing and "
              "fused_backward_pass (they move data to the host or step inside the backward pass): with compile_fullgraph off "
              "the smallest reachable is " + gib(withoutCapture);
  }
  if (!request.cachedText)
    text += "; cache_text_encoder_outputs takes the text encoders off the device during the steps";
  return text;
}

}  // namespace sinter
