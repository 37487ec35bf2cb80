#include "train/optim/grad_clip.h"

#include "train/optim/adjacent_span.h"

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

// Multi-tensor norm and scaling by a tensor (a few launches instead of two per parameter, which
// matter at batch 1 where the step is launch-bound): PyTorch >= 2.1.
#if defined(TORCH_VERSION_MAJOR) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
#define SINTER_HAS_FOREACH_CLIP 1
#else
#define SINTER_HAS_FOREACH_CLIP 0
#endif

namespace sinter::train {

torch::Tensor clipGradNorm(const std::vector<torch::Tensor>& params, double maxNorm) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params) grads.push_back(p.grad());  // persistent buffers (AdamW): always defined
  return clipGradients(std::move(grads), maxNorm);
}

torch::Tensor clipGradients(std::vector<torch::Tensor> grads, double maxNorm) {
  torch::NoGradGuard noGrad;
  if (grads.empty()) return torch::zeros({});
  bool allFloat32 = true;
  for (const torch::Tensor& g : grads) allFloat32 = allFloat32 && g.scalar_type() == torch::kFloat32;
  torch::Tensor total;
#if SINTER_HAS_FOREACH_CLIP
  if (allFloat32 && grads.front().is_cuda()) {
    // One span where the gradients lie in one buffer: the norm of it is the norm of the norms.
    std::vector<torch::Tensor> lists = asOneSpanIfAdjacent(grads);
    total = torch::stack(at::_foreach_norm(lists, 2)).norm(2);
    if (maxNorm > 0.0) at::_foreach_mul_(lists, torch::clamp_max(maxNorm / (total + 1e-6), 1.0));
    return total;
  }
#endif
  std::vector<torch::Tensor> norms;
  for (const torch::Tensor& g : grads) norms.push_back(g.detach().to(torch::kFloat32).norm(2));
  total = torch::stack(norms).norm(2);
  if (maxNorm > 0.0) {
    const torch::Tensor coef = torch::clamp_max(maxNorm / (total + 1e-6), 1.0);
    for (torch::Tensor& g : grads) g.mul_(coef.to(g.scalar_type()));
  }
  return total;
}

}  // namespace sinter::train
