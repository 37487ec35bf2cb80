#pragma once
// A frozen Linear with a LoRA adapter as one autograd function: y = x W^T + b + alpha (x D^T) U^T,
// for W and b that take no gradient. Each direction is a skinny GEMM that writes the output and
// the base GEMM that accumulates into it in its epilogue: forward, the up projection (with the
// bias) and then x W^T; backward, the down projection's input gradient and then g W (autograd
// would write both [N, in] gradients and add them in a kernel of its own, every adapted module,
// every step).
#include <torch/torch.h>

#include <memory>

#include "models/weights/served_weight.h"

namespace sinter::models {

// x: contiguous [N, in] or [B, L, in]; weight [out, in] and bias [out] (or undefined) not requiring
// grad; down [rank, in] and up [out, rank] in x's dtype. Gradients for x, down and up. With
// `served` (fp8_base, blocks_to_swap; not a trained one), the weight is served->get() in x's dtype,
// asked for in the forward pass and again in the backward pass (nothing of it kept between them),
// and `weight` is the module's stored form.
torch::Tensor frozenLinearWithLora(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                   const torch::Tensor& down, const torch::Tensor& up, double alpha,
                                   const std::shared_ptr<ServedWeight>& served = nullptr);

}  // namespace sinter::models
