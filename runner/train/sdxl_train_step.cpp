#include "train/sdxl_train_step.h"

#include "train/device_info.h"

namespace sinter::train {

SdxlTrainStep::SdxlTrainStep(models::SdxlUnet unet, SdxlStepOptions options, torch::Device device, std::uint64_t seed)
    : unet_(std::move(unet)),
      options_(std::move(options)),
      device_(device),
      schedule_(NoiseScheduleOptions{}, device),
      generator_(makeGenerator(device, seed)) {}

StaticBuffers& SdxlTrainStep::buffersFor(const SdxlStepBatch& b) {
  const StepShape shape{b.latents.size(0), b.latents.size(2), b.latents.size(3), b.context.size(1)};
  return shapes_.buffers(shape, [&] {
    auto on = [&](const torch::Tensor& t, torch::Dtype dt) { return torch::empty(t.sizes(), t.options().device(device_).dtype(dt)); };
    return StaticBuffers{{"latents", on(b.latents, options_.computeDtype)},
                         {"context", on(b.context, options_.computeDtype)},
                         {"adm_vector", on(b.admVector, options_.computeDtype)},
                         {"loss_weights", on(b.lossWeights, torch::kFloat32)}};
  });
}

torch::Tensor SdxlTrainStep::loss(const SdxlStepBatch& batch) {
  StaticBuffers& in = buffersFor(batch);
  torch::Tensor& latents = in.at("latents");
  torch::Tensor& lossWeights = in.at("loss_weights");
  latents.copy_(batch.latents);
  lossWeights.copy_(batch.lossWeights);
  // Text conditioning that carries gradients (text encoder LoRA) must stay in the graph; only
  // inputs without gradients go through the static buffers.
  auto staged = [&](const torch::Tensor& value, torch::Tensor& buffer) {
    if (value.requires_grad()) return value.to(device_, options_.computeDtype);
    buffer.copy_(value);
    return buffer;
  };
  torch::Tensor context = staged(batch.context, in.at("context"));
  torch::Tensor admVector = staged(batch.admVector, in.at("adm_vector"));

  NoisedBatch noised = sampleNoisedBatch(schedule_, latents, options_.noise, generator_);
  torch::Tensor pred = unet_->forward(noised.noisyLatents, noised.timesteps, context, admVector);
  torch::Tensor target = options_.loss.vPrediction ? schedule_.velocity(latents, noised.noise, noised.timesteps) : noised.noise;
  return diffusionLoss(pred.to(torch::kFloat32), target.to(torch::kFloat32), noised.timesteps, lossWeights, schedule_,
                       options_.loss);
}

}  // namespace sinter::train
