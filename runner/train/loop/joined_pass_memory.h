#pragma once
// Batched gradient accumulation's memory rule (docs/DESIGN.md §6): users pick gradient
// accumulation to save memory, so on a GPU the micro-batches of a shape run as one pass only where
// that pass is measured to fit. One micro-batch's working memory is the CUDA allocator's peak over
// a run of micro-batches of the shape (a step run one after another, or the warm-up's capture) less
// what was allocated before it: an upper bound (the peak may be an earlier run's), and the least of
// a shape's measurements is kept. G micro-batches fit in one pass where what is allocated before
// the step plus G times that stays within 90% of vram_budget_gb where set, else of the device's
// memory and within what it has free less 10% of it. On the CPU nothing is measured and every pass fits.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sinter::train {

class JoinedPassMemory {
 public:
  // `limitBytes`: vram_budget_gb's bytes, or 0 for the device's memory.
  JoinedPassMemory(torch::Device device, int microBatches, double limitBytes);

  bool measures() const { return device_.is_cuda(); }
  // Before a run of micro-batches to measure: the bytes allocated now.
  int64_t allocatedNow() const;
  // After it: one micro-batch of each of `labels` ("1x1024x1024") took at most the peak since
  // then less `allocatedBefore`.
  void measured(const std::vector<std::string>& labels, int64_t allocatedBefore);

  enum class Verdict { Fits, NotMeasured, TooLarge };
  struct Check {
    Verdict verdict = Verdict::Fits;
    std::string why;  // TooLarge: the figures
  };
  // Whether the micro-batches of `label` fit in one pass now.
  Check check(const std::string& label) const;

 private:
  torch::Device device_;
  int microBatches_;
  double limitBytes_;
  std::map<std::string, int64_t> perMicroBatch_;
};

}  // namespace sinter::train
