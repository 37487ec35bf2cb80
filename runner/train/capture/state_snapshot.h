#pragma once
// A copy of a set of live tensors and generator states, put back into the same memory later: the
// warm-up before capturing a step runs real steps, and the run must continue as if they never ran
// (a captured graph keeps the tensors' addresses, so they are restored in place, not replaced).
#include <torch/torch.h>

#include <vector>

namespace sinter::train {

class StateSnapshot {
 public:
  // The copies are kept on the device where they take at most half of what it has available (a
  // copy there takes milliseconds where a full-weight optimizer state copied to host memory and
  // back takes many seconds), else in host memory, so that a snapshot never takes the memory the
  // step needs.
  StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators);
  void restore();

  int64_t bytes() const { return bytes_; }
  bool onDevice() const { return onDevice_; }

 private:
  int64_t bytes_ = 0;
  bool onDevice_ = false;
  std::vector<torch::Tensor> live_, saved_;
  std::vector<at::Generator> generators_;
  std::vector<torch::Tensor> generatorStates_;
};

}  // namespace sinter::train
