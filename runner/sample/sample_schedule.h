#pragma once
// When sample images are made, as sd-scripts' sample_images decides: before the first step with
// sample_at_first; after every sample_every_n_epochs-th epoch, or, when that is unset, after every
// sample_every_n_steps-th step. A run that max_train_steps ends within an epoch still ends that
// epoch's loop in sd-scripts, whose sample_images(epoch + 1) then samples by sample_every_n_epochs.
#include <optional>

namespace sinter::sample {

struct SampleSchedule {
  bool atFirst = false;                     // sample_at_first
  std::optional<long long> everyNSteps;     // sample_every_n_steps (ignored with everyNEpochs)
  std::optional<long long> everyNEpochs;    // sample_every_n_epochs

  bool any() const { return atFirst || everyNSteps || everyNEpochs; }
  bool beforeTraining() const { return atFirst; }
  bool afterStep(long long step) const { return !everyNEpochs && everyNSteps && step % *everyNSteps == 0; }
  bool afterEpoch(long long epoch) const { return everyNEpochs && epoch % *everyNEpochs == 0; }
  // After the run's last step, in epoch `epoch` (1-based): whether its unfinished epoch samples (one
  // that finished sampled by afterEpoch already).
  bool atRunEnd(long long epoch, bool epochFinished) const { return !epochFinished && afterEpoch(epoch); }
};

}  // namespace sinter::sample
