#include "train/sd3/sd3_train_step.h"

#include <stdexcept>

#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/objectives/micro_batch_draws.h"

namespace sinter::train {

Sd3StepOptions Sd3StepOptions::fromConfig(const Config& config, torch::Dtype computeDtype) {
  Sd3StepOptions o;
  o.flow = FlowMatchingOptions::fromConfig(config);
  o.trainingShift = config.getDouble("training_shift");
  if (!isUnset(config.get("min_timestep"))) o.minTimestep = config.getInt("min_timestep");
  if (!isUnset(config.get("max_timestep"))) o.maxTimestep = config.getInt("max_timestep");
  o.posEmbRandomCropRate = config.getDouble("pos_emb_random_crop_rate");
  o.computeDtype = computeDtype;
  return o;
}

Sd3TrainStep::Sd3TrainStep(models::Sd3Mmdit mmdit, Sd3StepOptions options, torch::Device device, std::uint64_t seed)
    : mmdit_(std::move(mmdit)), options_(options), device_(device), generator_(makeGenerator(device, seed)) {}

torch::Tensor Sd3TrainStep::timestepsOf(const torch::Tensor& u, const Sd3StepOptions& o) {
  // u = (u * shift) / (1 + (shift - 1) * u); indices = (u * (t_max - t_min) + t_min).long()
  const double shift = o.trainingShift;
  const torch::Tensor shifted = (u * shift) / (1.0 + (shift - 1.0) * u);
  return (shifted * static_cast<double>(o.maxTimestep - o.minTimestep) + static_cast<double>(o.minTimestep))
      .to(torch::kLong)
      .to(torch::kFloat32);
}

torch::Tensor Sd3TrainStep::lossAt(const Sd3StepBatch& batch, const torch::Tensor& latents, const torch::Tensor& timestepsF32,
                                   const torch::Tensor& noise, const at::Generator& generator, bool randomCrop) {
  const torch::Dtype dtype = options_.computeDtype;
  // timesteps and sigmas in the weights' dtype, as sd-scripts makes them.
  const torch::Tensor timesteps = timestepsF32.to(device_, dtype);
  const torch::Tensor sigmas = (timesteps / static_cast<double>(kFlowTrainTimesteps)).view({-1, 1, 1, 1});
  const torch::Tensor noisy = sigmas * noise + (1.0 - sigmas) * latents;
  // pos_emb_random_crop_rate: the whole batch's crop drawn at random that often (MMDiT.forward).
  models::Sd3PosEmbedCrop crop;
  if (randomCrop && options_.posEmbRandomCropRate > 0.0 && batch.microBatches > 1)
    throw std::logic_error("Sd3TrainStep: pos_emb_random_crop_rate crops a whole batch; joined micro-batches cannot share one crop");
  if (randomCrop && options_.posEmbRandomCropRate > 0.0 &&
      at::rand({1}, generator, torch::TensorOptions().device(device_)).item<double>() < options_.posEmbRandomCropRate) {
    const int64_t p = mmdit_->config().patchSize, h = latents.size(2) / p, w = latents.size(3) / p;
    const int64_t max = mmdit_->posTableSide(h, w);  // the stored table, or enable_scaled_pos_embed's for this size
    const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device_);
    crop.top = at::randint(0, max - h + 1, {1}, generator, longs).item<int64_t>();
    crop.left = at::randint(0, max - w + 1, {1}, generator, longs).item<int64_t>();
  }
  const torch::Tensor output = mmdit_(noisy, timesteps, batch.pooled.to(device_, dtype), batch.context.to(device_, dtype), crop);
  // Preconditioning (EDM section 5): x_t - sigma * output, compared with x0.
  FlowPrediction prediction{output * (-sigmas) + noisy, flowLossWeighting(options_.flow.weightingScheme, sigmas.flatten())};
  return flowMatchingLoss(options_.flow, prediction, latents, sigmas.flatten(), batch.lossWeights,
                          batch.lossMask.defined() ? batch.lossMask.to(device_) : torch::Tensor());
}

torch::Tensor Sd3TrainStep::loss(const Sd3StepBatch& batch) {
  const torch::Tensor latents = batch.latents.to(device_, options_.computeDtype);
  // Joined micro-batches: each draws its timesteps and noise as its own pass would.
  const std::vector<torch::Tensor> drawn = drawPerMicroBatch(batch.microBatches, {latents}, [&](const std::vector<torch::Tensor>& part) {
    const torch::Tensor u = sampleTimestepDensity(options_.flow, part[0].size(0), generator_, device_);
    return std::vector<torch::Tensor>{u, at::randn(part[0].sizes(), generator_, part[0].options())};
  });
  return lossAt(batch, latents, timestepsOf(drawn[0], options_), drawn[1], generator_, /*randomCrop=*/true);
}

torch::Tensor Sd3TrainStep::validationLoss(const Sd3StepBatch& batch, double sigma, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  const torch::Tensor timesteps =
      torch::full({batch.latents.size(0)}, sigma * kFlowTrainTimesteps, torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  const torch::Tensor latents = batch.latents.to(device_, options_.computeDtype);
  return lossAt(batch, latents, timesteps, at::randn(latents.sizes(), generator, latents.options()), generator, /*randomCrop=*/false);
}

}  // namespace sinter::train
