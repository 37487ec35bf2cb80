#include "train/loop/batch_stager.h"

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace sinter::train {

namespace {

// Every tensor a batch carries, for moving them together.
template <typename F>
void forEachTensor(data::Batch& b, F&& f) {
  for (torch::Tensor* t : {&b.images, &b.latents, &b.originalSizesHW, &b.cropTopLefts, &b.targetSizesHW, &b.lossWeights,
                          &b.lossMasks})
    f(*t);
  for (auto& [name, t] : b.textOutputs) f(t);
  for (auto& [name, t] : b.tokenIds) f(t);
}

}  // namespace

struct BatchStager::Copy {
#if SINTER_WITH_CUDA
  std::optional<c10::cuda::CUDAStream> stream;
  at::cuda::CUDAEvent done;
#endif
};

BatchStager::BatchStager(torch::Device device) : device_(device), copy_(std::make_unique<Copy>()) {}
BatchStager::~BatchStager() = default;

void BatchStager::stage(data::Batch batch) {
#if SINTER_WITH_CUDA
  if (device_.is_cuda()) {
    if (!copy_->stream) copy_->stream = at::cuda::getStreamFromPool(false, device_.index());
    {
      c10::cuda::CUDAStreamGuard onSide(*copy_->stream);
      forEachTensor(batch, [&](torch::Tensor& t) {
        if (t.defined() && !t.is_cuda()) t = t.pin_memory().to(device_, /*non_blocking=*/true);
      });
      copy_->done.record(*copy_->stream);
    }
  }
#endif
  staged_ = std::move(batch);
}

data::DataOrderState BatchStager::stagedPosition(std::uint64_t seed) const {
  return data::DataOrderState{seed, staged_->epoch, staged_->indexInEpoch};
}

data::Batch BatchStager::take() {
  data::Batch batch = std::move(*staged_);
  staged_.reset();
#if SINTER_WITH_CUDA
  if (device_.is_cuda() && copy_->stream) {
    const c10::cuda::CUDAStream current = at::cuda::getCurrentCUDAStream(device_.index());
    copy_->done.block(current);
    // Memory made on the side stream is used on this one: the allocator must know before reuse.
    forEachTensor(batch, [&](torch::Tensor& t) {
      if (t.defined() && t.is_cuda()) t.record_stream(current);
    });
  }
#endif
  return batch;
}

}  // namespace sinter::train
