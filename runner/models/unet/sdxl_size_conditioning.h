#pragma once
// SDXL's micro-conditioning: original size (h, w), crop top-left (top, left) and target size
// (h, w), each value embedded sinusoidally in 256 dims, appended after the pooled text embedding
// to make the UNet's adm vector y (1280 + 6 * 256 = 2816 at full size).
#include <torch/torch.h>

namespace sinter::models {

constexpr int64_t kSdxlSizeEmbeddingDim = 256;
constexpr int64_t kSdxlSizeConditioningDim = 6 * kSdxlSizeEmbeddingDim;  // 1536

// Each argument is [batch, 2] (any numeric type). Returns [batch, 1536] float32.
torch::Tensor sdxlSizeEmbeddings(const torch::Tensor& originalSize, const torch::Tensor& cropTopLeft,
                                 const torch::Tensor& targetSize);

// pooled: [batch, P] (bigG's projected pooled output); returns y = [batch, P + 1536] in pooled's dtype.
torch::Tensor sdxlAdmVector(const torch::Tensor& pooled, const torch::Tensor& originalSize,
                            const torch::Tensor& cropTopLeft, const torch::Tensor& targetSize);

}  // namespace sinter::models
