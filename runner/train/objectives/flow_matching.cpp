#include "train/objectives/flow_matching.h"

#include <cmath>
#include <stdexcept>

#include "train/base/config_values.h"
#include "train/objectives/masked_loss.h"

namespace sinter::train {

TimestepSampling parseTimestepSampling(const std::string& name) {
  if (name == "sigma") return TimestepSampling::Sigma;
  if (name == "uniform") return TimestepSampling::Uniform;
  if (name == "sigmoid") return TimestepSampling::Sigmoid;
  if (name == "shift") return TimestepSampling::Shift;
  if (name == "flux_shift") return TimestepSampling::FluxShift;
  throw std::invalid_argument("timestep_sampling '" + name + "' is not one of sigma, uniform, sigmoid, shift, flux_shift");
}

ModelPredictionType parseModelPredictionType(const std::string& name) {
  if (name == "raw") return ModelPredictionType::Raw;
  if (name == "additive") return ModelPredictionType::Additive;
  if (name == "sigma_scaled") return ModelPredictionType::SigmaScaled;
  throw std::invalid_argument("model_prediction_type '" + name + "' is not one of raw, additive, sigma_scaled");
}

WeightingScheme parseWeightingScheme(const std::string& name) {
  if (name == "uniform" || name == "none") return WeightingScheme::Uniform;
  if (name == "logit_normal") return WeightingScheme::LogitNormal;
  if (name == "mode") return WeightingScheme::Mode;
  if (name == "sigma_sqrt") return WeightingScheme::SigmaSqrt;
  if (name == "cosmap") return WeightingScheme::Cosmap;
  throw std::invalid_argument("weighting_scheme '" + name +
                              "' is not one of uniform, none, logit_normal, mode, sigma_sqrt, cosmap");
}

FlowMatchingOptions FlowMatchingOptions::fromConfig(const Config& config) {
  FlowMatchingOptions o;
  o.timestepSampling = parseTimestepSampling(config.getString("timestep_sampling"));
  o.sigmoidScale = config.getDouble("sigmoid_scale");
  o.discreteFlowShift = config.getDouble("discrete_flow_shift");
  o.modelPredictionType = parseModelPredictionType(config.getString("model_prediction_type"));
  o.weightingScheme = parseWeightingScheme(config.getString("weighting_scheme"));
  o.logitMean = config.getDouble("logit_mean");
  o.logitStd = config.getDouble("logit_std");
  o.modeScale = config.getDouble("mode_scale");
  o.lossType = parseLossType(config.getString("loss_type"));
  o.huberSchedule = parseHuberSchedule(config.getString("huber_schedule"));
  o.huberC = config.getDouble("huber_c");
  o.huberScale = config.getDouble("huber_scale");
  o.ipNoiseGamma = optionalDouble(config, "ip_noise_gamma").value_or(0.0);
  o.ipNoiseGammaRandomStrength = config.getBool("ip_noise_gamma_random_strength");
  if ((o.lossType == LossType::Huber || o.lossType == LossType::SmoothL1) && o.huberSchedule == HuberSchedule::Snr)
    throw std::invalid_argument(
        "huber_schedule 'snr' is defined by a DDPM noise schedule, which FLUX's flow matching has not; use 'constant' or "
        "'exponential'");
  return o;
}

torch::Tensor shiftedSigmaTable(double shift, torch::Device device) {
  const torch::Tensor t = torch::linspace(static_cast<double>(kFlowTrainTimesteps), 1.0, kFlowTrainTimesteps,
                                          torch::TensorOptions().dtype(torch::kFloat32));
  const torch::Tensor s = t / static_cast<double>(kFlowTrainTimesteps);
  return (shift * s / (1.0 + (shift - 1.0) * s)).to(device);
}

double fluxShiftMu(int64_t latentHeight, int64_t latentWidth) {
  const double tokens = static_cast<double>((latentHeight / 2) * (latentWidth / 2));
  const double slope = (1.15 - 0.5) / (4096.0 - 256.0);
  return slope * tokens + (0.5 - slope * 256.0);
}

torch::Tensor timeShift(double mu, const torch::Tensor& t) {
  return std::exp(mu) / (std::exp(mu) + (1.0 / t - 1.0));
}

torch::Tensor sampleTimestepDensity(const FlowMatchingOptions& options, int64_t batch, const at::Generator& generator,
                                    torch::Device device) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  switch (options.weightingScheme) {
    case WeightingScheme::LogitNormal:
      return torch::sigmoid(at::normal(options.logitMean, options.logitStd, {batch}, generator, f32));
    case WeightingScheme::Mode: {
      const torch::Tensor u = at::rand({batch}, generator, f32);
      return 1.0 - u - options.modeScale * (torch::cos(M_PI * u / 2.0).pow(2) - 1.0 + u);
    }
    default: return at::rand({batch}, generator, f32);
  }
}

torch::Tensor sampleFlowSigmas(const FlowMatchingOptions& options, int64_t batch, int64_t latentHeight, int64_t latentWidth,
                               const at::Generator& generator, torch::Device device, const torch::Tensor& sigmaTable) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  switch (options.timestepSampling) {
    case TimestepSampling::Uniform: return at::rand({batch}, generator, f32);
    case TimestepSampling::Sigmoid:
      return torch::sigmoid(options.sigmoidScale * at::randn({batch}, generator, f32));
    case TimestepSampling::Shift: {
      const double shift = options.discreteFlowShift;
      const torch::Tensor s = torch::sigmoid(options.sigmoidScale * at::randn({batch}, generator, f32));
      return s * shift / (1.0 + (shift - 1.0) * s);
    }
    case TimestepSampling::FluxShift: {
      const torch::Tensor s = torch::sigmoid(options.sigmoidScale * at::randn({batch}, generator, f32));
      return timeShift(fluxShiftMu(latentHeight, latentWidth), s);
    }
    case TimestepSampling::Sigma:
    default: {
      // An index into the shifted schedule's 1000 sigmas, as sd-scripts picks
      // noise_scheduler.timesteps[(u * 1000).long()] and reads its sigma back.
      const torch::Tensor table = sigmaTable.defined() ? sigmaTable : shiftedSigmaTable(options.discreteFlowShift, device);
      const torch::Tensor u = sampleTimestepDensity(options, batch, generator, device);
      const torch::Tensor indices = (u * static_cast<double>(kFlowTrainTimesteps)).to(torch::kLong).clamp(0, kFlowTrainTimesteps - 1);
      return table.index_select(0, indices);
    }
  }
}

namespace {

torch::Tensor perSample(const torch::Tensor& sigmas, const torch::Tensor& like) {
  std::vector<int64_t> shape(like.dim(), 1);
  shape[0] = sigmas.size(0);
  return sigmas.view(shape);
}

}  // namespace

torch::Tensor flowInputNoise(const FlowMatchingOptions& options, const torch::Tensor& noise, const at::Generator& generator) {
  if (options.ipNoiseGamma == 0.0) return noise;
  const torch::Tensor xi = at::randn(noise.sizes(), generator, noise.options());
  if (!options.ipNoiseGammaRandomStrength) return noise + options.ipNoiseGamma * xi;
  return noise + at::rand({1}, generator, noise.options()) * options.ipNoiseGamma * xi;
}

torch::Tensor flowNoisyLatents(const torch::Tensor& latents, const torch::Tensor& noise, const torch::Tensor& sigmas,
                               torch::ScalarType dtype) {
  const torch::Tensor s = perSample(sigmas.to(torch::kFloat32), latents);
  return ((1.0 - s) * latents.to(torch::kFloat32) + s * noise.to(torch::kFloat32)).to(dtype);
}

torch::Tensor flowModelTimesteps(const torch::Tensor& sigmas, torch::ScalarType dtype) {
  return (sigmas * static_cast<double>(kFlowTrainTimesteps)).to(dtype) / static_cast<double>(kFlowTrainTimesteps);
}

torch::Tensor flowLossWeighting(WeightingScheme scheme, const torch::Tensor& sigmas) {
  const torch::Tensor s = sigmas.to(torch::kFloat32);
  switch (scheme) {
    case WeightingScheme::SigmaSqrt: return s.pow(-2.0);
    case WeightingScheme::Cosmap: return 2.0 / (M_PI * (1.0 - 2.0 * s + 2.0 * s.pow(2)));
    default: return torch::ones_like(s);
  }
}

FlowPrediction applyModelPredictionType(const FlowMatchingOptions& options, const torch::Tensor& modelOutput,
                                        const torch::Tensor& noisyLatents, const torch::Tensor& sigmas) {
  switch (options.modelPredictionType) {
    case ModelPredictionType::Raw: return {modelOutput, {}};
    case ModelPredictionType::Additive: return {modelOutput + noisyLatents, {}};
    case ModelPredictionType::SigmaScaled:
    default: {
      const torch::Tensor s = perSample(sigmas, modelOutput);
      return {modelOutput * (-s) + noisyLatents, flowLossWeighting(options.weightingScheme, sigmas)};
    }
  }
}

torch::Tensor flowMatchingLoss(const FlowMatchingOptions& options, const FlowPrediction& prediction,
                               const torch::Tensor& target, const torch::Tensor& sigmas, const torch::Tensor& lossWeights,
                               const torch::Tensor& lossMask) {
  torch::Tensor huberC;
  if (options.lossType == LossType::Huber || options.lossType == LossType::SmoothL1) {
    // sd-scripts' get_huber_threshold_if_needed on the timesteps sigma * 1000.
    const torch::Tensor timesteps = sigmas.to(torch::kFloat32) * static_cast<double>(kFlowTrainTimesteps);
    if (options.huberSchedule == HuberSchedule::Exponential) {
      const double alpha = -std::log(options.huberC) / static_cast<double>(kFlowTrainTimesteps);
      huberC = torch::exp(-alpha * timesteps) * options.huberScale;
    } else {
      huberC = torch::full_like(timesteps, options.huberC * options.huberScale);
    }
  }
  torch::Tensor loss =
      elementwiseLoss(prediction.prediction.to(torch::kFloat32), target.to(torch::kFloat32), options.lossType, huberC);
  if (prediction.weighting.defined()) loss = loss * perSample(prediction.weighting.to(torch::kFloat32), loss);
  loss = applyLossMask(loss, lossMask);
  std::vector<int64_t> dims;
  for (int64_t d = 1; d < loss.dim(); ++d) dims.push_back(d);
  if (!dims.empty()) loss = loss.mean(dims);
  if (lossWeights.defined()) loss = loss * lossWeights.to(loss.device(), torch::kFloat32);
  return loss.mean();
}

}  // namespace sinter::train
