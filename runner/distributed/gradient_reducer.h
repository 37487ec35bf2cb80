#pragma once
// Data parallel gradients: after a step's last backward pass every rank holds the mean of all
// ranks' gradients, as DistributedDataParallel leaves them. Parameters are grouped into buckets
// (about 25 MiB, in reverse order, which is roughly the order backward finishes them); a hook on the
// accumulator of each tensor backward writes marks it ready, and the buckets are all-reduced in
// order, each as soon as it and those before it are ready, while backward goes on (DDP launches in
// bucket order too, so every rank issues the same collectives in the same order).
//
// Mixed precision (CompactGradients): backward writes the compute copies' gradients, not the
// float32 masters'. Those buckets are ranges of the masters' flat gradient buffer (DDP's
// gradient_as_bucket_view): as a range's copies complete, their gradients are added into it (the
// collection ComputeCopies does after a backward pass, done here per bucket for the step's last one)
// and the range is all-reduced where it lies, with nothing to copy back. Other parameters are copied
// into a flat buffer of their own per bucket and back.
//
// Communication in 16 bits (DDP's fp16/bf16 compression hooks, accelerate's comm_hook): each float32
// bucket is divided by the ranks, rounded to fp16 or bf16, summed in that precision and widened back.
// Half the bytes on the wire; the mean keeps 8 (bf16) or 11 (fp16) significant bits.
//
// finish() starts what no hook started (gradients written outside autograd's accumulators), waits
// for every bucket and writes the means back. The buffers keep their addresses, so a captured step
// can hold the all-reduces (NCCL >= 2.9.6), launched on NCCL's stream beside the backward pass.
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/process_group.h"

namespace sinter::distributed {

constexpr size_t kDefaultBucketBytes = 25u << 20;  // DistributedDataParallel's bucket_cap_mb

// The precision gradients travel in: ddp_comm_hook "no" (their own), "fp16" or "bf16".
enum class GradientCommunication { Native, Float16, BFloat16 };
// The option's value as a setting; nullopt for a value it does not have.
std::optional<GradientCommunication> gradientCommunicationNamed(const std::string& value);
std::string gradientCommunicationName(GradientCommunication c);

// Gradients kept as mixed precision keeps them (train/base/compute_copies.h): backward writes the
// `writers`' gradients (the compute copies), consecutive views of `writerGrads`; after each backward
// pass they are added into `masterGrads`, of which the masters' gradients are consecutive views in
// the same order, and zeroed.
struct CompactGradients {
  std::vector<torch::Tensor> masters;
  std::vector<torch::Tensor> writers;
  torch::Tensor masterGrads, writerGrads;  // flat
};

class GradientReducer {
 public:
  // `params`: what the optimizer steps, in the order it holds them. `compact`: how mixed precision
  // keeps those of them that are its masters (null: none). Bucket sizes are counted in the bytes
  // that travel.
  GradientReducer(ProcessGroup& group, std::vector<torch::Tensor> params, const CompactGradients* compact = nullptr,
                  GradientCommunication communication = GradientCommunication::Native, size_t bucketBytes = kDefaultBucketBytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // After a micro-batch's forward pass, before its backward pass: whether it ends the step (its
  // gradients are reduced; earlier micro-batches only accumulate, as DDP's no_sync).
  void beginBackward(bool lastOfStep);
  // Whether the reducer adds the compact writers' gradients into the masters' after the backward
  // pass that is running (the step's last): the caller must not collect them too.
  bool collectsCompactGradients() const { return armed_ && compactBuckets_ > 0; }
  // After the last micro-batch's backward pass: every parameter's .grad is the ranks' mean (a
  // parameter without a gradient on a rank counts as zeros there, and has one afterwards).
  void finish();

  // Whether buckets start as backward completes them (the default, DDP's) or all after backward:
  // overlapping hides the all-reduce behind a short step's backward (SDXL), but NCCL's kernels
  // beside a compute-bound step's GEMMs can cost more than they hide (FLUX: tests/gpu/RESULTS.md).
  // SINTER_DDP_OVERLAP=0 or 1 in the environment overrides it (the scaling script's diagnostic).
  void setOverlapWithBackward(bool on) { overlap_ = on; }
  bool overlapsWithBackward() const;

  size_t bucketCount() const { return buckets_.size(); }
  // Buckets launched during the last backward pass (the rest started in finish()).
  size_t bucketsOverlapped() const { return overlapped_; }
  GradientCommunication communication() const { return communication_; }
  // "14 gradient buckets (bf16 on the wire) all-reduced in order as backward completes them" (or
  // "after backward").
  std::string describe() const;

 private:
  struct Bucket {
    // A range [begin, begin + length) of the compact masters' flat gradients, or members copied into `buffer`.
    bool compact = false;
    bool inPlace = false;         // compact and all-reduced where the gradients lie
    int64_t begin = 0, length = 0;
    std::vector<size_t> members;  // indices into params_ (generic buckets)
    size_t tensors = 0;           // how many tensors must be ready
    size_t bytes = 0;             // on the wire
    torch::Tensor buffer;         // what is all-reduced
    size_t ready = 0;
    bool started = false;
    PendingCollective pending;
  };
  void buildCompactBuckets(const CompactGradients& compact, size_t bucketBytes);
  void buildGenericBuckets(const std::vector<size_t>& members, size_t bucketBytes);
  void checkWireTypeSums();
  void watch(const torch::Tensor& leaf, size_t bucket);
  void hookAccumulators();
  void markReady(size_t bucket);
  void launchReadyInOrder();
  void start(Bucket& bucket);
  void writeBack(Bucket& bucket);
  at::ScalarType wireType(at::ScalarType own) const;

  ProcessGroup& group_;
  std::vector<torch::Tensor> params_;
  GradientCommunication communication_;
  torch::Tensor masterGrads_, writerGrads_;  // the compact flat buffers (undefined without)
  std::vector<std::unique_ptr<Bucket>> buckets_;
  size_t compactBuckets_ = 0;
  // Per watched tensor (what backward writes): its bucket, whether it was marked ready in this
  // backward pass, and the accumulator the hook is on.
  std::vector<torch::Tensor> watched_;
  std::vector<size_t> bucketOfWatched_;
  std::vector<bool> seen_;
  std::vector<std::weak_ptr<torch::autograd::Node>> hookedOn_;
  std::vector<uintptr_t> hookKeys_;
  size_t nextToLaunch_ = 0;
  bool armed_ = false;
  bool overlap_ = true;
  size_t overlapped_ = 0;
};

}  // namespace sinter::distributed
