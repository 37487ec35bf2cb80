#include "train/objectives/diffusion_loss.h"

#include <cmath>
#include <stdexcept>

#include "train/objectives/masked_loss.h"

namespace sinter::train {

LossType parseLossType(const std::string& name) {
  if (name == "l2") return LossType::L2;
  if (name == "l1") return LossType::L1;
  if (name == "huber") return LossType::Huber;
  if (name == "smooth_l1") return LossType::SmoothL1;
  throw std::invalid_argument("loss_type '" + name + "' is not one of l2, l1, huber, smooth_l1");
}

HuberSchedule parseHuberSchedule(const std::string& name) {
  if (name == "constant") return HuberSchedule::Constant;
  if (name == "exponential") return HuberSchedule::Exponential;
  if (name == "snr") return HuberSchedule::Snr;
  throw std::invalid_argument("huber_schedule '" + name + "' is not one of constant, exponential, snr");
}

torch::Tensor huberThreshold(const DiffusionLossOptions& options, const torch::Tensor& timesteps,
                             const DdpmNoiseSchedule& schedule) {
  if (options.lossType != LossType::Huber && options.lossType != LossType::SmoothL1) return {};
  const auto fopts = torch::TensorOptions().dtype(torch::kFloat32).device(timesteps.device());
  switch (options.huberSchedule) {
    case HuberSchedule::Exponential: {
      const double alpha = -std::log(options.huberC) / static_cast<double>(schedule.numTrainTimesteps());
      return torch::exp(-alpha * timesteps.to(torch::kFloat32)) * options.huberScale;
    }
    case HuberSchedule::Snr: {
      const torch::Tensor ac = schedule.alphasCumprod().to(timesteps.device()).index_select(0, timesteps.to(torch::kLong));
      const torch::Tensor sigmas = ((1.0 - ac) / ac).sqrt();
      return (1.0 - options.huberC) / (1.0 + sigmas).pow(2) + options.huberC;
    }
    case HuberSchedule::Constant:
    default: return torch::full({timesteps.size(0)}, options.huberC * options.huberScale, fopts);
  }
}

torch::Tensor elementwiseLoss(const torch::Tensor& pred, const torch::Tensor& target, LossType type,
                              const torch::Tensor& huberC) {
  switch (type) {
    case LossType::L2: return (pred - target).pow(2);
    case LossType::L1: return (pred - target).abs();
    case LossType::Huber:
    case LossType::SmoothL1: {
      if (!huberC.defined()) throw std::invalid_argument("huber/smooth_l1 loss needs a threshold");
      std::vector<int64_t> shape(static_cast<size_t>(pred.dim()), 1);
      shape[0] = -1;
      const torch::Tensor c = huberC.view(shape).to(pred.scalar_type());
      const torch::Tensor core = torch::sqrt((pred - target).pow(2) + c.pow(2)) - c;
      return type == LossType::Huber ? 2 * c * core : 2 * core;
    }
  }
  return {};
}

torch::Tensor minSnrWeight(const torch::Tensor& timesteps, const DdpmNoiseSchedule& schedule, double gamma,
                           bool vPrediction) {
  const torch::Tensor snr = schedule.snrAt(timesteps);
  const torch::Tensor clipped = torch::clamp_max(snr, gamma);
  return vPrediction ? clipped / (snr + 1) : clipped / snr;
}

namespace {

// get_snr_scale: snr / (snr + 1), snr capped at 1000 (t = 0 would be near-infinite).
torch::Tensor snrScale(const torch::Tensor& timesteps, const DdpmNoiseSchedule& schedule) {
  const torch::Tensor snr = torch::clamp_max(schedule.snrAt(timesteps), 1000.0);
  return snr / (snr + 1);
}

}  // namespace

torch::Tensor diffusionLoss(const torch::Tensor& pred, const torch::Tensor& target, const torch::Tensor& timesteps,
                            const torch::Tensor& lossWeights, const DdpmNoiseSchedule& schedule,
                            const DiffusionLossOptions& options, const torch::Tensor& lossMask) {
  const torch::Tensor huberC = huberThreshold(options, timesteps, schedule);
  torch::Tensor loss = elementwiseLoss(pred.to(torch::kFloat32), target.to(torch::kFloat32), options.lossType, huberC);
  loss = applyLossMask(loss, lossMask);
  std::vector<int64_t> dims;
  for (int64_t d = 1; d < loss.dim(); ++d) dims.push_back(d);
  if (!dims.empty()) loss = loss.mean(dims);
  if (lossWeights.defined()) loss = loss * lossWeights.to(loss.device(), torch::kFloat32);
  if (options.minSnrGamma && *options.minSnrGamma > 0.0)
    loss = loss * minSnrWeight(timesteps, schedule, *options.minSnrGamma, options.vPrediction);
  if (options.scaleVPredLossLikeNoisePred) loss = loss * snrScale(timesteps, schedule);
  if (options.vPredLikeLoss && *options.vPredLikeLoss != 0.0)
    loss = loss + loss / snrScale(timesteps, schedule) * *options.vPredLikeLoss;
  if (options.debiasedEstimation) {
    const torch::Tensor snr = torch::clamp_max(schedule.snrAt(timesteps), 1000.0);
    loss = loss * (options.vPrediction ? 1.0 / (snr + 1) : 1.0 / snr.sqrt());
  }
  return loss.mean();
}

}  // namespace sinter::train
