// SDXL sample images (sd-scripts' SdxlStableDiffusionLongPromptWeightingPipeline without prompt
// weighting): the prompt and the negative prompt encoded as training encodes captions, the size
// conditioning of the image itself (original = target = the image's size, crop at 0, 0), and the
// UNet's denoising loop (sample/unet_denoise.h), decoded by the VAE.
#include <algorithm>

#include "models/unet/sdxl_size_conditioning.h"
#include "sample/unet_denoise.h"
#include "train/objectives/noise_schedule.h"
#include "train/sdxl/sdxl_family.h"

namespace sinter::train {

sample::ResolvedSample SdxlFamily::sampleDefaults() const {
  sample::ResolvedSample s;  // sd-scripts' sample_image_inference: 512x512, 30 steps, CFG 7.5
  s.steps = 30;
  s.scale = 7.5;
  s.samplerName = options_.sampleSampler;
  return s;
}

torch::Tensor SdxlFamily::renderSample(sample::ResolvedSample& s, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const HostParking::Visit encoders(parking_);
  models_.unet->eval();
  models_.clipL->eval();
  models_.bigG->eval();
  // sd-scripts rounds the size down to 8 px (the VAE's factor, min 64); the latents must also fit
  // the UNet's downsampling (4 times at full size), so the size is a multiple of both.
  const int64_t multiple = models_.vae->config().downscale() * (int64_t(1) << (models_.unet->config().channelMult.size() - 1));
  sample::fitSampleSize(s, multiple);
  const sample::DiffusionSamplerKind kind = sample::parseDiffusionSampler(s.samplerName);
  s.sampler = sample::displayName(kind);

  // [negative, prompt] with guidance, the prompt alone without (diffusers guides above 1).
  const bool guided = s.scale > 1.0;
  std::vector<std::string> texts;
  if (guided) texts.push_back(s.negativePrompt);
  texts.push_back(s.prompt);
  const models::SdxlTextConditioning text = encodeCaptions(texts);
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device_);
  const torch::Tensor size =
      torch::tensor({static_cast<int64_t>(s.height), static_cast<int64_t>(s.width)}, longs).repeat({static_cast<int64_t>(texts.size()), 1});
  const sample::UnetSampleConditioning conditioning{text.context, models::sdxlAdmVector(text.pooled, size, torch::zeros_like(size), size)};

  const torch::Tensor table = DdpmNoiseSchedule().alphasCumprod().to(torch::kFloat64).contiguous();
  sample::DiffusionSampler sampler(kind, s.steps, std::vector<double>(table.data_ptr<double>(), table.data_ptr<double>() + table.numel()),
                                   options_.step.loss.vPrediction);
  const int64_t down = models_.vae->config().downscale();
  const torch::Tensor noise = at::randn({1, models_.unet->config().inChannels, s.height / down, s.width / down}, generator,
                                        torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  const torch::Tensor latents =
      sample::unetDenoise(*models_.unet, sampler, noise * sampler.initNoiseSigma(), conditioning, s.scale, options_.step.computeDtype, generator);
  return models_.vae->decodeLatents(latents.to(models_.vae->parameters().front().scalar_type()));
}

}  // namespace sinter::train
