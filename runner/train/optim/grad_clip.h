#pragma once
// Gradient clipping by global L2 norm (torch.nn.utils.clip_grad_norm_) without a host sync: the
// clip coefficient is a device tensor, clamped to 1 and multiplied into every gradient.
#include <torch/torch.h>

#include <vector>

namespace sinter::train {

// Returns the total norm before clipping (0-dim float32 tensor on the device); parameters without
// a gradient are skipped. maxNorm <= 0 computes the norm without clipping.
torch::Tensor clipGradNorm(const std::vector<torch::Tensor>& params, double maxNorm);
// The same for gradients held apart from their parameters (a swapped block's weight gradient).
torch::Tensor clipGradients(std::vector<torch::Tensor> grads, double maxNorm);

}  // namespace sinter::train
