#pragma once
// A copy of a set of live tensors and generator states, put back into the same memory later: the
// warm-up before capturing a step runs real steps, and the run must continue as if they never ran
// (a captured graph keeps the tensors' addresses, so they are restored in place, not replaced).
// What it can rebuild it does not copy: a tensor whose every bit is zero (a fresh run's optimizer
// moments) is zeroed again, and tensors the caller knows the work leaves unchanged (the parameters
// of a warm-up at learning rate 0) stay as they are.
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
  // `unchanged`: tensors the work moves by +-0 at most (OptimizerUpdate::WarmupUndo::unchanged).
  // Such a step can turn a negative zero into +0 (-0 - -0 is +0): where an unchanged tensor holds
  // negative zeros, only where they are is kept (a bit per element, on its device) and they are
  // written again on restore. One holding a non-finite value (inf * 0 is NaN) is copied. Which
  // tensors are zero and which unchanged ones need a copy or a mask is found on the device with one
  // host read. (Generators alone: StateSnapshot({}, generators).)
  StateSnapshot(std::vector<torch::Tensor> tensors, std::vector<at::Generator> generators, std::function<void()> reset = {},
                int64_t deviceReserve = 0, std::vector<torch::Tensor> unchanged = {});
  void restore();

  // Bytes copied, and of them those kept on the device (the rest are in host memory).
  int64_t bytes() const { return bytes_; }
  int64_t bytesOnDevice() const { return bytesOnDevice_; }
  // Bytes not copied: all-zero tensors (zeroed on restore), and unchanged ones left as they are
  // (their negative zeros written again from the masks, `bytesSignMasks` of them).
  int64_t bytesZeroed() const { return bytesZeroed_; }
  int64_t bytesLeftUnchanged() const { return bytesLeftUnchanged_; }
  int64_t bytesSignMasks() const { return bytesSignMasks_; }

  // What a snapshot on `device` leaves free for the step: 15% of the device's memory, at least 8 GiB.
  static int64_t stepReserve(const torch::Device& device);

 private:
  struct NegativeZeros {
    torch::Tensor live, mask;  // mask: bit i of byte i / 8 set where element i was -0
  };
  int64_t bytes_ = 0, bytesOnDevice_ = 0, bytesZeroed_ = 0, bytesLeftUnchanged_ = 0, bytesSignMasks_ = 0;
  std::vector<torch::Tensor> live_, saved_, zeroed_;
  std::vector<NegativeZeros> negativeZeros_;
  std::vector<at::Generator> generators_;
  std::vector<torch::Tensor> generatorStates_;
  std::function<void()> reset_;
};

}  // namespace sinter::train
