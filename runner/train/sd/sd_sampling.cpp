// SD 1.x/2.x sample images (sd-scripts' StableDiffusionLongPromptWeightingPipeline without prompt
// weighting): the prompt and the negative prompt encoded as training encodes captions (clip_skip
// included), the UNet's denoising loop (sample/unet_denoise.h) and the VAE's decoder.
#include "sample/unet_denoise.h"
#include "train/objectives/noise_schedule.h"
#include "train/sd/sd_family.h"

namespace sinter::train {

sample::ResolvedSample SdFamily::sampleDefaults() const {
  sample::ResolvedSample s;  // sd-scripts' sample_image_inference: 512x512, 30 steps, CFG 7.5
  s.steps = 30;
  s.scale = 7.5;
  s.samplerName = options_.sampleSampler;
  return s;
}

torch::Tensor SdFamily::renderSample(sample::ResolvedSample& s, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const HostParking::Visit encoders(parking_);
  models_.unet->eval();
  models_.textEncoder().eval();
  const int64_t down = models_.vae->config().downscale();
  sample::fitSampleSize(s, down * (int64_t(1) << (models_.unet->config().channelMult.size() - 1)));
  const sample::DiffusionSamplerKind kind = sample::parseDiffusionSampler(s.samplerName);
  s.sampler = sample::displayName(kind);

  const bool guided = s.scale > 1.0;
  std::vector<std::string> texts;
  if (guided) texts.push_back(s.negativePrompt);
  texts.push_back(s.prompt);
  const sample::UnetSampleConditioning conditioning{encodeCaptions(texts), torch::Tensor()};

  const torch::Tensor table = DdpmNoiseSchedule().alphasCumprod().to(torch::kFloat64).contiguous();
  sample::DiffusionSampler sampler(kind, s.steps, std::vector<double>(table.data_ptr<double>(), table.data_ptr<double>() + table.numel()),
                                   options_.step.loss.vPrediction);
  const torch::Tensor noise = at::randn({1, models_.unet->config().inChannels, s.height / down, s.width / down}, generator,
                                        torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  const torch::Tensor latents = sample::unetDenoise(*models_.unet, sampler, noise * sampler.initNoiseSigma(), conditioning, s.scale,
                                                    options_.step.computeDtype, generator);
  return models_.vae->decodeLatents(latents.to(models_.vae->parameters().front().scalar_type()));
}

}  // namespace sinter::train
