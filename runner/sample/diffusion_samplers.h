#pragma once
// SDXL's sample samplers, as sd-scripts' get_my_scheduler builds them from diffusers (0.32) over the
// training schedule (scaled_linear betas 0.00085..0.012, 1000 steps): DDIM ("leading" timesteps,
// eta 0, x0 clipped to [-1, 1] because sd-scripts turns clip_sample on), Euler and Euler
// ancestral (k-diffusion sigmas sqrt((1 - a) / a) interpolated at "linspace" timesteps, then 0) and
// DPM-Solver++ 2M (midpoint, first order on the first and the last step, the last sigma 0).
// Each step is the update of its paper written on tensors; the schedule lives on the host.
#include <torch/torch.h>

#include <string>
#include <vector>

namespace sinter::sample {

enum class DiffusionSamplerKind { Ddim, Euler, EulerAncestral, DpmSolverPlusPlus };

// The sd-scripts names this build renders ("k_euler" is "euler", ...); the others sd-scripts
// accepts (pndm, lms, heun, dpm_2, dpm_2_a, dpmsolver, dpmsingle and their k_ forms) throw
// std::invalid_argument listing these.
DiffusionSamplerKind parseDiffusionSampler(const std::string& name);
const std::vector<std::string>& renderedSamplerNames();
// A1111's name for the sampler ("Euler a", "DPM++ 2M"), for the PNG's parameters text.
std::string displayName(DiffusionSamplerKind kind);

class DiffusionSampler {
 public:
  // `alphasCumprod`: the training schedule's cumulative alphas (1000 of them).
  DiffusionSampler(DiffusionSamplerKind kind, int steps, std::vector<double> alphasCumprod, bool vPrediction);

  int steps() const { return static_cast<int>(timesteps_.size()); }
  // The timestep the model is given at step i (fractional for the Euler samplers).
  double timestep(int i) const { return timesteps_.at(i); }
  // k-diffusion's sigma at step i (steps() + 1 of them, the last 0; DDIM's from its alphas).
  double sigma(int i) const { return sigmas_.at(i); }
  // Starting noise is drawn N(0, 1) and multiplied by this (diffusers' init_noise_sigma).
  double initNoiseSigma() const;
  // What the model sees of x at step i (the Euler samplers divide by sqrt(sigma^2 + 1)).
  torch::Tensor scaleModelInput(const torch::Tensor& x, int i) const;
  // x at step i and the model's output there (epsilon, or v with vPrediction) -> x at step i + 1.
  // Euler ancestral draws its fresh noise from `generator`. Steps must be taken in order.
  torch::Tensor step(const torch::Tensor& modelOutput, int i, const torch::Tensor& x, const at::Generator& generator);

 private:
  // The model's estimate of the clean latents at step i, in the sampler's parameterisation.
  torch::Tensor predictedX0(const torch::Tensor& modelOutput, int i, const torch::Tensor& x) const;

  DiffusionSamplerKind kind_;
  std::vector<double> alphasCumprod_;
  bool vPrediction_;
  std::vector<double> timesteps_, sigmas_;
  int ddimStride_ = 0;
  torch::Tensor previousX0_;  // DPM-Solver++ 2M: the last step's x0 estimate
};

}  // namespace sinter::sample
