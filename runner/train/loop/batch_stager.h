#pragma once
// Batches moved to the device ahead of the step that uses them. On a GPU the next batch's tensors
// are pinned and copied on a side stream while the current step computes, and the step's stream
// waits for that copy alone; on the CPU a batch passes through as it is.
#include <torch/torch.h>

#include <memory>
#include <optional>

#include "data/batch_loader.h"

namespace sinter::train {

class BatchStager {
 public:
  explicit BatchStager(torch::Device device);
  ~BatchStager();

  // Starts moving `batch` to the device (returns at once on a GPU).
  void stage(data::Batch batch);
  bool hasStaged() const { return staged_.has_value(); }
  // Where the staged batch sits in the data order (what a saved state resumes from).
  data::DataOrderState stagedPosition(std::uint64_t seed) const;
  // The staged batch with its tensors on the device, ready for the current stream.
  data::Batch take();

 private:
  struct Copy;
  torch::Device device_;
  std::optional<data::Batch> staged_;
  std::unique_ptr<Copy> copy_;
};

}  // namespace sinter::train
