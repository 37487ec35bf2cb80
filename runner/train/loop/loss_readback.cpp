#include "train/loop/loss_readback.h"

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace sinter::train {

struct LossReadback::Pending {
  long long step = 0;
  torch::Tensor value;  // [1 + figures] float32: pinned host copy (GPU) or the values themselves (CPU)
#if SINTER_WITH_CUDA
  std::unique_ptr<at::cuda::CUDAEvent> copied;
#endif
};

LossReadback::LossReadback() = default;
LossReadback::~LossReadback() = default;

void LossReadback::push(long long step, const torch::Tensor& lossValue, const torch::Tensor& figures) {
  auto p = std::make_unique<Pending>();
  p->step = step;
  const torch::Tensor loss = figures.defined()
                                 ? torch::cat({lossValue.reshape({1}).to(torch::kFloat32), figures.reshape({-1}).to(torch::kFloat32)})
                                 : lossValue.reshape({1}).to(torch::kFloat32);
#if SINTER_WITH_CUDA
  if (loss.is_cuda()) {
    p->value = torch::empty(loss.sizes(), torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(true));
    p->value.copy_(loss, /*non_blocking=*/true);
    p->copied = std::make_unique<at::cuda::CUDAEvent>();
    p->copied->record(at::cuda::getCurrentCUDAStream(loss.device().index()));
    pending_.push_back(std::move(p));
    return;
  }
#endif
  p->value = loss.clone();
  pending_.push_back(std::move(p));
}

std::vector<std::pair<long long, double>> LossReadback::take(bool includeNewest) {
  std::vector<std::pair<long long, double>> out;
  for (const Reading& r : takeReadings(includeNewest)) out.emplace_back(r.step, r.loss);
  return out;
}

std::vector<LossReadback::Reading> LossReadback::takeReadings(bool includeNewest) {
  std::vector<Reading> out;
  while (pending_.size() > (includeNewest ? 0u : 1u)) {
    Pending& p = *pending_.front();
#if SINTER_WITH_CUDA
    if (p.copied) p.copied->synchronize();
#endif
    const torch::Tensor values = p.value.contiguous();
    const float* v = values.data_ptr<float>();
    out.push_back(Reading{p.step, v[0], std::vector<double>(v + 1, v + values.numel())});
    pending_.pop_front();
  }
  return out;
}

}  // namespace sinter::train
