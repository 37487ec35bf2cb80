#pragma once
// Each step's loss read back without waiting for the step: on a GPU the value is copied into
// pinned host memory on the stream right after the loss is computed, and read one step later,
// when that copy has long finished while the next step runs. On the CPU it is read when taken.
#include <torch/torch.h>

#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace sinter::train {

class LossReadback {
 public:
  LossReadback();
  ~LossReadback();

  // `loss`: a 0-dim float32 tensor (any device), detached; `figures`: other values of the step
  // (a 1-dim tensor on the loss's device, e.g. scale_weight_norms' figures), or undefined.
  void push(long long step, const torch::Tensor& loss, const torch::Tensor& figures = {});
  // The values pushed so far, oldest first: all of them, or all but the newest (which may still
  // be in flight). Waits only for the values it returns.
  std::vector<std::pair<long long, double>> take(bool includeNewest);
  struct Reading {
    long long step = 0;
    double loss = 0;
    std::vector<double> figures;  // as pushed
  };
  std::vector<Reading> takeReadings(bool includeNewest);
  bool empty() const { return pending_.empty(); }

 private:
  struct Pending;
  std::deque<std::unique_ptr<Pending>> pending_;
};

}  // namespace sinter::train
