#include "models/unet/timestep_embedding.h"

#include <cmath>

namespace sinter::models {

torch::Tensor timestepEmbedding(const torch::Tensor& values, int64_t dim, double maxPeriod) {
  const int64_t half = dim / 2;
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(values.device());
  const torch::Tensor freqs = torch::exp(torch::arange(half, options) * (-std::log(maxPeriod) / static_cast<double>(half)));
  const torch::Tensor args = values.to(torch::kFloat32).unsqueeze(-1) * freqs;
  torch::Tensor embedding = torch::cat({torch::cos(args), torch::sin(args)}, -1);
  if (dim % 2) embedding = torch::cat({embedding, torch::zeros_like(embedding.narrow(-1, 0, 1))}, -1);
  return embedding;
}

}  // namespace sinter::models
