#pragma once
// The training loss as sd-scripts' train_network.py computes it: conditional_loss per element
// (l2, l1, huber, smooth_l1), times the loss mask (masked_loss.h), mean over all but the batch,
// per-sample loss weights (prior loss weight), then min-SNR / v-pred scaling / debiased
// estimation, then the batch mean. All tensor math on the device.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "train/objectives/noise_schedule.h"

namespace sinter::train {

enum class LossType { L2, L1, Huber, SmoothL1 };
LossType parseLossType(const std::string& name);  // "l2", "l1", "huber", "smooth_l1"

enum class HuberSchedule { Constant, Exponential, Snr };
HuberSchedule parseHuberSchedule(const std::string& name);  // "constant", "exponential", "snr"

struct DiffusionLossOptions {
  LossType lossType = LossType::L2;
  HuberSchedule huberSchedule = HuberSchedule::Snr;  // sd-scripts' defaults
  double huberC = 0.1;
  double huberScale = 1.0;
  bool vPrediction = false;                 // v_parameterization
  std::optional<double> minSnrGamma;        // min_snr_gamma
  bool scaleVPredLossLikeNoisePred = false;
  std::optional<double> vPredLikeLoss;
  bool debiasedEstimation = false;
};

// sd-scripts' get_huber_threshold_if_needed: [B] threshold per sample (undefined for l1/l2).
torch::Tensor huberThreshold(const DiffusionLossOptions& options, const torch::Tensor& timesteps,
                             const DdpmNoiseSchedule& schedule);
// conditional_loss(..., reduction="none").
torch::Tensor elementwiseLoss(const torch::Tensor& pred, const torch::Tensor& target, LossType type,
                              const torch::Tensor& huberC);
// apply_snr_weight's factor: min(snr, gamma) / snr (epsilon) or / (snr + 1) (v-prediction).
torch::Tensor minSnrWeight(const torch::Tensor& timesteps, const DdpmNoiseSchedule& schedule, double gamma,
                           bool vPrediction);

// The scalar loss of one batch. `lossWeights` is [B] (1, or prior_loss_weight for reg images) or
// undefined for all ones; `lossMask` is [B, 1, h, w] at the prediction's size (masked_loss.h
// lossMaskAt) or undefined for none.
torch::Tensor diffusionLoss(const torch::Tensor& pred, const torch::Tensor& target, const torch::Tensor& timesteps,
                            const torch::Tensor& lossWeights, const DdpmNoiseSchedule& schedule,
                            const DiffusionLossOptions& options, const torch::Tensor& lossMask = {});

}  // namespace sinter::train
