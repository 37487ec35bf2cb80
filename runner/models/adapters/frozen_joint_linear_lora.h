#pragma once
// Frozen Linears that read one input, each with a LoRA adapter (self-attention's to_q, to_k, to_v
// under kohya's networks.lora), as one autograd function over their weights joined: their outputs
// side by side, y = [y_1 | y_2 | ...] with y_i = x W_i^T + alpha_i (x D_i^T) U_i^T. One GEMM of
// the joint weight where there were one per Linear, and one down projection of the summed rank
// [D_1; D_2; ...] where there were one per adapter; as in frozen_linear_lora.h, each direction's
// skinny products write the output first and the base GEMM accumulates into it in its epilogue:
// forward, the up projections into their column blocks of y, then x W^T; backward, the down
// projection's input gradient, then g W. The LoRA gradients go into their kept buffers where they
// have them (lora_products.h).
// A call of many parts (every cross-attention's to_k and to_v on the U-Net's text context: 140 in
// SDXL) batches where self-attention's three parts run one GEMM each: consecutive parts of one
// width, rank and factor (a run) compute their up projections, their dh columns and their up
// gradients as one batched GEMM each over their stacked ups; every down's gradient is one GEMM;
// the gradients with kept buffers are added into them by one multi-tensor addition (_foreach_add_).
#include <torch/torch.h>

#include <vector>

namespace sinter::models {

// One adapter: down [rank, in] and up [out, rank] in x's dtype, and its factor (scale times multiplier).
struct JointLoraPart {
  torch::Tensor down, up;
  double alpha = 1.0;
};

// x: contiguous [N, in] or [B, L, in]; weight: [sum of the ups' out, in], the Linears' weights as
// its row blocks in the parts' order, not requiring grad and without bias. Returns [..., sum of
// out]; gradients for x and every down and up.
torch::Tensor frozenJointLinearWithLora(const torch::Tensor& x, const torch::Tensor& weight,
                                        const std::vector<JointLoraPart>& parts);

}  // namespace sinter::models
