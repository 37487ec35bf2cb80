#include "models/unet/sdxl_size_conditioning.h"

#include <stdexcept>

#include "models/unet/timestep_embedding.h"

namespace sinter::models {

namespace {

torch::Tensor embedPairs(const torch::Tensor& pairs, const char* name) {
  if (pairs.dim() != 2 || pairs.size(1) != 2)
    throw std::invalid_argument(std::string("SDXL size conditioning: ") + name + " must be [batch, 2], got " +
                                c10::str(pairs.sizes()));
  // [batch, 2] -> [batch, 2, 256] -> [batch, 512]: the first value's embedding, then the second's.
  return timestepEmbedding(pairs, kSdxlSizeEmbeddingDim).flatten(1);
}

}  // namespace

torch::Tensor sdxlSizeEmbeddings(const torch::Tensor& originalSize, const torch::Tensor& cropTopLeft,
                                 const torch::Tensor& targetSize) {
  return torch::cat({embedPairs(originalSize, "original size"), embedPairs(cropTopLeft, "crop top-left"),
                     embedPairs(targetSize, "target size")},
                    1);
}

torch::Tensor sdxlAdmVector(const torch::Tensor& pooled, const torch::Tensor& originalSize,
                            const torch::Tensor& cropTopLeft, const torch::Tensor& targetSize) {
  const torch::Tensor sizes = sdxlSizeEmbeddings(originalSize.to(pooled.device()), cropTopLeft.to(pooled.device()),
                                                 targetSize.to(pooled.device()));
  if (sizes.size(0) != pooled.size(0))
    throw std::invalid_argument("SDXL adm vector: pooled batch " + std::to_string(pooled.size(0)) +
                                " does not match size conditioning batch " + std::to_string(sizes.size(0)));
  return torch::cat({pooled, sizes.to(pooled.scalar_type())}, 1);
}

}  // namespace sinter::models
