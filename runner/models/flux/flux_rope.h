#pragma once
// FLUX's rotary position embedding (BFL's EmbedND, rope, apply_rope). Each token has a position id
// per axis (txt: (0, 0, 0); img: (0, row, col)); axis a owns axesDim[a] of the head's channels,
// and channel pair i of that axis turns by the angle pos_a * theta^(-2i / axesDim[a]).
#include <torch/torch.h>

#include <vector>

namespace sinter::models {

// ids: [B, L, axes] -> the rotation matrices [B, 1, L, headDim/2, 2, 2] (float32), entry
// [..., i, :, :] = [[cos, -sin], [sin, cos]] of pair i's angle. Angles are computed in float64
// as BFL does, then rounded once.
torch::Tensor fluxRopeRotations(const torch::Tensor& ids, const std::vector<int64_t>& axesDim, double theta);

// x: [B, heads, L, headDim]: each channel pair (2i, 2i+1) rotated by rotations[..., i, :, :];
// computed in float32, returned in x's dtype.
torch::Tensor applyFluxRope(const torch::Tensor& x, const torch::Tensor& rotations);

}  // namespace sinter::models
