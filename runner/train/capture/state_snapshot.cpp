#include "train/capture/state_snapshot.h"

#include <algorithm>

#include "train/base/device_info.h"
#include "train/base/train_state.h"

namespace sinter::train {

int64_t StateSnapshot::stepReserve(const torch::Device& device) {
  constexpr int64_t kGiB = 1LL << 30;
  return std::max<int64_t>(8 * kGiB, totalDeviceBytes(device) * 15 / 100);
}

StateSnapshot::StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators, std::function<void()> reset,
                             int64_t deviceReserve)
    : live_(std::move(tensors)), generators_(std::move(generators)), reset_(std::move(reset)) {
  torch::NoGradGuard noGrad;
  int64_t deviceRoom = 0;
  for (const torch::Tensor& t : live_)
    if (t.is_cuda()) {
      deviceRoom = std::max<int64_t>(0, availableDeviceBytes(t.device()) - deviceReserve);
      break;
    }
  for (const torch::Tensor& t : live_) {
    const torch::Tensor live = t.detach();
    const int64_t size = static_cast<int64_t>(live.nbytes());
    bytes_ += size;
    if (live.is_cuda() && bytesOnDevice_ + size <= deviceRoom) {
      saved_.push_back(live.clone());
      bytesOnDevice_ += size;
    } else {
      saved_.push_back(live.to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
    }
  }
  for (const at::Generator& g : generators_) generatorStates_.push_back(generatorState(g));
}

void StateSnapshot::restore() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < live_.size(); ++i) live_[i].detach().copy_(saved_[i]);
  if (reset_) reset_();
  for (size_t i = 0; i < generators_.size(); ++i) setGeneratorState(generators_[i], generatorStates_[i]);
}

}  // namespace sinter::train
