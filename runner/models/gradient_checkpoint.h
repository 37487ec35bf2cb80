#pragma once
// Gradient checkpointing: run a block without keeping its activations, and run it again in the
// backward pass to get its gradients (PyTorch's reentrant torch.utils.checkpoint). The RNG state
// (for dropout) and autocast are restored for the recomputation, so it matches the forward.
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace sinter::models {

using CheckpointedBlock = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

// Gradients reach the block's parameters (accumulated into .grad during backward) and every
// input that requires grad.
torch::Tensor runCheckpointed(CheckpointedBlock block, const std::vector<torch::Tensor>& inputs);

}  // namespace sinter::models
