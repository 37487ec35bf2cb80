#pragma once
// A Conv2d whose kernel is served (SDXL's fp8_base: stored as float8, models/weights/served_weight.h) and
// frozen: the kernel is asked for in the activations' dtype when the forward runs and again when
// the backward pass needs it, so no upcast copy stays saved for the backward pass (autograd's own
// conv2d would keep one per layer between the passes, more than the float8 form saves).
#include <torch/torch.h>

#include <memory>

#include "models/weights/served_weight.h"

namespace sinter::models {

// conv2d(x, W, bias) with W from `weight` ([out, in, k, k]), square stride and padding, no groups
// or dilation (the U-Net's convolutions); the gradient reaches x only (dx = conv_transpose2d(dy, W)).
torch::Tensor frozenConv2d(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias, int64_t stride,
                           int64_t padding);

}  // namespace sinter::models
