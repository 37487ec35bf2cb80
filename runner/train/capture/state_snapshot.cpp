#include "train/capture/state_snapshot.h"

#include <optional>

#include "train/base/device_info.h"
#include "train/base/train_state.h"

namespace sinter::train {

StateSnapshot::StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators)
    : live_(std::move(tensors)), generators_(std::move(generators)) {
  torch::NoGradGuard noGrad;
  std::optional<torch::Device> device;
  for (const torch::Tensor& t : live_) {
    bytes_ += static_cast<int64_t>(t.nbytes());
    if (t.is_cuda()) device = t.device();
  }
  onDevice_ = device && bytes_ <= availableDeviceBytes(*device) / 2;
  for (const torch::Tensor& t : live_) saved_.push_back(onDevice_ ? t.detach().clone() : t.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
  for (const at::Generator& g : generators_) generatorStates_.push_back(generatorState(g));
}

void StateSnapshot::restore() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < live_.size(); ++i) live_[i].detach().copy_(saved_[i]);
  for (size_t i = 0; i < generators_.size(); ++i) setGeneratorState(generators_[i], generatorStates_[i]);
}

}  // namespace sinter::train
