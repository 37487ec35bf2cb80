#include "models/unet/timestep_embedding.h"

#include <cmath>

namespace sinter::models {

torch::Tensor timestepEmbedding(const torch::Tensor& values, int64_t dim, double maxPeriod) {
  const int64_t half = dim / 2;
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(values.device());
  // exp(-log(max_period) * arange(half) / half) in float32, multiplied then divided as sd-scripts writes it:
  // Chroma embeds indices up to ~3.4e5 (times 1000), where one ulp of a frequency moves the sine.
  const torch::Tensor freqs = torch::exp(torch::arange(half, options) * -std::log(maxPeriod) / static_cast<double>(half));
  const torch::Tensor args = values.to(torch::kFloat32).unsqueeze(-1) * freqs;
  torch::Tensor embedding = torch::cat({torch::cos(args), torch::sin(args)}, -1);
  if (dim % 2) embedding = torch::cat({embedding, torch::zeros_like(embedding.narrow(-1, 0, 1))}, -1);
  return embedding;
}

}  // namespace sinter::models
