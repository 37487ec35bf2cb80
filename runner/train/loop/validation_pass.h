#pragma once
// sd-scripts' validation (train_network.py, validation_split): when it runs and one pass over the
// held-out images. A pass evaluates each of up to max_validation_steps batches at the family's four
// fixed timesteps and averages all those losses; it runs without gradients, with the models in eval
// mode, its noise from a generator seeded afresh with validation_seed (else the run's seed) every
// pass, and leaves the training's generators, models' modes and data order as they were.
#include <cstdint>
#include <optional>

#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

struct ValidationOptions {
  std::optional<std::uint64_t> seed;        // validation_seed
  std::optional<long long> everyNSteps;     // validate_every_n_steps
  std::optional<long long> everyNEpochs;    // validate_every_n_epochs (unset: every epoch)
  std::optional<long long> maxSteps;        // max_validation_steps (batches)

  static ValidationOptions fromConfig(const Config& config);
  // The schedule alone (the same on every rank; ValidationPass adds whether there are batches).
  bool scheduledAfterStep(long long globalStep) const { return everyNSteps && globalStep % *everyNSteps == 0; }
  bool scheduledAfterEpoch(long long epoch) const { return !everyNEpochs || epoch % *everyNEpochs == 0; }
};

class ValidationPass {
 public:
  // `loader` options as the training's (token warm-up reads them); the pass builds its batches on
  // the calling thread.
  ValidationPass(const RunContext& run, FamilyPart& family, const data::Dataset& dataset, data::LoaderOptions loader);

  // Whether there is anything to validate on (validation_split held images out).
  bool enabled() const { return batches_ > 0; }
  // sd-scripts' schedule: after every validate_every_n_steps-th step, and at the end of every
  // (validate_every_n_epochs-th) epoch, 1-based.
  bool afterStep(long long globalStep) const;
  bool afterEpoch(long long epoch) const;
  long long batches() const { return batches_; }
  std::size_t timesteps() const { return timesteps_.size(); }

  // One pass: the mean loss. `textEncodersTrain` restores the models' training modes after it.
  double run(bool textEncodersTrain);

 private:
  const RunContext& run_;
  FamilyPart& family_;
  ValidationOptions options_;
  std::uint64_t seed_;
  data::BatchPlan plan_;
  data::BatchLoader loader_;
  std::vector<int64_t> timesteps_;
  long long batches_ = 0;
};

}  // namespace sinter::train
