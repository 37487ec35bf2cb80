#include "train/loop/loss_readback.h"

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace sinter::train {

struct LossReadback::Pending {
  long long step = 0;
  torch::Tensor value;  // pinned host copy (GPU) or the loss itself (CPU)
#if SINTER_WITH_CUDA
  std::unique_ptr<at::cuda::CUDAEvent> copied;
#endif
};

LossReadback::LossReadback() = default;
LossReadback::~LossReadback() = default;

void LossReadback::push(long long step, const torch::Tensor& loss) {
  auto p = std::make_unique<Pending>();
  p->step = step;
#if SINTER_WITH_CUDA
  if (loss.is_cuda()) {
    p->value = torch::empty({}, torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(true));
    p->value.copy_(loss, /*non_blocking=*/true);
    p->copied = std::make_unique<at::cuda::CUDAEvent>();
    p->copied->record(at::cuda::getCurrentCUDAStream(loss.device().index()));
    pending_.push_back(std::move(p));
    return;
  }
#endif
  p->value = loss.to(torch::kFloat32);
  pending_.push_back(std::move(p));
}

std::vector<std::pair<long long, double>> LossReadback::take(bool includeNewest) {
  std::vector<std::pair<long long, double>> out;
  while (pending_.size() > (includeNewest ? 0u : 1u)) {
    Pending& p = *pending_.front();
#if SINTER_WITH_CUDA
    if (p.copied) p.copied->synchronize();
#endif
    out.emplace_back(p.step, p.value.item<double>());
    pending_.pop_front();
  }
  return out;
}

}  // namespace sinter::train
