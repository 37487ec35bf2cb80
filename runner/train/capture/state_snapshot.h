#pragma once
// A copy of a set of live tensors and generator states, put back into the same memory later: the
// warm-up before capturing a step runs real steps, and the run must continue as if they never ran
// (a captured graph keeps the tensors' addresses, so they are restored in place, not replaced).
#include <torch/torch.h>

#include <vector>

namespace sinter::train {

class StateSnapshot {
 public:
  // The copies are kept in host memory, so that a snapshot adds nothing to the device's peak.
  StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators);
  void restore();

 private:
  std::vector<torch::Tensor> live_, saved_;
  std::vector<at::Generator> generators_;
  std::vector<torch::Tensor> generatorStates_;
};

}  // namespace sinter::train
