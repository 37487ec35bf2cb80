#pragma once
// Sinusoidal embedding of a timestep (or any scalar), as the SDXL UNet and its size conditioning
// use it: [cos(t * f_0..f_{half-1}), sin(t * f_0..f_{half-1})] with f_i = max_period^(-i/half).
#include <torch/torch.h>

namespace sinter::models {

// values: any shape [...]; returns [..., dim] in float32 on values' device.
torch::Tensor timestepEmbedding(const torch::Tensor& values, int64_t dim, double maxPeriod = 10000.0);

}  // namespace sinter::models
