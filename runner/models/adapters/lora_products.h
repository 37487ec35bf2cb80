#pragma once
// The GEMM pieces the frozen-Linear-with-LoRA autograd functions share (frozen_linear_lora.h, one
// Linear; frozen_joint_linear_lora.h, several on one input): a scaled product into a fresh output,
// and the kept gradient buffer a backward pass adds a LoRA weight's gradient into.
#include <torch/torch.h>

namespace sinter::models {

// `alpha` a b with a fresh output: addmm_ with beta 0 ignores the empty tensor's contents, and the
// scale rides in the GEMM instead of a kernel of its own.
torch::Tensor scaledProduct(const torch::Tensor& a, const torch::Tensor& b, double alpha);

// Where the backward pass can add a trained tensor's gradient itself: its kept gradient buffer
// (the compute copies' flat buffer, train/base/compute_copies.h, or a leaf's gradient kept between
// steps). Adding the product there in its GEMM spares AccumulateGrad's addition of a fresh one, a
// kernel per tensor and step (two per LoRA module; thousands a step in SDXL with its text
// encoders). The accumulator still runs, with no gradient, so its hooks (data-parallel readiness,
// fused_backward_pass) fire after the buffer holds the sum. Undefined where autograd must do it: a
// cast copy (not a leaf), no buffer yet, one of another dtype or layout, or a pass that returns
// gradients rather than accumulating them (torch::autograd::grad, as per-block capture runs it).
torch::Tensor keptGradient(const torch::Tensor& t);

}  // namespace sinter::models
