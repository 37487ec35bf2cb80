#pragma once
// FLUX's latent tokens: the AE's [B, 16, H, W] latents cut into 2x2 patches, one token of 64
// channels per patch (sd-scripts' pack_latents: "b c (h ph) (w pw) -> b (h w) (c ph pw)"), the
// inverse, and the position ids the transformer's RoPE reads.
#include <torch/torch.h>

namespace sinter::models {

// [B, C, H, W] (H, W even) -> [B, (H/2)(W/2), C*4]; channel index c*4 + ph*2 + pw.
torch::Tensor packFluxLatents(const torch::Tensor& latents);
// [B, h*w, C*4] -> [B, C, 2h, 2w] for a packed grid of h x w tokens.
torch::Tensor unpackFluxLatents(const torch::Tensor& tokens, int64_t packedHeight, int64_t packedWidth);

// [B, h*w, 3] float32: token (row, col) of the packed grid has ids (0, row, col), row-major.
torch::Tensor fluxImageIds(int64_t batch, int64_t packedHeight, int64_t packedWidth,
                           const torch::TensorOptions& options = torch::kFloat32);
// [B, tokens, 3] zeros: text tokens all sit at position 0 on every axis.
torch::Tensor fluxTextIds(int64_t batch, int64_t tokens, const torch::TensorOptions& options = torch::kFloat32);

}  // namespace sinter::models
