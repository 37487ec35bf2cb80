#pragma once
// Tensors that lie one after another in one buffer (the masters and their gradients of
// train/base/compute_copies.h, the optimizer's moments it allocates alike) as one 1-D tensor, so a
// multi-tensor kernel (the fused AdamW step, the gradient norm, zeroing) runs over one span in a few
// launches at the memory's bandwidth, where one list entry per LoRA factor (1,500 in SDXL) took 41
// launches of the fused AdamW kernel, each over small tensors. Elementwise work gives the same values
// either way.
#include <torch/torch.h>

#include <vector>

namespace sinter::train {

// The 1-D view of the elements of `tensors` where each is contiguous and starts where the one before
// ends, in one storage, all of one dtype and device; undefined otherwise (or where `tensors` is empty).
torch::Tensor adjacentSpan(const std::vector<torch::Tensor>& tensors);

// {adjacentSpan(tensors)} where it is defined, else `tensors`: the list to give a multi-tensor
// operation that only reads or writes elements one by one.
std::vector<torch::Tensor> asOneSpanIfAdjacent(const std::vector<torch::Tensor>& tensors);

// Zeroed 1-D buffers shaped as `like`, one after another in one new buffer (like's dtype and device).
std::vector<torch::Tensor> zerosAdjacent(const std::vector<torch::Tensor>& like);

}  // namespace sinter::train
