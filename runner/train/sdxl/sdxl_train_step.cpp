#include "train/sdxl/sdxl_train_step.h"

#include <stdexcept>

#include "train/base/device_info.h"

namespace sinter::train {
namespace {

// The staged loss mask, undefined when the step has none.
torch::Tensor maskOf(StaticBuffers& in) {
  const auto it = in.find("loss_mask");
  return it == in.end() ? torch::Tensor() : it->second;
}

}  // namespace

SdxlTrainStep::SdxlTrainStep(models::SdxlUnet unet, SdxlStepOptions options, torch::Device device, std::uint64_t seed)
    : unet_(std::move(unet)),
      options_(std::move(options)),
      device_(device),
      schedule_(options_.schedule, device),
      generator_(makeGenerator(device, seed)) {}

StepShape SdxlTrainStep::shapeOf(const SdxlStepBatch& b) {
  return StepShape{b.latents.size(0), b.latents.size(2), b.latents.size(3), b.context.size(1)};
}

StaticBuffers& SdxlTrainStep::buffers(const StepShape& s) {
  return shapes_.buffers(s, [&] {
    const models::SdxlUnetConfig& c = unet_->config();
    const auto inputs = torch::TensorOptions().device(device_).dtype(options_.computeDtype);
    StaticBuffers b{{"latents", torch::zeros({s.batch, c.inChannels, s.height, s.width}, inputs)},
                    {"context", torch::zeros({s.batch, s.tokens, c.contextDim}, inputs)},
                    {"adm_vector", torch::zeros({s.batch, c.admInChannels}, inputs)},
                    {"loss_weights", torch::ones({s.batch}, inputs.dtype(torch::kFloat32))}};
    if (options_.lossMasks) b["loss_mask"] = torch::ones({s.batch, 1, s.height, s.width}, inputs.dtype(torch::kFloat32));
    return b;
  });
}

void SdxlTrainStep::useLossMasks(bool on) {
  if (on != options_.lossMasks && shapes_.shapesWithBuffers() > 0)
    throw std::logic_error("SdxlTrainStep::useLossMasks: shapes are staged already");
  options_.lossMasks = on;
}

void SdxlTrainStep::stageLossMask(StaticBuffers& in, const SdxlStepBatch& batch) const {
  if (!options_.lossMasks) {
    if (batch.lossMask.defined()) throw std::logic_error("SdxlTrainStep: a batch with loss masks, but the step has none");
    return;
  }
  if (!batch.lossMask.defined()) throw std::logic_error("SdxlTrainStep: a batch without the loss masks the step expects");
  in.at("loss_mask").copy_(batch.lossMask);
}


torch::Tensor SdxlTrainStep::loss(const SdxlStepBatch& batch) {
  const bool conditioningTrains = batch.context.requires_grad() || batch.admVector.requires_grad();
  if (!conditioningTrains) return stagedLoss(stage(batch));
  // Text conditioning that carries gradients (text encoder LoRA) must stay in the autograd graph;
  // the rest goes through the static buffers.
  StaticBuffers& in = buffers(shapeOf(batch));
  in.at("latents").copy_(batch.latents);
  in.at("loss_weights").copy_(batch.lossWeights);
  stageLossMask(in, batch);
  return lossOf(in.at("latents"), batch.context.to(device_, options_.computeDtype), batch.admVector.to(device_, options_.computeDtype),
                in.at("loss_weights"), maskOf(in), options_.noise, generator_);
}

torch::Tensor SdxlTrainStep::validationLoss(const SdxlStepBatch& batch, int64_t timestep, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  // sd-scripts sets min_timestep = max_timestep = timestep: every sample at it, the rest of the
  // noise options as in training.
  NoiseSamplingOptions noise = options_.noise;
  noise.minTimestep = timestep;
  noise.maxTimestep = timestep;
  const torch::Tensor mask = options_.lossMasks ? batch.lossMask.to(device_, torch::kFloat32) : torch::Tensor();
  return lossOf(batch.latents.to(device_, options_.computeDtype), batch.context.to(device_, options_.computeDtype),
                batch.admVector.to(device_, options_.computeDtype), batch.lossWeights.to(device_, torch::kFloat32), mask, noise,
                generator);
}

StepShape SdxlTrainStep::stage(const SdxlStepBatch& batch) {
  if (batch.context.requires_grad() || batch.admVector.requires_grad())
    throw std::logic_error("SdxlTrainStep::stage: conditioning with gradients cannot be staged");
  const StepShape shape = shapeOf(batch);
  StaticBuffers& in = buffers(shape);
  in.at("latents").copy_(batch.latents);
  in.at("context").copy_(batch.context);
  in.at("adm_vector").copy_(batch.admVector);
  in.at("loss_weights").copy_(batch.lossWeights);
  stageLossMask(in, batch);
  return shape;
}

void SdxlTrainStep::stageNeutral(const StepShape& shape) {
  StaticBuffers& in = buffers(shape);
  for (const char* name : {"latents", "context", "adm_vector"}) in.at(name).zero_();
  in.at("loss_weights").fill_(1.0);
  if (options_.lossMasks) in.at("loss_mask").fill_(1.0);
}

torch::Tensor SdxlTrainStep::stagedLoss(const StepShape& shape) {
  StaticBuffers& in = buffers(shape);
  return lossOf(in.at("latents"), in.at("context"), in.at("adm_vector"), in.at("loss_weights"), maskOf(in), options_.noise,
                generator_);
}

torch::Tensor SdxlTrainStep::lossOf(const torch::Tensor& latents, const torch::Tensor& context, const torch::Tensor& admVector,
                                    const torch::Tensor& lossWeights, const torch::Tensor& lossMask, const NoiseSamplingOptions& noise,
                                    const at::Generator& generator) {
  NoisedBatch noised = sampleNoisedBatch(schedule_, latents, noise, generator);
  torch::Tensor pred = unet_->forward(noised.noisyLatents, noised.timesteps, context, admVector);
  torch::Tensor target = options_.loss.vPrediction ? schedule_.velocity(latents, noised.noise, noised.timesteps) : noised.noise;
  return diffusionLoss(pred.to(torch::kFloat32), target.to(torch::kFloat32), noised.timesteps, lossWeights, schedule_,
                       options_.loss, lossMask);
}

}  // namespace sinter::train
