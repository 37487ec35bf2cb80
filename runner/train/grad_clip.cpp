#include "train/grad_clip.h"

namespace sinter::train {

torch::Tensor clipGradNorm(const std::vector<torch::Tensor>& params, double maxNorm) {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> norms;
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : params) {
    const torch::Tensor g = p.grad();  // persistent buffers (AdamW): always defined
    grads.push_back(g);
    norms.push_back(g.detach().to(torch::kFloat32).norm(2));
  }
  if (norms.empty()) return torch::zeros({});
  const torch::Tensor total = torch::stack(norms).norm(2);
  if (maxNorm > 0.0) {
    const torch::Tensor coef = torch::clamp_max(maxNorm / (total + 1e-6), 1.0);
    for (torch::Tensor& g : grads) g.mul_(coef.to(g.scalar_type()));
  }
  return total;
}

}  // namespace sinter::train
