#pragma once
// The DDPM noise schedule SDXL trains with (diffusers' DDPMScheduler as sd-scripts builds it:
// scaled_linear betas 0.00085..0.012 over 1000 steps), and the forward process on the device:
// timesteps and noise come from a torch::Generator on the latents' device, so a captured step
// draws fresh values on replay and nothing is read back to the host.
#include <torch/torch.h>

#include <optional>

namespace sinter::train {

struct NoiseScheduleOptions {
  int64_t numTrainTimesteps = 1000;
  double betaStart = 0.00085;
  double betaEnd = 0.012;
  bool zeroTerminalSnr = false;  // zero_terminal_snr (arXiv 2305.08891), as sd-scripts fixes the betas
};

class DdpmNoiseSchedule {
 public:
  explicit DdpmNoiseSchedule(NoiseScheduleOptions options = {}, torch::Device device = torch::kCPU);

  int64_t numTrainTimesteps() const { return options_.numTrainTimesteps; }
  const torch::Tensor& betas() const { return betas_; }                  // [T] float32
  const torch::Tensor& alphasCumprod() const { return alphasCumprod_; }  // [T] float32
  const torch::Tensor& snr() const { return snr_; }                      // alpha_bar / (1 - alpha_bar)

  // sqrt(a_t) x0 + sqrt(1 - a_t) noise, in the latents' dtype (diffusers' add_noise).
  torch::Tensor addNoise(const torch::Tensor& latents, const torch::Tensor& noise, const torch::Tensor& timesteps) const;
  // The v-prediction target: sqrt(a_t) noise - sqrt(1 - a_t) x0 (diffusers' get_velocity).
  torch::Tensor velocity(const torch::Tensor& latents, const torch::Tensor& noise, const torch::Tensor& timesteps) const;
  torch::Tensor snrAt(const torch::Tensor& timesteps) const;  // [B] float32

 private:
  torch::Tensor gatherBroadcast(const torch::Tensor& table, const torch::Tensor& timesteps, const torch::Tensor& like) const;
  NoiseScheduleOptions options_;
  torch::Tensor betas_, alphasCumprod_, sqrtAlphasCumprod_, sqrtOneMinusAlphasCumprod_, snr_;
};

// Noise options of sd-scripts' get_noise_noisy_latents_and_timesteps.
struct NoiseSamplingOptions {
  double noiseOffset = 0.0;             // noise_offset
  bool noiseOffsetRandomStrength = false;
  std::optional<double> adaptiveNoiseScale;
  double ipNoiseGamma = 0.0;            // ip_noise_gamma (input perturbation)
  bool ipNoiseGammaRandomStrength = false;
  int64_t multiresIterations = 0;       // multires_noise_iterations (0: off)
  double multiresDiscount = 0.3;        // multires_noise_discount
  std::optional<int64_t> minTimestep;   // min_timestep (default 0)
  std::optional<int64_t> maxTimestep;   // max_timestep (default T), exclusive as torch.randint
};

struct NoisedBatch {
  torch::Tensor noise;         // the noise the model learns to predict (with offset)
  torch::Tensor noisyLatents;
  torch::Tensor timesteps;     // [B] int64 on the latents' device
};

// sd-scripts' pyramid_noise_like: adds `iterations` levels of noise, level i drawn at the size
// divided by r^i (r uniform in [2, 4), one per level) and upsampled bilinearly, weighted
// discount^i, stopping after a level of side 1; then scales the sum to unit standard deviation.
// The level sizes change every step, so r is read back to the host (this noise is never captured).
torch::Tensor pyramidNoise(torch::Tensor noise, int64_t iterations, double discount, const at::Generator& generator);

// Draws noise and timesteps with `generator` (a generator of the latents' device) and noises the
// latents; no host synchronisation.
NoisedBatch sampleNoisedBatch(const DdpmNoiseSchedule& schedule, const torch::Tensor& latents,
                              const NoiseSamplingOptions& options, const at::Generator& generator);

}  // namespace sinter::train
