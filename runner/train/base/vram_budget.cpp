#include "train/base/vram_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/ascii_text.h"
#include "core/vram_budget_record.h"
#include "core/vram_costs.h"
#include "io/safetensors.h"
#include "models/served_weight.h"

#if __has_include(<c10/cuda/CUDACachingAllocator.h>) && __has_include(<cuda_runtime_api.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#define SINTER_VRAM_CUDA 1
#else
#define SINTER_VRAM_CUDA 0
#endif

namespace sinter::train {

namespace fs = std::filesystem;

namespace {

bool readable(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

int64_t numelUnder(const io::SafetensorsFile& file, const std::string& prefix) {
  int64_t n = 0;
  for (const std::string& key : file.keys())
    if (key.rfind(prefix, 0) == 0) n += file.info(key).numel();
  return n;
}

// A FLUX transformer file: each block's Linear weights (2-D ".weight" tensors) and the rest, the
// LoRA units of those Linears (networks.lora_flux adapts every Linear of the blocks).
void sizeFluxTransformer(const io::SafetensorsFile& file, MemoryModel& m) {
  const std::string prefix = file.has("model.diffusion_model.img_in.weight") ? "model.diffusion_model." : "";
  BlockKind dbl{"double", 0, 0, 0}, sgl{"single", 0, 0, 0};
  int64_t trunkLinear = 0, trunkOther = 0;
  int maxDouble = -1, maxSingle = -1;
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    const io::TensorInfo& info = file.info(key);
    const bool linear = info.shape.size() == 2 && rest.size() > 7 && rest.compare(rest.size() - 7, 7, ".weight") == 0;
    auto blockIndex = [&](const std::string& head) { return std::atoi(rest.c_str() + head.size()); };
    if (rest.rfind("double_blocks.", 0) == 0 || rest.rfind("single_blocks.", 0) == 0) {
      const bool isDouble = rest[0] == 'd';
      const int index = blockIndex(isDouble ? "double_blocks." : "single_blocks.");
      int& most = isDouble ? maxDouble : maxSingle;
      most = std::max(most, index);
      if (index != 0) continue;  // the blocks of a kind are alike: block 0 sizes them
      BlockKind& b = isDouble ? dbl : sgl;
      (linear ? b.linearParams : b.otherParams) += info.numel();
    } else {
      (linear ? trunkLinear : trunkOther) += info.numel();
    }
  }
  if (maxDouble < 0 || maxSingle < 0) return;  // not a FLUX transformer: keep the full-size counts
  dbl.count = maxDouble + 1;
  sgl.count = maxSingle + 1;
  // LoRA units of block 0 of each kind times the count.
  int64_t doubleUnits = 0, singleUnits = 0;
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string rest = key.substr(prefix.size());
    const io::TensorInfo& info = file.info(key);
    if (info.shape.size() != 2 || rest.size() < 7 || rest.compare(rest.size() - 7, 7, ".weight") != 0) continue;
    if (rest.rfind("double_blocks.0.", 0) == 0) doubleUnits += info.shape[0] + info.shape[1];
    if (rest.rfind("single_blocks.0.", 0) == 0) singleUnits += info.shape[0] + info.shape[1];
  }
  // Another size than FLUX.1-dev's (a tiny test model): the measured activation costs scaled by the
  // block count and the width (Linear parameters grow with its square).
  const MemoryModel full = fluxDevMemoryModel();
  const double widthRatio = std::sqrt(static_cast<double>(sgl.linearParams) / static_cast<double>(full.blocks.at(1).linearParams));
  const double scale = widthRatio * static_cast<double>(dbl.count + sgl.count) / static_cast<double>(full.blocks[0].count + full.blocks[1].count);
  m.fullBytesPerToken *= scale;
  m.savedBytesPerToken *= scale;
  m.recomputeBytesPerToken *= scale;
  m.fixedBytes *= std::min(1.0, scale);
  m.blocks = {dbl, sgl};
  m.trunkLinearParams = trunkLinear;
  m.trunkOtherParams = trunkOther;
  m.loraUnitsDenoiser = doubleUnits * dbl.count + singleUnits * sgl.count;
  // sd-scripts' split (fluxBlockSwapSplit): s/2 doubles and (s - s/2) * 2 singles, two of each kind kept.
  m.maxBlocksToSwap = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(2 * (dbl.count - 2) + 1, 2 * ((sgl.count - 2) / 2))));
}

// T5-XXL's Linear weights (what fp8_base stores in float8): the attention's q, k, v, o and the
// feed-forward's wi_0, wi_1, wo; not its embeddings (shared, relative_attention_bias) or layer norms.
int64_t t5LinearParams(const io::SafetensorsFile& file) {
  int64_t n = 0;
  for (const std::string& key : file.keys()) {
    const bool linear = (key.find(".SelfAttention.") != std::string::npos || key.find(".DenseReluDense.") != std::string::npos) &&
                        key.find("relative_attention_bias") == std::string::npos && file.info(key).shape.size() == 2;
    if (linear) n += file.info(key).numel();
  }
  return n;
}

// The SDXL U-Net's weights fp8_base stores in float8 (sdxl_model_set.h): its Linear weights and
// its blocks' Conv2d kernels, the ".weight" tensors of two or more dimensions (norms' weights have
// one), less the stem and head convolutions (4 latent channels in and out), which stay.
int64_t sdxlUnetFloat8Params(const io::SafetensorsFile& file) {
  const std::string prefix = "model.diffusion_model.";
  int64_t n = 0;
  for (const std::string& key : file.keys()) {
    if (key.rfind(prefix, 0) != 0 || key.size() < 7 || key.compare(key.size() - 7, 7, ".weight") != 0) continue;
    if (key == prefix + "input_blocks.0.0.weight" || key == prefix + "out.2.weight") continue;
    const io::TensorInfo& info = file.info(key);
    if (info.shape.size() >= 2) n += info.numel();
  }
  return n;
}

// The SDXL text encoders' weights fp8_base stores in float8 (sdxl_model_set.h): the Linear weights
// of CLIP-L's layers and bigG's resblocks (their two-dimensional tensors; not the embeddings or
// bigG's text_projection, which stay).
int64_t sdxlTextEncoderFloat8Params(const io::SafetensorsFile& file) {
  int64_t n = 0;
  for (const std::string& key : file.keys()) {
    if (!startsWith(key, "conditioner.")) continue;
    if (key.find(".layers.") == std::string::npos && key.find(".resblocks.") == std::string::npos) continue;
    if (const io::TensorInfo& info = file.info(key); info.shape.size() == 2) n += info.numel();
  }
  return n;
}

// The VAE (or AE) encoder's working memory is its first level's, as wide as its conv_in's output:
// against the full size's (a smaller test model), 1 where the file does not say.
double autoencoderEncodeScale(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string key = prefix + "encoder.conv_in.weight";
  if (!file.has(key) || file.info(key).shape.empty()) return 1.0;
  return std::min(1.0, static_cast<double>(file.info(key).shape[0]) / vram_costs::kVaeEncodeChannels);
}

int64_t fileParams(const std::string& path) {
  const io::SafetensorsFile file(path);
  return numelUnder(file, "");
}

}  // namespace

MemoryModel memoryModelForRun(const Config& config, Family family) {
  std::optional<MemoryModel> full = fullSizeMemoryModel(family);
  if (!full) throw std::invalid_argument("vram_budget_gb: Sinter has no memory model for " + std::string(toString(family)));
  MemoryModel m = *full;
  m.fp8Capable = m.fp8Capable && models::float8InBuild();  // a libtorch without float8 refuses fp8_base
  const std::string model = config.getString("pretrained_model_name_or_path");
  try {
    if (family == Family::FLUX) {
      if (readable(model)) sizeFluxTransformer(io::SafetensorsFile(model), m);
      int64_t encoders = 0;
      bool both = true;
      for (const char* key : {"t5xxl", "clip_l"}) {
        if (readable(config.getString(key))) encoders += fileParams(config.getString(key));
        else both = false;
      }
      if (both) m.encoderParams = encoders;
      if (readable(config.getString("t5xxl"))) m.encoderFp8LinearParams = t5LinearParams(io::SafetensorsFile(config.getString("t5xxl")));
      if (readable(config.getString("ae"))) {
        const io::SafetensorsFile ae(config.getString("ae"));
        m.autoencoderParams = numelUnder(ae, "");
        m.autoencoderEncodeScale = autoencoderEncodeScale(ae, "");
      }
    } else if (family == Family::SDXL && readable(model)) {
      const io::SafetensorsFile file(model);
      if (const int64_t unet = numelUnder(file, "model.diffusion_model."); unet > 0) {
        // Another size than SDXL base's (a tiny test model): activation costs scaled by the width
        // (the square root of the parameter ratio).
        const BlockKind& full = m.blocks.at(0);
        const double scale = std::min(1.0, std::sqrt(static_cast<double>(unet) / static_cast<double>(full.linearParams + full.otherParams)));
        m.fullBytesPerToken *= scale;
        m.savedBytesPerToken *= scale;
        m.recomputeBytesPerToken *= scale;
        m.fixedBytes *= scale;
        const int64_t stored = sdxlUnetFloat8Params(file);
        m.blocks = {BlockKind{"U-Net", 1, stored, unet - stored}};
      }
      if (const int64_t te = numelUnder(file, "conditioner."); te > 0) {
        m.encoderParams = te;
        m.encoderFp8LinearParams = sdxlTextEncoderFloat8Params(file);
      }
      if (const int64_t vae = numelUnder(file, "first_stage_model."); vae > 0) m.autoencoderParams = vae;
      m.autoencoderEncodeScale = autoencoderEncodeScale(file, "first_stage_model.");
    }
  } catch (const io::SafetensorsError&) {
    // The file's own check reports it; the plan keeps the full-size counts.
  }
  return m;
}

std::optional<VramPlan> planForRun(const Config& config, Family family) {
  if (isUnset(config.get("vram_budget_gb")) || config.getDouble("vram_budget_gb") <= 0) return std::nullopt;
  const MemoryModel model = memoryModelForRun(config, family);
  PlanRequest probe = planRequestFromConfig(config, model);
  const double correction = readVramCorrection(
      defaultVramRecordFile(), vramRecordKey(toString(family), probe.lora, probe.width, probe.height, probe.batch));
  return planVram(model, planRequestFromConfig(config, model, correction));
}

std::optional<VramPlan> planBenchmark(Config& config, Family family) {
  if (isUnset(config.get("vram_budget_gb")) || config.getDouble("vram_budget_gb") <= 0) return std::nullopt;
  std::optional<MemoryModel> model = fullSizeMemoryModel(family);
  if (!model) throw std::invalid_argument("vram_budget_gb: Sinter has no memory model for " + std::string(toString(family)));
  model->fp8Capable = model->fp8Capable && models::float8InBuild();
  Config shaped = config;
  const bool lora = config.tab() == Tab::LoRA;
  shaped.set("resolution", std::string("1024,1024"));
  shaped.set("train_batch_size", 1LL);
  shaped.set("network_dim", 32LL);
  shaped.set("mixed_precision", std::string("bf16"));
  shaped.set("full_bf16", !lora);
  shaped.set("optimizer_type", std::string(lora ? "AdamW" : "Adafactor"));
  shaped.set("cache_text_encoder_outputs", true);
  shaped.set("cache_latents", true);
  shaped.set("network_train_unet_only", true);
  PlanRequest request = planRequestFromConfig(shaped, *model);
  request.startMustFit = false;  // the benchmark builds the denoiser alone
  VramPlan plan = planVram(*model, request);
  if (plan.chosen) applyVramPlan(plan, config);
  return plan;
}

void applyVramPlan(const VramPlan& plan, Config& config) {
  SourceLocation where;
  where.file = "vram_budget_gb plan";
  for (const auto& [key, value] : plan.settingsToApply()) config.set(key, value, where);
}

std::optional<VramBudgetCheck> vramBudgetCheck(const Config& resolved, Family family) {
  if (isUnset(resolved.get("vram_budget_gb")) || resolved.getDouble("vram_budget_gb") <= 0) return std::nullopt;
  if (!fullSizeMemoryModel(family)) return std::nullopt;
  const MemoryModel model = memoryModelForRun(resolved, family);
  VramBudgetCheck check;
  check.recordFile = defaultVramRecordFile();
  PlanRequest request = planRequestFromConfig(resolved, model);
  check.recordKey = vramRecordKey(toString(family), request.lora, request.width, request.height, request.batch);
  check.correction = readVramCorrection(check.recordFile, check.recordKey);
  request = planRequestFromConfig(resolved, model, check.correction);
  check.budgetBytes = request.budgetBytes;
  const PlanEstimate estimate = estimatePlan(model, request, request.userFixed);
  check.plannedBytes = estimate.stepPeakBytes;
  check.plannedStartBytes = estimate.startPeakBytes;
  return check;
}

void reportVramPeak(const VramBudgetCheck& check, double measuredBytes, EventSink& events) {
  const double gib = 1073741824.0;
  if (measuredBytes > check.plannedBytes) {
    try {
      const double correction = recordVramPeak(check.recordFile, check.recordKey, check.plannedBytes, measuredBytes, check.correction);
      spdlog::info("vram budget: the plan's estimate was {:.2f} GiB; the next start with {} plans with x{:.2f} ({})",
                   check.plannedBytes / gib, check.recordKey, correction, check.recordFile);
    } catch (const std::exception& e) {
      spdlog::warn("vram budget: could not record the measured peak: {}", e.what());
    }
  }
  if (measuredBytes > check.budgetBytes) {
    const std::string message = fmt::format(
        "vram_budget_gb = {:.1f}: step 1 peaked at {:.2f} GiB, {:.2f} GiB over the budget (the plan estimated {:.2f} GiB); "
        "the next start re-plans with the measured peak",
        check.budgetBytes / gib, measuredBytes / gib, (measuredBytes - check.budgetBytes) / gib, check.plannedBytes / gib);
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  } else {
    spdlog::info("vram budget: step 1 peaked at {:.2f} GiB of {:.1f} GiB (the plan estimated {:.2f} GiB)", measuredBytes / gib,
                 check.budgetBytes / gib, check.plannedBytes / gib);
  }
}

void reportStartPeak(const VramBudgetCheck& check, double measuredBytes, EventSink& events) {
  const double gib = 1073741824.0;
  if (measuredBytes > check.budgetBytes) {
    const std::string message = fmt::format(
        "vram_budget_gb = {:.1f}: the run's start (loading, caches, warm-up) peaked at {:.2f} GiB, over the budget (the plan "
        "estimated the start at {:.2f} GiB)",
        check.budgetBytes / gib, measuredBytes / gib, check.plannedStartBytes / gib);
    spdlog::warn("{}", message);
    events.emit(events::Warning{message});
  } else {
    spdlog::info("vram budget: the run's start (loading, caches, warm-up) peaked at {:.2f} GiB of {:.1f} GiB (the plan estimated "
                 "the start at {:.2f} GiB)",
                 measuredBytes / gib, check.budgetBytes / gib, check.plannedStartBytes / gib);
  }
}

double deviceMemoryPeakBytes(const torch::Device& device) {
#if SINTER_VRAM_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return static_cast<double>(stats.allocated_bytes[0].peak);  // 0: the aggregate over pool types
  }
#endif
  (void)device;
  return 0;
}

std::string applyMemoryCapFromEnvironment(const torch::Device& device) {
  const char* text = std::getenv("SINTER_CUDA_MEMORY_CAP_GB");
  if (!text || !*text) return "";
  char* end = nullptr;
  const double gib = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(gib > 0))
    throw std::invalid_argument(std::string("SINTER_CUDA_MEMORY_CAP_GB: '") + text + "' is no positive number of GiB");
  if (!device.is_cuda()) throw std::invalid_argument("SINTER_CUDA_MEMORY_CAP_GB caps a CUDA device's allocator; this run is on the CPU");
#if SINTER_VRAM_CUDA
  // A first tensor on the device initialises CUDA and its caching allocator, which must exist
  // before a fraction can be set (PyTorch's set_per_process_memory_fraction initialises it too).
  (void)torch::empty({1}, torch::TensorOptions().device(device));
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess || totalBytes == 0)
    throw std::invalid_argument("SINTER_CUDA_MEMORY_CAP_GB: cannot read the device's memory size");
  const double fraction = gib * 1073741824.0 / static_cast<double>(totalBytes);
  if (fraction > 1) throw std::invalid_argument(std::string("SINTER_CUDA_MEMORY_CAP_GB: ") + text + " GiB is more than the device has");
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device.index());
  char line[160];
  std::snprintf(line, sizeof line, "emulating a %.1f GiB GPU: the CUDA caching allocator is capped at %.4f of this device's %.1f GiB",
                gib, fraction, static_cast<double>(totalBytes) / 1073741824.0);
  return line;
#else
  throw std::invalid_argument("SINTER_CUDA_MEMORY_CAP_GB: this build's libtorch has no CUDA allocator to cap");
#endif
}

}  // namespace sinter::train
