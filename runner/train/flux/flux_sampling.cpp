#include "train/flux/flux_sampling.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "models/flux/flux_latents.h"
#include "train/flux/flux_family.h"
#include "train/objectives/flow_matching.h"

namespace sinter::train {

std::vector<double> fluxSampleTimesteps(int steps, int64_t latentHeight, int64_t latentWidth) {
  const torch::Tensor t = timeShift(fluxShiftMu(latentHeight, latentWidth), torch::linspace(1.0, 0.0, steps + 1, torch::kFloat64));
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

torch::Tensor fluxDenoise(models::FluxTransformerImpl& transformer, torch::Tensor tokens, int64_t latentHeight, int64_t latentWidth,
                          const FluxSampleConditioning& c, const std::vector<double>& timesteps, double cfgScale,
                          torch::Dtype computeDtype) {
  const int64_t b = c.t5.size(0);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(tokens.device());
  const torch::Tensor imgIds = models::fluxImageIds(b, latentHeight / 2, latentWidth / 2, f32);
  const torch::Tensor txtIds = models::fluxTextIds(b, c.t5.size(1), f32);
  const torch::Tensor t5 = c.t5.to(computeDtype), pooled = c.pooled.to(computeDtype);
  const torch::Tensor guidance = c.guidance.defined() ? c.guidance.to(computeDtype) : torch::Tensor();
  for (size_t i = 0; i + 1 < timesteps.size(); ++i) {
    const double now = timesteps[i], next = timesteps[i + 1];
    torch::Tensor in = b == 2 ? torch::cat({tokens, tokens}) : tokens;
    const torch::Tensor t = torch::full({b}, now, f32).to(computeDtype);
    torch::Tensor v = transformer.forward(in.to(computeDtype), imgIds, t5, txtIds, t, pooled, guidance, c.t5Mask).to(torch::kFloat32);
    if (b == 2) {
      const auto halves = v.chunk(2);
      v = halves[0] + (halves[1] - halves[0]) * cfgScale;
    }
    tokens = tokens + (next - now) * v;
  }
  return tokens;
}

sample::ResolvedSample FluxFamily::sampleDefaults() const {
  sample::ResolvedSample s;  // sd-scripts' FLUX sample_image_inference: 512x512, 20 steps, CFG 1, guidance 3.5
  s.steps = 20;
  s.scale = 1.0;
  if (dev_) s.guidanceScale = 3.5;
  s.samplerName = "euler";
  return s;
}

std::optional<FluxFamily::TextConditioning> FluxFamily::cachedSampleText(const std::vector<std::string>& texts) const {
  std::vector<torch::Tensor> t5, t5Mask, pooled;
  for (const std::string& text : texts) {
    const auto found = sampleText_.find(text);
    if (found == sampleText_.end()) return std::nullopt;
    t5.push_back(found->second.t5);
    t5Mask.push_back(found->second.t5Mask);
    pooled.push_back(found->second.pooled);
  }
  return TextConditioning{torch::cat(t5).to(device_), torch::cat(t5Mask).to(device_), torch::cat(pooled).to(device_)};
}

torch::Tensor FluxFamily::renderSample(sample::ResolvedSample& s, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const bool guided = s.scale != 1.0;
  std::vector<std::string> texts;
  if (guided) texts.push_back(s.negativePrompt);
  texts.push_back(s.prompt);
  // Encoded at the start: only the AE comes back to the device (to decode), else every parked model.
  const std::optional<TextConditioning> cached = cachedSampleText(texts);
  const HostParking::Visit parked(parking_, cached ? std::vector<std::string>{"AE"} : std::vector<std::string>{});
  if (cached && !toldCachedSampleText_)
    spdlog::info(options_.clipLEncodesInStep || options_.chroma
                     ? "samples are conditioned on the start's T5-XXL encodings: T5-XXL stays in host memory"
                     : "samples are conditioned on the start's encodings: CLIP-L and T5-XXL stay in host memory");
  toldCachedSampleText_ = toldCachedSampleText_ || cached;
  models_.transformer->eval();
  if (models_.clipL) models_.clipL->eval();
  // sd-scripts rounds down to 16 px (the AE's 8 times the 2x2 packing), at least 64.
  const int64_t down = models_.ae->config().downscale(), multiple = down * 2;
  sample::fitSampleSize(s, multiple);
  s.sampler = "Euler";
  if (!dev_) s.guidanceScale.reset();  // schnell has no guidance embedding

  TextConditioning text = cached ? *cached : encode(tokenize(texts), false);
  // CLIP-L trains (the partial cache): its pooled output is that of the weights as they are now.
  if (cached && options_.clipLEncodesInStep) text.pooled = clipLPooled(tokenize(texts).clipL, false);
  FluxSampleConditioning c{text.t5, options_.step.applyT5AttnMask ? text.t5Mask : torch::Tensor(), text.pooled, torch::Tensor()};
  const int64_t b = static_cast<int64_t>(texts.size());
  if (dev_) c.guidance = torch::full({b}, s.guidanceScale.value_or(3.5), torch::TensorOptions().dtype(torch::kFloat32).device(device_));

  const int64_t h = s.height / down, w = s.width / down;
  const int64_t channels = models_.transformer->config().inChannels;
  const torch::Tensor noise = at::randn({1, (h / 2) * (w / 2), channels}, generator, torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  const torch::Tensor tokens =
      fluxDenoise(*models_.transformer, noise, h, w, c, fluxSampleTimesteps(s.steps, h, w), s.scale, options_.step.computeDtype);
  const torch::Tensor latents = models::unpackFluxLatents(tokens, h / 2, w / 2);
  return models_.ae->decodeLatents(latents.to(models_.ae->parameters().front().scalar_type()));
}

}  // namespace sinter::train
