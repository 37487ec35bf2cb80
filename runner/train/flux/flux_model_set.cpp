#include "train/flux/flux_model_set.h"

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/flux_checkpoint.h"
#include "models/flux/flux_layout.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/weights/served_weight.h"
#include "train/base/config_values.h"
#include "train/base/mixed_precision.h"

namespace sinter::train {

FluxWeightPlacement FluxWeightPlacement::fromConfig(const Config& config) {
  FluxWeightPlacement p;
  p.fp8Base = config.getBool("fp8_base") || config.getBool("fp8_base_unet");
  p.fp8Scaled = p.fp8Base && config.getBool("fp8_scaled");
  p.fp8Compute.fastForward = p.fp8Scaled && config.getBool("fp8_fast");
  p.fp8Compute.fastBackward = p.fp8Compute.fastForward && config.getBool("fp8_fast_backward");
  // Fast FP8 accumulation in both passes (Float8ScaledOptions' default) unless the diagnostic asks otherwise.
  models::float8FastAccumulationFromEnvironment(p.fp8Compute);
  if (!isUnset(config.get("blocks_to_swap"))) p.blocksToSwap = config.getInt("blocks_to_swap");
  // sd-scripts: fp8_base casts the text encoders to float8 as well, fp8_base_unet the transformer only.
  p.t5Float8 = config.getBool("fp8_base") && !config.getBool("fp8_base_unet");
  return p;
}

void checkFluxPlacement(const FluxWeightPlacement& placement, const torch::Device& device) {
  if (placement.fp8Compute.fastForward)
    if (const std::string why = models::float8ComputeRefusal(device); !why.empty()) throw std::runtime_error(why);
  if (placement.fp8Scaled && placement.blocksToSwap > 0)
    throw std::invalid_argument("fp8_scaled cannot be used with blocks_to_swap yet: the swapped blocks would keep fp8_base's plain cast");
}

bool fluxLinearMultipliesInFloat8(const std::string& path) {
  // One row per sample (the modulations) gains nothing on FP8 tensor cores, and its error reaches
  // every token (scale, shift and gate): those stay dequantised.
  return !models::fluxLinearTakesOneRowPerSample(path);
}

void placeFluxTransformer(models::FluxTransformerImpl& transformer, const torch::Device& device, torch::Dtype dtype,
                          const FluxWeightPlacement& placement) {
  // Refused before minutes of loading where the preflight did not (benchmarks, the library).
  checkFluxPlacement(placement, device);
  castFrozen(transformer, dtype);
  if (placement.blocksToSwap > 0)
    transformer.enableBlockSwap(placement.blocksToSwap, device, placement.fp8Base ? models::float8Dtype() : dtype);
  // fp8_scaled quantizes on the device, Linear by Linear (the scale needs the weight's amax).
  if (placement.fp8Scaled) models::storeLinearsInScaledFloat8(transformer, device, placement.fp8Compute, fluxLinearMultipliesInFloat8);
  else if (placement.fp8Base) models::storeLinearsInFloat8(transformer);
  models::moveToDevice(transformer, device);
}

void FluxModelSet::castInPlace(torch::Dtype dtype, const FluxWeightPlacement& placement, std::optional<torch::Dtype> trainableDtype,
                               std::optional<torch::Dtype> aeDtype) {
  castFrozen(*transformer, trainableDtype.value_or(dtype));
  if (clipL) castFrozen(*clipL, dtype);
  castFrozen(*t5, dtype);
  // The Linears only: T5's Embeddings (shared, relative_attention_bias) and T5LayerNorms keep
  // `dtype`, as sd-scripts' prepare_fp8 keeps them in the weight dtype.
  if (placement.t5Float8) models::storeLinearsInFloat8(*t5);
  castFrozen(*ae, aeDtype.value_or(dtype == torch::kHalf ? torch::kFloat32 : dtype));
}

void FluxModelSet::toDevice(const torch::Device& device, torch::Dtype dtype, const FluxWeightPlacement& placement,
                            std::optional<torch::Dtype> trainableDtype, std::optional<torch::Dtype> aeDtype) {
  castInPlace(dtype, placement, trainableDtype, aeDtype);
  placeFluxTransformer(*transformer, device, trainableDtype.value_or(dtype), placement);
  for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{clipL.get(), t5.get(), ae.get()})
    if (m) models::moveToDevice(*m, device);
}

void FluxModelSet::setTraining(bool clipLTrains, bool t5xxlTrains) {
  transformer->train();
  ae->eval();
  if (clipL) clipL->train(clipLTrains);
  t5->train(t5xxlTrains);
}

torch::Tensor FluxModelSet::encodeLatents(const torch::Tensor& images, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const torch::Dtype aeDtype = ae->encoder->conv_in->weight.scalar_type();
  return ae->encodeToLatents(images.to(aeDtype), /*sample=*/true, generator);
}

std::string clipLPrefix(const io::SafetensorsFile& file) {
  for (const char* candidate : {"", models::ClipTextModelImpl::kSdxlPrefix, "clip_l.transformer."})
    if (file.has(std::string(candidate) + "text_model.embeddings.token_embedding.weight")) return candidate;
  return "";  // inferFromCheckpoint then names the key it expected
}

models::ClipTextModel loadClipL(const std::string& path) {
  const io::SafetensorsFile file(path);
  const std::string prefix = clipLPrefix(file);
  const models::ClipTextConfig config = models::ClipTextModelImpl::inferFromCheckpoint(file, prefix);
  models::ClipTextModel clip{nullptr};
  {
    const models::ParametersFromCheckpoint fromFile;  // the file's values overwrite them
    clip = models::ClipTextModel(config);
  }
  clip->loadFromCheckpoint(file, prefix);
  return clip;
}

FluxModelSet loadFluxModelSet(const FluxModelFiles& files) {
  FluxModelSet set;
  set.transformer = models::loadFluxTransformer(files.transformer);
  set.ae = models::loadFluxAutoencoder(files.ae);
  const models::FluxConfig& c = set.transformer->config();
  if (!c.chroma()) set.clipL = loadClipL(files.clipL);
  set.t5 = models::loadT5Encoder(files.t5xxl);
  // The transformer's conditioning widths are the encoders' outputs: a mismatch is a wrong file.
  if (set.clipL && set.clipL->config().width != c.vecInDim)
    throw models::CheckpointError(files.clipL + ": CLIP-L is " + std::to_string(set.clipL->config().width) +
                                  " wide, but the transformer in " + files.transformer + " takes a pooled vector of " +
                                  std::to_string(c.vecInDim));
  if (set.t5->config().dModel != c.contextInDim)
    throw models::CheckpointError(files.t5xxl + ": T5 is " + std::to_string(set.t5->config().dModel) +
                                  " wide, but the transformer in " + files.transformer + " takes text tokens of " +
                                  std::to_string(c.contextInDim));
  return set;
}

}  // namespace sinter::train
