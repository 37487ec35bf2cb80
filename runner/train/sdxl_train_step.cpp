#include "train/sdxl_train_step.h"

#include "train/device_info.h"
#include "train/grad_clip.h"

namespace sinter::train {

SdxlTrainStep::SdxlTrainStep(models::SdxlUnet unet, SdxlStepOptions options, torch::Device device, std::uint64_t seed)
    : unet_(std::move(unet)),
      options_(std::move(options)),
      device_(device),
      schedule_(NoiseScheduleOptions{}, device),
      generator_(makeGenerator(device, seed)) {
  if (options_.lossScaling) scaler_.emplace(device);
}

SdxlTrainStep::StaticInputs& SdxlTrainStep::buffersFor(const SdxlStepBatch& b) {
  auto key = std::make_tuple(b.latents.size(0), b.latents.size(2), b.latents.size(3), b.context.size(1));
  auto it = buffers_.find(key);
  if (it == buffers_.end()) {
    StaticInputs s;
    auto on = [&](const torch::Tensor& t, torch::Dtype dt) { return torch::empty(t.sizes(), t.options().device(device_).dtype(dt)); };
    s.latents = on(b.latents, options_.computeDtype);
    s.context = on(b.context, options_.computeDtype);
    s.admVector = on(b.admVector, options_.computeDtype);
    s.lossWeights = on(b.lossWeights, torch::kFloat32);
    it = buffers_.emplace(key, std::move(s)).first;
  }
  return it->second;
}

torch::Tensor SdxlTrainStep::forwardBackward(const SdxlStepBatch& batch, double lossDivisor) {
  StaticInputs& in = buffersFor(batch);
  in.latents.copy_(batch.latents);
  in.lossWeights.copy_(batch.lossWeights);
  // Text conditioning that carries gradients (text encoder LoRA) must stay in the graph; only
  // inputs without gradients go through the static buffers.
  auto staged = [&](const torch::Tensor& value, torch::Tensor& buffer) {
    if (value.requires_grad()) return value.to(device_, options_.computeDtype);
    buffer.copy_(value);
    return buffer;
  };
  torch::Tensor context = staged(batch.context, in.context);
  torch::Tensor admVector = staged(batch.admVector, in.admVector);

  NoisedBatch noised = sampleNoisedBatch(schedule_, in.latents, options_.noise, generator_);
  torch::Tensor pred = unet_->forward(noised.noisyLatents, noised.timesteps, context, admVector);
  torch::Tensor target = options_.loss.vPrediction ? schedule_.velocity(in.latents, noised.noise, noised.timesteps) : noised.noise;
  torch::Tensor loss = diffusionLoss(pred.to(torch::kFloat32), target.to(torch::kFloat32), noised.timesteps, in.lossWeights,
                                     schedule_, options_.loss);
  torch::Tensor scaled = loss / lossDivisor;
  if (scaler_) scaled = scaler_->scale(scaled);
  scaled.backward();
  return loss.detach();
}

void SdxlTrainStep::optimizerStep(AdamW& optimizer, const LrSchedule& schedule) {
  std::vector<torch::Tensor> params = optimizer.parameters();
  schedule.apply(optimizer);
  if (scaler_) {
    // fp16: unscale, and skip the update on the device when a gradient overflowed.
    torch::Tensor foundInf = scaler_->unscale(params);
    clipGradNorm(params, options_.maxGradNorm);
    optimizer.step(foundInf);
    scaler_->update(foundInf);
  } else {
    clipGradNorm(params, options_.maxGradNorm);
    optimizer.step();
  }
  optimizer.zeroGrad();
}

}  // namespace sinter::train
