#pragma once
// Data parallel gradients: after a step's last backward pass every rank holds the mean of all
// ranks' gradients, as DistributedDataParallel leaves them. Parameters are grouped into buckets
// (about 25 MiB, in reverse order, which is roughly the order backward finishes them); a hook on each
// parameter's gradient accumulator marks it ready, and a bucket whose parameters are all ready is
// copied into its flat buffer and all-reduced at once, while backward goes on. finish() starts
// what no hook started (gradients written outside autograd's accumulators: captured blocks,
// compute copies), waits for every bucket and writes the means back. The buffers keep their
// addresses, so a captured step can hold the all-reduces (NCCL >= 2.9.6).
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "distributed/process_group.h"

namespace sinter::distributed {

constexpr size_t kDefaultBucketBytes = 25u << 20;  // DistributedDataParallel's bucket_cap_mb

class GradientReducer {
 public:
  // `params`: what the optimizer steps, in the order it holds them.
  GradientReducer(ProcessGroup& group, std::vector<torch::Tensor> params, size_t bucketBytes = kDefaultBucketBytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Before a micro-batch's backward pass: whether it ends the step (its gradients are reduced;
  // earlier micro-batches only accumulate, as DDP's no_sync).
  void beginBackward(bool lastOfStep);
  // After the last micro-batch's backward pass: every parameter's .grad is the ranks' mean (a
  // parameter without a gradient on a rank counts as zeros there, and has one afterwards).
  void finish();

  size_t bucketCount() const { return buckets_.size(); }
  // Buckets started by hooks during the last backward pass (the rest started in finish()).
  size_t bucketsOverlapped() const { return overlapped_; }

 private:
  struct Bucket {
    std::vector<size_t> members;  // indices into params_
    size_t bytes = 0;             // the members' size
    torch::Tensor buffer;         // flat, the members' dtype and device
    size_t ready = 0;
    bool started = false;
    PendingCollective pending;
  };
  void markReady(size_t param);
  void start(Bucket& bucket);

  ProcessGroup& group_;
  std::vector<torch::Tensor> params_;
  std::vector<size_t> bucketOf_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::vector<bool> readyParams_;
  bool armed_ = false;
  size_t overlapped_ = 0;
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, uintptr_t>> hooks_;
};

}  // namespace sinter::distributed
