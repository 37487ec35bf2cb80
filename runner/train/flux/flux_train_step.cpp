#include "train/flux/flux_train_step.h"

#include <stdexcept>

#include "models/flux/flux_latents.h"
#include "train/base/device_info.h"
#include "train/objectives/micro_batch_draws.h"

namespace sinter::train {

FluxTrainStep::FluxTrainStep(models::FluxTransformer transformer, FluxStepOptions options, torch::Device device,
                             std::uint64_t seed)
    : transformer_(std::move(transformer)),
      options_(std::move(options)),
      device_(device),
      generator_(makeGenerator(device, seed)),
      sigmaTable_(shiftedSigmaTable(options_.flow.discreteFlowShift, device)) {}

StepShape FluxTrainStep::shapeOf(const FluxStepBatch& b) const {
  return StepShape{b.latents.size(0), b.latents.size(2), b.latents.size(3), b.t5.defined() ? b.t5.size(1) : b.t5Tokens, b.microBatches};
}

StaticBuffers& FluxTrainStep::buffers(const StepShape& s) {
  return shapes_.buffers(s, [&] {
    const models::FluxConfig& c = transformer_->config();
    const auto inputs = torch::TensorOptions().device(device_).dtype(options_.computeDtype);
    const auto f32 = inputs.dtype(torch::kFloat32);
    // The position ids and the guidance depend on the shape only: made here, once, so that the
    // step itself copies nothing from the host.
    StaticBuffers b{{"latents", torch::zeros({s.batch, c.inChannels / 4, s.height, s.width}, inputs)},
                    {"t5", torch::zeros({s.batch, s.tokens, c.contextInDim}, inputs)},
                    {"t5_mask", torch::ones({s.batch, s.tokens}, f32)},
                    {"pooled", torch::zeros({s.batch, c.vecInDim}, inputs)},
                    {"loss_weights", torch::ones({s.batch}, f32)},
                    {"img_ids", models::fluxImageIds(s.batch, s.height / 2, s.width / 2, f32)},
                    {"txt_ids", models::fluxTextIds(s.batch, s.tokens, f32)}};
    if (c.guidanceEmbed) b["guidance"] = torch::full({s.batch}, options_.guidanceScale, f32);
    if (options_.lossMasks) b["loss_mask"] = torch::ones({s.batch, 1, s.height, s.width}, f32);
    if (text_)
      for (auto& [name, buffer] : text_->makeInputs(s)) b[name] = buffer.to(device_);
    return b;
  });
}

void FluxTrainStep::useLossMasks(bool on) {
  if (on != options_.lossMasks && shapes_.shapesWithBuffers() > 0)
    throw std::logic_error("FluxTrainStep::useLossMasks: shapes are staged already");
  options_.lossMasks = on;
}

void FluxTrainStep::useStagedText(std::optional<FluxStagedText> text) {
  if (shapes_.shapesWithBuffers() > 0) throw std::logic_error("FluxTrainStep::useStagedText: shapes are staged already");
  text_ = std::move(text);
}

void FluxTrainStep::stageLossMask(StaticBuffers& in, const FluxStepBatch& batch) const {
  if (!options_.lossMasks) {
    if (batch.lossMask.defined()) throw std::logic_error("FluxTrainStep: a batch with loss masks, but the step has none");
    return;
  }
  if (!batch.lossMask.defined()) throw std::logic_error("FluxTrainStep: a batch without the loss masks the step expects");
  in.at("loss_mask").copy_(batch.lossMask);
}

torch::Tensor FluxTrainStep::loss(const FluxStepBatch& batch) {
  // Staged text: the encoders run inside the staged loss, with their autograd graph where they train.
  if (text_ || (!batch.t5.requires_grad() && !batch.pooled.requires_grad())) return stagedLoss(stage(batch));
  // Conditioning with gradients (text encoder LoRA) stays in the autograd graph; the rest goes
  // through the static buffers.
  StaticBuffers& in = buffers(shapeOf(batch));
  in.at("latents").copy_(batch.latents);
  in.at("loss_weights").copy_(batch.lossWeights);
  if (options_.applyT5AttnMask) in.at("t5_mask").copy_(batch.t5Mask);
  stageLossMask(in, batch);
  return lossOf(in, batch.t5.to(device_, options_.computeDtype), batch.pooled.to(device_, options_.computeDtype), generator_,
                std::nullopt, batch.microBatches);
}

torch::Tensor FluxTrainStep::validationLoss(const FluxStepBatch& batch, double sigma, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  // The shape's constant inputs (position ids, guidance) shared; the batch's own in fresh tensors.
  StaticBuffers in = buffers(shapeOf(batch));
  in["latents"] = batch.latents.to(device_, options_.computeDtype);
  in["loss_weights"] = batch.lossWeights.to(device_, torch::kFloat32);
  if (options_.applyT5AttnMask) in["t5_mask"] = batch.t5Mask.to(device_, torch::kFloat32);
  if (options_.lossMasks) in["loss_mask"] = batch.lossMask.to(device_, torch::kFloat32);
  return lossOf(in, batch.t5.to(device_, options_.computeDtype), batch.pooled.to(device_, options_.computeDtype), generator, sigma);
}

StepShape FluxTrainStep::stage(const FluxStepBatch& batch) {
  if ((batch.t5.defined() && batch.t5.requires_grad()) || (batch.pooled.defined() && batch.pooled.requires_grad()))
    throw std::logic_error("FluxTrainStep::stage: conditioning with gradients cannot be staged");
  if (text_ && batch.textInputs.empty()) throw std::logic_error("FluxTrainStep::stage: the step stages token ids, the batch has none");
  const StepShape shape = shapeOf(batch);
  StaticBuffers& in = buffers(shape);
  in.at("latents").copy_(batch.latents);
  if (batch.t5.defined()) in.at("t5").copy_(batch.t5);  // cached; with staged text only where T5-XXL's outputs are
  if (batch.pooled.defined()) in.at("pooled").copy_(batch.pooled);
  for (const auto& [name, ids] : batch.textInputs) in.at(name).copy_(ids);
  in.at("loss_weights").copy_(batch.lossWeights);
  if (options_.applyT5AttnMask) in.at("t5_mask").copy_(batch.t5Mask);
  stageLossMask(in, batch);
  return shape;
}

void FluxTrainStep::stageNeutral(const StepShape& shape) {
  StaticBuffers& in = buffers(shape);
  for (const char* name : {"latents", "t5", "pooled"}) in.at(name).zero_();
  if (text_)
    for (const auto& [name, neutral] : text_->makeInputs(shape)) in.at(name).copy_(neutral);
  in.at("t5_mask").fill_(1.0);
  in.at("loss_weights").fill_(1.0);
  if (options_.lossMasks) in.at("loss_mask").fill_(1.0);
}

torch::Tensor FluxTrainStep::stagedLoss(const StepShape& shape) {
  StaticBuffers& in = buffers(shape);
  if (!text_) return lossOf(in, in.at("t5"), in.at("pooled"), generator_, std::nullopt, shape.microBatches);
  const FluxConditioning c = text_->encode(in);
  return lossOf(in, c.t5.defined() ? c.t5.to(options_.computeDtype) : in.at("t5"), c.pooled.to(options_.computeDtype), generator_,
                std::nullopt, shape.microBatches);
}

// flux_train_network.get_noise_pred_and_target: noise, sigmas, x_t; the transformer on x_t's 2x2
// patches; its output unpacked and turned into the prediction; the loss against noise - x0.
torch::Tensor FluxTrainStep::lossOf(StaticBuffers& in, const torch::Tensor& t5, const torch::Tensor& pooled, const at::Generator& generator,
                                    std::optional<double> fixedSigma, int64_t microBatches) {
  const torch::Tensor& latents = in.at("latents");
  const int64_t h = latents.size(2), w = latents.size(3);
  // Joined micro-batches: each draws its noise, sigmas and input noise as its own pass would.
  const std::vector<torch::Tensor> drawn = drawPerMicroBatch(microBatches, {latents}, [&](const std::vector<torch::Tensor>& part) {
    const int64_t b = part[0].size(0);
    const torch::Tensor noise = at::randn(part[0].sizes(), generator, part[0].options());
    const torch::Tensor sigmas = fixedSigma ? torch::full({b}, *fixedSigma, torch::TensorOptions().dtype(torch::kFloat32).device(device_))
                                            : sampleFlowSigmas(options_.flow, b, h, w, generator, device_, sigmaTable_);
    return std::vector<torch::Tensor>{noise, sigmas, flowInputNoise(options_.flow, noise, generator)};
  });
  const torch::Tensor &noise = drawn[0], &sigmas = drawn[1];
  const torch::Tensor noisy = flowNoisyLatents(latents, drawn[2], sigmas, options_.computeDtype);
  const auto guidance = in.find("guidance");
  torch::Tensor out = transformer_->forward(models::packFluxLatents(noisy), in.at("img_ids"), t5, in.at("txt_ids"),
                                            flowModelTimesteps(sigmas, options_.computeDtype), pooled,
                                            guidance == in.end() ? torch::Tensor() : guidance->second,
                                            options_.applyT5AttnMask ? in.at("t5_mask") : torch::Tensor());
  out = models::unpackFluxLatents(out, h / 2, w / 2);
  const FlowPrediction prediction = applyModelPredictionType(options_.flow, out.to(torch::kFloat32),
                                                             noisy.to(torch::kFloat32), sigmas);
  const auto mask = in.find("loss_mask");
  return flowMatchingLoss(options_.flow, prediction, noise.to(torch::kFloat32) - latents.to(torch::kFloat32), sigmas,
                          in.at("loss_weights"), mask == in.end() ? torch::Tensor() : mask->second);
}

}  // namespace sinter::train
