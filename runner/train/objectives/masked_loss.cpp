#include "train/objectives/masked_loss.h"

#include <sstream>
#include <stdexcept>
#include <string>

namespace sinter::train {

torch::Tensor lossMaskAt(const torch::Tensor& masks, int64_t height, int64_t width) {
  if (masks.dim() != 3) throw std::invalid_argument("lossMaskAt: masks must be [B, H, W], got " + std::to_string(masks.dim()) + " dims");
  // PyTorch's interpolate(mode="area") is adaptive_avg_pool2d to the output size.
  return torch::adaptive_avg_pool2d(masks.to(torch::kFloat32).unsqueeze(1), {height, width});
}

torch::Tensor applyLossMask(const torch::Tensor& loss, const torch::Tensor& mask) {
  if (!mask.defined()) return loss;
  if (mask.dim() != loss.dim() || mask.size(0) != loss.size(0) || mask.size(1) != 1 ||
      mask.sizes().slice(2) != loss.sizes().slice(2))
  {
    std::ostringstream msg;
    msg << "applyLossMask: mask " << mask.sizes() << " does not fit loss " << loss.sizes();
    throw std::invalid_argument(msg.str());
  }
  return loss * mask.to(loss.device(), loss.scalar_type());
}

}  // namespace sinter::train
