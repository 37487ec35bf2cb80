#pragma once
// Linears that read one input (self-attention's to_q, to_k, to_v) run as one: their weights are the
// row blocks of one buffer, so one GEMM computes their outputs side by side, and their LoRA adapters'
// down projections run as one (adapters/frozen_joint_linear_lora.h). Used only where it computes
// exactly what the Linears would one by one (jointLinearApplies); the Linears, their weights' keys
// and their adapters stay as they are.
#include <torch/torch.h>

#include <vector>

#include "models/layers/linear.h"

namespace sinter::models {

// Whether the joint form computes what `linears` would on x: x a contiguous [N, in] or [B, L, in];
// every weight frozen, of x's dtype and device, without bias, not served (fp8_base, blocks_to_swap)
// nor under a LyCORIS adapter; and either no LoRA adapter or one on each, of one rank and dtype,
// drawing no dropout in this pass.
bool jointLinearApplies(const std::vector<LinearImpl*>& linears, const torch::Tensor& x);

// The Linears' weights as one [sum of out, in] tensor whose row blocks they are. Where they are
// already (nothing copied: a view of their buffer), or else made so now: copied into one new
// buffer, and each weight tensor pointed at its rows (Tensor::set_, which every holder of the
// parameter sees: its checkpoint key reads and writes the buffer). A move (`.to(device/dtype)`, a
// cast) gives them buffers of their own again, and the next call joins them again. Undefined where
// they are not joined and a CUDA graph is being captured on their device: the copy would be
// recorded, and replayed from buffers freed once the capture ends.
torch::Tensor jointWeightRows(const std::vector<LinearImpl*>& linears);

// Their outputs side by side ([..., sum of out]) with `joint` from jointWeightRows: one GEMM, and
// with LoRA adapters frozenJointLinearWithLora.
torch::Tensor jointLinearForward(const std::vector<LinearImpl*>& linears, const torch::Tensor& joint, const torch::Tensor& x);

}  // namespace sinter::models
