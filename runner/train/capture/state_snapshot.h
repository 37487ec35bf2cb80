#pragma once
// A copy of a set of live tensors and generator states, put back into the same memory later: the
// warm-up before capturing a step runs real steps, and the run must continue as if they never ran
// (a captured graph keeps the tensors' addresses, so they are restored in place, not replaced).
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace sinter::train {

class StateSnapshot {
 public:
  // `reset` runs after the copies are back (what follows from them, OptimizerUpdate::WarmupUndo).
  // The copies are kept on the device as far as it has room for them beside the step's working
  // memory (`deviceReserve` bytes, kept free), the rest in host memory: a device copy takes
  // milliseconds where a full-weight optimizer state copied to host memory and back takes a minute.
  // (Generators alone: StateSnapshot({}, generators).)
  StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators, std::function<void()> reset = {},
                int64_t deviceReserve = 0);
  void restore();

  int64_t bytes() const { return bytes_; }
  int64_t bytesOnDevice() const { return bytesOnDevice_; }

  // What a snapshot on `device` leaves free for the step: 15% of the device's memory, at least 8 GiB.
  static int64_t stepReserve(const torch::Device& device);

 private:
  int64_t bytes_ = 0, bytesOnDevice_ = 0;
  std::vector<torch::Tensor> live_, saved_;
  std::vector<at::Generator> generators_;
  std::vector<torch::Tensor> generatorStates_;
  std::function<void()> reset_;
};

}  // namespace sinter::train
