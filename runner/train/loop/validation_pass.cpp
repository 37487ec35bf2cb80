#include "train/loop/validation_pass.h"

#include <algorithm>

#include "train/base/config_values.h"
#include "train/base/device_info.h"
#include "train/base/train_state.h"

namespace sinter::train {

namespace {

data::LoaderOptions onCallingThread(data::LoaderOptions options) {
  options.workers = 0;
  return options;
}

}  // namespace

ValidationOptions ValidationOptions::fromConfig(const Config& config) {
  ValidationOptions o;
  if (const auto seed = optionalInt(config, "validation_seed")) o.seed = static_cast<std::uint64_t>(*seed);
  o.everyNSteps = optionalInt(config, "validate_every_n_steps");
  o.everyNEpochs = optionalInt(config, "validate_every_n_epochs");
  o.maxSteps = optionalInt(config, "max_validation_steps");
  return o;
}

ValidationPass::ValidationPass(const RunContext& run, FamilyPart& family, const data::Dataset& dataset, data::LoaderOptions loader)
    : run_(run),
      family_(family),
      options_(ValidationOptions::fromConfig(run.config)),
      seed_(options_.seed.value_or(run.seed)),
      // One process's order: with several ranks, rank 0 alone validates (as it alone reports).
      plan_(dataset, seed_, data::BatchShard{}, data::PlanImages::Validation),
      loader_(dataset, plan_, onCallingThread(loader), family.latentCache(), family.textCache()),
      timesteps_(family.validationTimesteps()) {
  batches_ = plan_.batchesPerEpoch();
  if (options_.maxSteps) batches_ = std::min(batches_, *options_.maxSteps);
}

bool ValidationPass::afterStep(long long globalStep) const {
  return enabled() && options_.scheduledAfterStep(globalStep);
}

bool ValidationPass::afterEpoch(long long epoch) const {
  return enabled() && options_.scheduledAfterEpoch(epoch);
}

double ValidationPass::run(bool textEncodersTrain) {
  // Nothing here draws from the training's generators (the noise comes from `generator`, dropout is
  // off in eval mode); their states are put back anyway, as sd-scripts restores its RNG states.
  at::Generator& noise = family_.generator();
  at::Generator dropout = at::globalContext().defaultGenerator(run_.device);
  const torch::Tensor noiseState = generatorState(noise), dropoutState = generatorState(dropout);
  // Seeded afresh every pass (sd-scripts' switch_rng_state): every pass draws the same noise, so
  // passes differ only by the weights.
  const at::Generator generator = makeGenerator(run_.device, seed_);
  // Batches and timesteps are evaluated eagerly, also when the training step replays CUDA graphs:
  // the whole-step graphs hold the backward pass and the update, which validation must not run
  // (per-block graphs serve its forward passes as they serve sample images).
  torch::Tensor sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(run_.device));
  long long count = 0;
  for (long long i = 0; i < batches_; ++i) {
    const data::Batch batch = loader_.makeBatch(0, i);
    for (const int64_t t : timesteps_) {
      sum += family_.validationLoss(batch, t, generator).detach().to(torch::kFloat32);
      ++count;
    }
  }
  const double mean = sum.item<double>() / static_cast<double>(std::max(1LL, count));
  family_.setTraining(textEncodersTrain);
  setGeneratorState(noise, noiseState);
  setGeneratorState(dropout, dropoutState);
  return mean;
}

}  // namespace sinter::train
