#include "train/capture/state_snapshot.h"

#include "train/base/train_state.h"

namespace sinter::train {

namespace {
// Waits for the copies queued on the device's current stream (pinned host memory is read and
// written asynchronously).
void awaitCopies(const std::vector<torch::Tensor>& live) {
  for (const torch::Tensor& t : live)
    if (t.is_cuda()) {
      torch::cuda::synchronize(t.device().index());
      return;
    }
}
}  // namespace

StateSnapshot::StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators)
    : live_(std::move(tensors)), generators_(std::move(generators)) {
  torch::NoGradGuard noGrad;
  // A device tensor goes to pinned host memory, copied asynchronously, with one wait at the end: a
  // full-weight optimizer state is tens of GB, which synchronous copies into fresh pageable memory
  // took over a minute to save and restore (the DreamBooth warm-up, tests/gpu/RESULTS.md).
  for (const torch::Tensor& t : live_) {
    const torch::Tensor live = t.detach();
    if (live.is_cuda()) {
      torch::Tensor copy = torch::empty(live.sizes(), live.options().device(torch::kCPU).pinned_memory(true));
      copy.copy_(live, /*non_blocking=*/true);
      saved_.push_back(copy);
    } else {
      saved_.push_back(live.clone());
    }
  }
  awaitCopies(live_);
  for (const at::Generator& g : generators_) generatorStates_.push_back(generatorState(g));
}

void StateSnapshot::restore() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < live_.size(); ++i) live_[i].detach().copy_(saved_[i], /*non_blocking=*/live_[i].is_cuda());
  awaitCopies(live_);  // the pinned copies must outlive the transfers
  for (size_t i = 0; i < generators_.size(); ++i) setGeneratorState(generators_[i], generatorStates_[i]);
}

}  // namespace sinter::train
