#include "train/sd3/sd3_sampling.h"

#include <torch/torch.h>

#include "train/sd3/sd3_family.h"

namespace sinter::train {

std::vector<double> sd3SampleSigmas(int steps, double shift) {
  auto sigma = [shift](double timestep) {
    const double t = timestep / 1000.0;
    return shift == 1.0 ? t : shift * t / (1.0 + (shift - 1.0) * t);
  };
  // The table's sigmas are sigma(1..1000): sigma_max = sigma(1000), sigma_min = sigma(1).
  const double start = sigma(1000.0) * 1000.0, end = sigma(1.0) * 1000.0;
  std::vector<double> sigmas;
  const torch::Tensor timesteps = torch::linspace(start, end, steps, torch::kFloat32);
  for (int64_t i = 0; i < timesteps.numel(); ++i) sigmas.push_back(sigma(timesteps[i].item<double>()));
  sigmas.push_back(0.0);
  return sigmas;
}

sample::ResolvedSample Sd3Family::sampleDefaults() const {
  sample::ResolvedSample s;  // sample_image_inference: 512x512, 30 steps, scale 7.5
  s.steps = 30;
  s.scale = 7.5;
  s.samplerName = "euler";
  return s;
}

torch::Tensor Sd3Family::renderSample(sample::ResolvedSample& s, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const HostParking::Visit parked(parking_);  // the text encoders whose outputs were cached
  models_.mmdit->eval();
  models_.clipL->eval();
  models_.clipG->eval();
  models_.t5->eval();
  // sd-scripts rounds down to 8 px; the MMDiT's 2x2 patches of 8x latents need 16.
  const int64_t down = models_.vae->config().downscale(), multiple = down * models_.mmdit->config().patchSize;
  sample::fitSampleSize(s, multiple);
  s.sampler = "Euler";
  const bool guided = s.scale != 1.0;
  std::vector<std::string> texts{s.prompt};
  if (guided) texts.push_back(s.negativePrompt);  // [cond, neg_cond], as do_sample cats them
  const data::TokenIds ids = tokenize(texts);
  const ClipOutputs clips = encodeClips(ids, false);
  const torch::Tensor ctx = context(clips.lgOut, encodeT5(ids, false));
  const torch::Dtype dtype = options_.step.computeDtype;
  const torch::Tensor y = clips.lgPooled.to(dtype), c = ctx.to(dtype);

  const int64_t h = s.height / down, w = s.width / down;
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  const std::vector<double> sigmas = sd3SampleSigmas(s.steps);
  torch::Tensor x = at::randn({1, models_.mmdit->config().inChannels, h, w}, generator, f32) * sigmas.front();
  const int64_t b = static_cast<int64_t>(texts.size());
  for (size_t i = 0; i + 1 < sigmas.size(); ++i) {
    const double sigma = sigmas[i];
    const torch::Tensor t = torch::full({b}, sigma * 1000.0, f32);
    const torch::Tensor in = (b == 2 ? torch::cat({x, x}) : x).to(dtype);
    const torch::Tensor out = models_.mmdit->forward(in, t, y, c).to(torch::kFloat32);
    torch::Tensor denoised = x - out * sigma;  // calculate_denoised on each half
    if (b == 2) {
      const auto halves = denoised.chunk(2);
      denoised = halves[1] + (halves[0] - halves[1]) * s.scale;
    }
    const torch::Tensor d = (x - denoised) / sigma;
    x = (x + d * (sigmas[i + 1] - sigma)).to(dtype).to(torch::kFloat32);
  }
  return models_.vae->decodeLatents(x.to(models_.vae->parameters().front().scalar_type()));
}

}  // namespace sinter::train
