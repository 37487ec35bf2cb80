#include "train/objectives/noise_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sinter::train {

namespace {

// sd-scripts' fix_noise_scheduler_betas_for_zero_terminal_snr.
torch::Tensor enforceZeroTerminalSnr(const torch::Tensor& betas) {
  torch::Tensor alphasBarSqrt = (1 - betas).cumprod(0).sqrt();
  const torch::Tensor first = alphasBarSqrt[0].clone();
  const torch::Tensor last = alphasBarSqrt[-1].clone();
  alphasBarSqrt = (alphasBarSqrt - last) * (first / (first - last));
  const torch::Tensor alphasBar = alphasBarSqrt.pow(2);
  const int64_t n = alphasBar.size(0);
  const torch::Tensor alphas = torch::cat({alphasBar.slice(0, 0, 1), alphasBar.slice(0, 1) / alphasBar.slice(0, 0, n - 1)});
  return 1 - alphas;
}

}  // namespace

DdpmNoiseSchedule::DdpmNoiseSchedule(NoiseScheduleOptions options, torch::Device device) : options_(options) {
  if (options_.numTrainTimesteps < 2) throw std::invalid_argument("the noise schedule needs at least 2 timesteps");
  // diffusers "scaled_linear": linspace of sqrt(beta) in float32, squared.
  torch::Tensor betas = torch::linspace(std::sqrt(options_.betaStart), std::sqrt(options_.betaEnd),
                                        options_.numTrainTimesteps, torch::kFloat32)
                            .pow(2);
  if (options_.zeroTerminalSnr) betas = enforceZeroTerminalSnr(betas);
  const torch::Tensor alphasCumprod = torch::cumprod(1.0 - betas, 0);
  betas_ = betas.to(device);
  alphasCumprod_ = alphasCumprod.to(device);
  sqrtAlphasCumprod_ = alphasCumprod.sqrt().to(device);
  sqrtOneMinusAlphasCumprod_ = (1.0 - alphasCumprod).sqrt().to(device);
  // sd-scripts' prepare_scheduler_for_custom_training: (alpha / sigma)^2.
  snr_ = (alphasCumprod.sqrt() / (1.0 - alphasCumprod).sqrt()).pow(2).to(device);
}

torch::Tensor DdpmNoiseSchedule::gatherBroadcast(const torch::Tensor& table, const torch::Tensor& timesteps,
                                                 const torch::Tensor& like) const {
  torch::Tensor v = table.to(like.device()).index_select(0, timesteps.to(like.device()).to(torch::kLong));
  std::vector<int64_t> shape(static_cast<size_t>(like.dim()), 1);
  shape[0] = v.size(0);
  return v.view(shape).to(like.scalar_type());
}

torch::Tensor DdpmNoiseSchedule::addNoise(const torch::Tensor& latents, const torch::Tensor& noise,
                                          const torch::Tensor& timesteps) const {
  return gatherBroadcast(sqrtAlphasCumprod_, timesteps, latents) * latents +
         gatherBroadcast(sqrtOneMinusAlphasCumprod_, timesteps, latents) * noise;
}

torch::Tensor DdpmNoiseSchedule::velocity(const torch::Tensor& latents, const torch::Tensor& noise,
                                          const torch::Tensor& timesteps) const {
  return gatherBroadcast(sqrtAlphasCumprod_, timesteps, latents) * noise -
         gatherBroadcast(sqrtOneMinusAlphasCumprod_, timesteps, latents) * latents;
}

torch::Tensor DdpmNoiseSchedule::snrAt(const torch::Tensor& timesteps) const {
  return snr_.to(timesteps.device()).index_select(0, timesteps.to(torch::kLong));
}

torch::Tensor pyramidNoise(torch::Tensor noise, int64_t iterations, double discount, const at::Generator& generator) {
  namespace F = torch::nn::functional;
  const int64_t height = noise.size(2), width = noise.size(3);
  const auto fopts = torch::TensorOptions().dtype(noise.scalar_type()).device(noise.device());
  // sd-scripts draws each r with Python's random.random(); here they come from the step's generator.
  const torch::Tensor r = (torch::rand({iterations}, generator, fopts.dtype(torch::kFloat64)) * 2 + 2).cpu();
  for (int64_t i = 0; i < iterations; ++i) {
    const double shrink = std::pow(r[i].item<double>(), static_cast<double>(i));
    const int64_t h = std::max<int64_t>(1, static_cast<int64_t>(height / shrink));
    const int64_t w = std::max<int64_t>(1, static_cast<int64_t>(width / shrink));
    const torch::Tensor level = torch::randn({noise.size(0), noise.size(1), h, w}, generator, fopts);
    noise = noise + F::interpolate(level, F::InterpolateFuncOptions()
                                              .size(std::vector<int64_t>{height, width})
                                              .mode(torch::kBilinear)
                                              .align_corners(false)) *
                        std::pow(discount, static_cast<double>(i));
    if (h == 1 || w == 1) break;
  }
  return noise / noise.std();
}

NoisedBatch sampleNoisedBatch(const DdpmNoiseSchedule& schedule, const torch::Tensor& latents,
                              const NoiseSamplingOptions& options, const at::Generator& generator) {
  const auto fopts = torch::TensorOptions().dtype(latents.scalar_type()).device(latents.device());
  const int64_t batch = latents.size(0);
  NoisedBatch out;
  out.noise = torch::randn(latents.sizes(), generator, fopts);
  if (options.noiseOffset != 0.0) {
    // sd-scripts' apply_noise_offset: a per-channel constant shift of the noise.
    torch::Tensor offset = torch::full({1}, options.noiseOffset, fopts.dtype(torch::kFloat32));
    if (options.noiseOffsetRandomStrength)
      offset = torch::rand({1}, generator, fopts.dtype(torch::kFloat32)) * options.noiseOffset;
    if (options.adaptiveNoiseScale) {
      const torch::Tensor latentMean = latents.mean({2, 3}, /*keepdim=*/true).abs().to(torch::kFloat32);
      offset = torch::clamp_min(offset + *options.adaptiveNoiseScale * latentMean, 0.0);
    }
    const torch::Tensor shift = torch::randn({batch, latents.size(1), 1, 1}, generator, fopts);
    out.noise = out.noise + (offset * shift.to(torch::kFloat32)).to(latents.scalar_type());
  }
  if (options.multiresIterations > 0)
    out.noise = pyramidNoise(out.noise, options.multiresIterations, options.multiresDiscount, generator);
  const int64_t minT = options.minTimestep.value_or(0);
  const int64_t maxT = options.maxTimestep.value_or(schedule.numTrainTimesteps());
  const auto lopts = torch::TensorOptions().dtype(torch::kLong).device(latents.device());
  out.timesteps = minT < maxT ? torch::randint(minT, maxT, {batch}, generator, lopts) : torch::full({batch}, maxT, lopts);
  torch::Tensor noiseForInput = out.noise;
  if (options.ipNoiseGamma != 0.0) {
    torch::Tensor strength = torch::full({1}, options.ipNoiseGamma, fopts);
    if (options.ipNoiseGammaRandomStrength) strength = torch::rand({1}, generator, fopts) * options.ipNoiseGamma;
    noiseForInput = out.noise + strength * torch::randn(latents.sizes(), generator, fopts);
  }
  out.noisyLatents = schedule.addNoise(latents, noiseForInput, out.timesteps);
  return out;
}

}  // namespace sinter::train
