#pragma once
// Between RGB images and the VAE's input: float CHW in [-1, 1] (sd-scripts' IMAGE_TRANSFORMS:
// ToTensor then Normalize([0.5], [0.5])).
#include <torch/torch.h>

#include "data/image_decode.h"

namespace sinter::data {

// [3, H, W] float32 on the CPU, value/127.5 - 1.
torch::Tensor imageToTensor(const RgbImage& image);
// The inverse for a [3, H, W] tensor in [-1, 1] (any device or float type); values are clamped.
RgbImage tensorToImage(const torch::Tensor& chw);
// A loss mask or alpha plane as [H, W] float32 in [0, 1] on the CPU, value/255.
torch::Tensor maskToTensor(const GrayImage& plane);

}  // namespace sinter::data
