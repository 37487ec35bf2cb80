#include "train/objectives/unet_train_step.h"

#include <stdexcept>

#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/objectives/micro_batch_draws.h"

namespace sinter::train {

compile::CompileTargets unetCompileTargets() {
  return {"U-Net", "input, middle and output blocks", "GEGLU, GroupNorm+SiLU",
          "GEGLU (value * gelu(gate)) and GroupNorm+SiLU (float32 statistics, rounded once), each reading its input once or "
          "twice where the stock operators write intermediates; q/k/v of self-attention as one GEMM (and their LoRA's down "
          "projections as one); every cross-attention's k/v of the text context as one GEMM before the blocks (not with "
          "per-block graphs)"};
}
namespace {

// A staged buffer the step may not have (the loss mask, the adm vector): undefined when absent.
torch::Tensor optionalBuffer(StaticBuffers& in, const char* name) {
  const auto it = in.find(name);
  return it == in.end() ? torch::Tensor() : it->second;
}

torch::Tensor maskOf(StaticBuffers& in) { return optionalBuffer(in, "loss_mask"); }

bool carriesGradient(const torch::Tensor& t) { return t.defined() && t.requires_grad(); }

// On the device in the compute dtype, or undefined as given.
torch::Tensor toCompute(const torch::Tensor& t, torch::Device device, torch::Dtype dtype) {
  return t.defined() ? t.to(device, dtype) : t;
}

}  // namespace

UnetStepOptions UnetStepOptions::fromConfig(const Config& config, torch::Dtype computeDtype) {
  UnetStepOptions o;
  o.noise.noiseOffset = optionalDouble(config, "noise_offset").value_or(0.0);
  o.noise.noiseOffsetRandomStrength = config.getBool("noise_offset_random_strength");
  o.noise.adaptiveNoiseScale = optionalDouble(config, "adaptive_noise_scale");
  o.noise.ipNoiseGamma = optionalDouble(config, "ip_noise_gamma").value_or(0.0);
  o.noise.ipNoiseGammaRandomStrength = config.getBool("ip_noise_gamma_random_strength");
  if (config.isSet("multires_noise_iterations")) {
    o.noise.multiresIterations = config.getInt("multires_noise_iterations");
    o.noise.multiresDiscount = config.getDouble("multires_noise_discount");
  }
  o.schedule.zeroTerminalSnr = config.getBool("zero_terminal_snr");
  if (!isUnset(config.get("min_timestep"))) o.noise.minTimestep = config.getInt("min_timestep");
  if (!isUnset(config.get("max_timestep"))) o.noise.maxTimestep = config.getInt("max_timestep");
  o.loss.lossType = parseLossType(config.getString("loss_type"));
  o.loss.huberC = config.getDouble("huber_c");
  o.loss.huberSchedule = parseHuberSchedule(config.getString("huber_schedule"));
  o.loss.huberScale = config.getDouble("huber_scale");
  o.loss.vPrediction = config.getBool("v_parameterization");
  o.loss.minSnrGamma = optionalDouble(config, "min_snr_gamma");
  o.loss.scaleVPredLossLikeNoisePred = config.getBool("scale_v_pred_loss_like_noise_pred");
  o.loss.vPredLikeLoss = optionalDouble(config, "v_pred_like_loss");
  o.loss.debiasedEstimation = config.getBool("debiased_estimation_loss");
  o.computeDtype = computeDtype;
  return o;
}

UnetTrainStep::UnetTrainStep(models::SdxlUnet unet, UnetStepOptions options, torch::Device device, std::uint64_t seed)
    : unet_(std::move(unet)),
      options_(std::move(options)),
      device_(device),
      schedule_(options_.schedule, device),
      generator_(makeGenerator(device, seed)) {}

StepShape UnetTrainStep::shapeOf(const UnetStepBatch& b) {
  return StepShape{b.latents.size(0), b.latents.size(2), b.latents.size(3),
                   b.context.defined() ? b.context.size(1) : b.contextTokens, b.microBatches};
}

StaticBuffers& UnetTrainStep::buffers(const StepShape& s) {
  return shapes_.buffers(s, [&] {
    const models::SdxlUnetConfig& c = unet_->config();
    const auto inputs = torch::TensorOptions().device(device_).dtype(options_.computeDtype);
    StaticBuffers b{{"latents", torch::zeros({s.batch, c.inChannels, s.height, s.width}, inputs)},
                    {"loss_weights", torch::ones({s.batch}, inputs.dtype(torch::kFloat32))}};
    if (conditioning_) {
      for (auto& [name, t] : conditioning_->makeInputs(s)) {
        if (b.count(name)) throw std::logic_error("UnetTrainStep: staged conditioning input " + name + " names a step buffer");
        b[name] = t.to(device_);
      }
    } else {
      b["context"] = torch::zeros({s.batch, s.tokens, c.contextDim}, inputs);
      if (c.admInChannels > 0) b["adm_vector"] = torch::zeros({s.batch, c.admInChannels}, inputs);
    }
    if (options_.lossMasks) b["loss_mask"] = torch::ones({s.batch, 1, s.height, s.width}, inputs.dtype(torch::kFloat32));
    return b;
  });
}

void UnetTrainStep::useStagedConditioning(std::optional<StagedConditioning> conditioning) {
  if (shapes_.shapesWithBuffers() > 0 && conditioning.has_value() != conditioning_.has_value())
    throw std::logic_error("UnetTrainStep::useStagedConditioning: shapes are staged already");
  conditioning_ = std::move(conditioning);
}

void UnetTrainStep::useLossMasks(bool on) {
  if (on != options_.lossMasks && shapes_.shapesWithBuffers() > 0)
    throw std::logic_error("UnetTrainStep::useLossMasks: shapes are staged already");
  options_.lossMasks = on;
}

void UnetTrainStep::stageLossMask(StaticBuffers& in, const UnetStepBatch& batch) const {
  if (!options_.lossMasks) {
    if (batch.lossMask.defined()) throw std::logic_error("UnetTrainStep: a batch with loss masks, but the step has none");
    return;
  }
  if (!batch.lossMask.defined()) throw std::logic_error("UnetTrainStep: a batch without the loss masks the step expects");
  in.at("loss_mask").copy_(batch.lossMask);
}


torch::Tensor UnetTrainStep::loss(const UnetStepBatch& batch) {
  const bool conditioningTrains = carriesGradient(batch.context) || carriesGradient(batch.admVector);
  if (!conditioningTrains) return stagedLoss(stage(batch));
  // Text conditioning that carries gradients (text encoder LoRA) must stay in the autograd graph;
  // the rest goes through the static buffers.
  StaticBuffers& in = buffers(shapeOf(batch));
  in.at("latents").copy_(batch.latents);
  in.at("loss_weights").copy_(batch.lossWeights);
  stageLossMask(in, batch);
  return lossOf(in.at("latents"), batch.context.to(device_, options_.computeDtype),
                toCompute(batch.admVector, device_, options_.computeDtype), in.at("loss_weights"), maskOf(in), options_.noise,
                generator_, batch.microBatches);
}

torch::Tensor UnetTrainStep::validationLoss(const UnetStepBatch& batch, int64_t timestep, const at::Generator& generator) {
  torch::NoGradGuard noGrad;
  // sd-scripts sets min_timestep = max_timestep = timestep: every sample at it, the rest of the
  // noise options as in training.
  NoiseSamplingOptions noise = options_.noise;
  noise.minTimestep = timestep;
  noise.maxTimestep = timestep;
  const torch::Tensor mask = options_.lossMasks ? batch.lossMask.to(device_, torch::kFloat32) : torch::Tensor();
  return lossOf(batch.latents.to(device_, options_.computeDtype), batch.context.to(device_, options_.computeDtype),
                toCompute(batch.admVector, device_, options_.computeDtype), batch.lossWeights.to(device_, torch::kFloat32), mask, noise,
                generator);
}

StepShape UnetTrainStep::stage(const UnetStepBatch& batch) {
  if (carriesGradient(batch.context) || carriesGradient(batch.admVector))
    throw std::logic_error("UnetTrainStep::stage: conditioning with gradients cannot be staged (stage its inputs)");
  if (conditioning_.has_value() == batch.context.defined())
    throw std::logic_error(conditioning_ ? "UnetTrainStep::stage: the step stages conditioning inputs, the batch has a context"
                                         : "UnetTrainStep::stage: the batch has no context");
  const StepShape shape = shapeOf(batch);
  StaticBuffers& in = buffers(shape);
  in.at("latents").copy_(batch.latents);
  if (conditioning_) {
    for (const auto& [name, t] : batch.conditioningInputs) {
      const auto it = in.find(name);
      if (it == in.end()) throw std::logic_error("UnetTrainStep::stage: no buffer for conditioning input " + name);
      it->second.copy_(t);
    }
  } else {
    in.at("context").copy_(batch.context);
    if (batch.admVector.defined()) in.at("adm_vector").copy_(batch.admVector);
  }
  in.at("loss_weights").copy_(batch.lossWeights);
  stageLossMask(in, batch);
  return shape;
}

void UnetTrainStep::stageNeutral(const StepShape& shape) {
  StaticBuffers& in = buffers(shape);
  in.at("latents").zero_();
  if (conditioning_) {
    for (const auto& [name, t] : conditioning_->makeInputs(shape)) in.at(name).copy_(t);
  } else {
    in.at("context").zero_();
    if (torch::Tensor adm = optionalBuffer(in, "adm_vector"); adm.defined()) adm.zero_();
  }
  in.at("loss_weights").fill_(1.0);
  if (options_.lossMasks) in.at("loss_mask").fill_(1.0);
}

torch::Tensor UnetTrainStep::stagedLoss(const StepShape& shape) {
  StaticBuffers& in = buffers(shape);
  if (conditioning_) {
    const UnetConditioning c = conditioning_->encode(in);
    return lossOf(in.at("latents"), c.context.to(options_.computeDtype), toCompute(c.admVector, device_, options_.computeDtype),
                  in.at("loss_weights"), maskOf(in), options_.noise, generator_, shape.microBatches);
  }
  return lossOf(in.at("latents"), in.at("context"), optionalBuffer(in, "adm_vector"), in.at("loss_weights"), maskOf(in),
                options_.noise, generator_, shape.microBatches);
}

torch::Tensor UnetTrainStep::lossOf(const torch::Tensor& latents, const torch::Tensor& context, const torch::Tensor& admVector,
                                    const torch::Tensor& lossWeights, const torch::Tensor& lossMask, const NoiseSamplingOptions& noise,
                                    const at::Generator& generator, int64_t microBatches) {
  // Joined micro-batches: each draws its noise and timesteps as its own pass would.
  const std::vector<torch::Tensor> drawn = drawPerMicroBatch(microBatches, {latents}, [&](const std::vector<torch::Tensor>& in) {
    NoisedBatch n = sampleNoisedBatch(schedule_, in[0], noise, generator);
    return std::vector<torch::Tensor>{n.noise, n.noisyLatents, n.timesteps};
  });
  const NoisedBatch noised{drawn[0], drawn[1], drawn[2]};
  torch::Tensor pred = unet_->forward(noised.noisyLatents, noised.timesteps, context, admVector);
  torch::Tensor target = options_.loss.vPrediction ? schedule_.velocity(latents, noised.noise, noised.timesteps) : noised.noise;
  return diffusionLoss(pred.to(torch::kFloat32), target.to(torch::kFloat32), noised.timesteps, lossWeights, schedule_,
                       options_.loss, lossMask);
}

}  // namespace sinter::train
