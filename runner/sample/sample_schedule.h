#pragma once
// When sample images are made, as sd-scripts' sample_images decides: before the first step with
// sample_at_first; after every sample_every_n_epochs-th epoch, or, when that is unset, after every
// sample_every_n_steps-th step; and (this build's addition) once at the end of training when a
// periodic setting is on and the last step was not sampled already.
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
  // `lastSampledStep`: the step the newest samples show (-1 for none).
  bool atEnd(long long finalStep, long long lastSampledStep) const {
    return (everyNSteps || everyNEpochs) && lastSampledStep != finalStep;
  }
};

}  // namespace sinter::sample
