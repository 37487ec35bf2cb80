#pragma once
// FLUX's training objective as sd-scripts' flux_train_network.py computes it (flux_train_utils'
// get_noisy_model_input_and_timesteps and apply_model_prediction_type): a noise level sigma in
// [0, 1] per sample, x_t = (1 - sigma) x0 + sigma noise, the model asked for the velocity
// noise - x0, and the loss weighted per sigma. All tensor math on the device, drawn from a
// generator of that device, so a captured step draws fresh values on replay.
#include <torch/torch.h>

#include <string>

#include "core/config.h"
#include "train/objectives/diffusion_loss.h"

namespace sinter::train {

enum class TimestepSampling { Sigma, Uniform, Sigmoid, Shift, FluxShift };
enum class ModelPredictionType { Raw, Additive, SigmaScaled };
enum class WeightingScheme { Uniform, LogitNormal, Mode, SigmaSqrt, Cosmap };

// Names as sd-scripts' arguments spell them; std::invalid_argument naming the key otherwise.
TimestepSampling parseTimestepSampling(const std::string& name);
ModelPredictionType parseModelPredictionType(const std::string& name);
WeightingScheme parseWeightingScheme(const std::string& name);  // "none" is "uniform", as there

struct FlowMatchingOptions {
  TimestepSampling timestepSampling = TimestepSampling::Sigma;  // sd-scripts' defaults
  double sigmoidScale = 1.0;
  double discreteFlowShift = 3.0;
  ModelPredictionType modelPredictionType = ModelPredictionType::SigmaScaled;
  WeightingScheme weightingScheme = WeightingScheme::Uniform;
  double logitMean = 0.0, logitStd = 1.0, modeScale = 1.29;
  LossType lossType = LossType::L2;
  HuberSchedule huberSchedule = HuberSchedule::Snr;
  double huberC = 0.1, huberScale = 1.0;
  double ipNoiseGamma = 0.0;               // ip_noise_gamma (input perturbation)
  bool ipNoiseGammaRandomStrength = false;  // ip_noise_gamma_random_strength

  // From the run's options (timestep_sampling, sigmoid_scale, discrete_flow_shift,
  // model_prediction_type, weighting_scheme, logit_mean, logit_std, mode_scale, loss_type,
  // huber_schedule, huber_c, huber_scale, ip_noise_gamma, ip_noise_gamma_random_strength). Throws std::invalid_argument for huber_schedule "snr"
  // with a Huber loss: it is defined by a DDPM schedule, which flow matching has not.
  static FlowMatchingOptions fromConfig(const Config& config);
};

constexpr int64_t kFlowTrainTimesteps = 1000;

// sd-scripts' FlowMatchEulerDiscreteScheduler(1000, shift).sigmas: t = 1000..1 over 1000, then
// shift * s / (1 + (shift - 1) * s); descending, float32.
torch::Tensor shiftedSigmaTable(double shift, torch::Device device = torch::kCPU);

// FLUX's resolution-dependent shift: mu, linear from 0.5 at 256 packed tokens to 1.15 at 4096.
double fluxShiftMu(int64_t latentHeight, int64_t latentWidth);
// e^mu / (e^mu + (1 / t - 1)), BFL's time_shift with sigma 1.
torch::Tensor timeShift(double mu, const torch::Tensor& t);

// The density sd-scripts draws u in [0, 1) from for timestep_sampling "sigma" (its
// compute_density_for_timestep_sampling).
torch::Tensor sampleTimestepDensity(const FlowMatchingOptions& options, int64_t batch, const at::Generator& generator,
                                    torch::Device device);

// [B] float32 sigmas for a batch of latents [B, C, H, W] (H, W: the unpacked latent size, which
// flux_shift depends on).
torch::Tensor sampleFlowSigmas(const FlowMatchingOptions& options, int64_t batch, int64_t latentHeight, int64_t latentWidth,
                               const at::Generator& generator, torch::Device device,
                               const torch::Tensor& sigmaTable = torch::Tensor());

// (1 - sigma) x0 + sigma noise, computed in float32 and returned in `dtype`.
// The noise that goes into x_t: `noise` itself, or with ip_noise_gamma noise + gamma * xi (gamma
// drawn in [0, ip_noise_gamma) per step with the random strength), as flux_train_utils'
// get_noisy_model_input_and_timesteps perturbs the input; the target stays noise - x0.
torch::Tensor flowInputNoise(const FlowMatchingOptions& options, const torch::Tensor& noise, const at::Generator& generator);

torch::Tensor flowNoisyLatents(const torch::Tensor& latents, const torch::Tensor& noise, const torch::Tensor& sigmas,
                               torch::ScalarType dtype);

// The timestep the model is given: sigma * 1000 rounded to the weights' dtype (as sd-scripts
// passes timesteps.to(dtype)), over 1000. [B] in `dtype`.
torch::Tensor flowModelTimesteps(const torch::Tensor& sigmas, torch::ScalarType dtype);

// compute_loss_weighting_for_sd3: sigma^-2 (sigma_sqrt), 2 / (pi (1 - 2 sigma + 2 sigma^2))
// (cosmap), else ones. [B] float32.
torch::Tensor flowLossWeighting(WeightingScheme scheme, const torch::Tensor& sigmas);

struct FlowPrediction {
  torch::Tensor prediction;  // compared with noise - x0
  torch::Tensor weighting;   // [B] or undefined (no weighting)
};

// raw: the model's output; additive: output + x_t; sigma_scaled: x_t - sigma * output, with the
// weighting scheme's loss weighting.
FlowPrediction applyModelPredictionType(const FlowMatchingOptions& options, const torch::Tensor& modelOutput,
                                        const torch::Tensor& noisyLatents, const torch::Tensor& sigmas);

// The scalar loss: conditional_loss per element against noise - x0, times the weighting, times
// the loss mask ([B, 1, h, w] from masked_loss.h lossMaskAt; undefined: none), mean over all but
// the batch, times the per-sample `lossWeights` (undefined: ones), batch mean.
torch::Tensor flowMatchingLoss(const FlowMatchingOptions& options, const FlowPrediction& prediction,
                               const torch::Tensor& target, const torch::Tensor& sigmas, const torch::Tensor& lossWeights,
                               const torch::Tensor& lossMask = {});

}  // namespace sinter::train
