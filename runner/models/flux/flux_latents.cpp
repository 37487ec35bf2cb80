#include "models/flux/flux_latents.h"

#include <stdexcept>

namespace sinter::models {

torch::Tensor packFluxLatents(const torch::Tensor& latents) {
  if (latents.dim() != 4 || latents.size(2) % 2 || latents.size(3) % 2)
    throw std::invalid_argument("FLUX latents must be [batch, channels, h, w] with h and w even, got " +
                                c10::str(latents.sizes()));
  const int64_t b = latents.size(0), c = latents.size(1), h = latents.size(2) / 2, w = latents.size(3) / 2;
  // [B, C, h, ph, w, pw] -> [B, h, w, C, ph, pw]
  return latents.reshape({b, c, h, 2, w, 2}).permute({0, 2, 4, 1, 3, 5}).reshape({b, h * w, c * 4});
}

torch::Tensor unpackFluxLatents(const torch::Tensor& tokens, int64_t packedHeight, int64_t packedWidth) {
  if (tokens.dim() != 3 || tokens.size(1) != packedHeight * packedWidth || tokens.size(2) % 4)
    throw std::invalid_argument("FLUX latent tokens must be [batch, " + std::to_string(packedHeight) + "*" +
                                std::to_string(packedWidth) + ", channels*4], got " + c10::str(tokens.sizes()));
  const int64_t b = tokens.size(0), c = tokens.size(2) / 4;
  // [B, h, w, C, ph, pw] -> [B, C, h, ph, w, pw]
  return tokens.reshape({b, packedHeight, packedWidth, c, 2, 2})
      .permute({0, 3, 1, 4, 2, 5})
      .reshape({b, c, packedHeight * 2, packedWidth * 2});
}

torch::Tensor fluxImageIds(int64_t batch, int64_t packedHeight, int64_t packedWidth, const torch::TensorOptions& options) {
  const torch::Tensor rows = torch::arange(packedHeight, options).view({packedHeight, 1}).expand({packedHeight, packedWidth});
  const torch::Tensor cols = torch::arange(packedWidth, options).view({1, packedWidth}).expand({packedHeight, packedWidth});
  const torch::Tensor ids = torch::stack({torch::zeros_like(rows), rows, cols}, -1).reshape({1, packedHeight * packedWidth, 3});
  return ids.expand({batch, packedHeight * packedWidth, 3}).contiguous();
}

torch::Tensor fluxTextIds(int64_t batch, int64_t tokens, const torch::TensorOptions& options) {
  return torch::zeros({batch, tokens, 3}, options);
}

}  // namespace sinter::models
