#pragma once
// sd-scripts' masked loss (library/custom_train_functions.py apply_masked_loss, used with
// alpha_mask or masked_loss): each image's mask [H, W] in [0, 1] brought to the loss's spatial
// size by F.interpolate(mode="area"), and the per-element loss multiplied by it before the mean
// over all but the batch. The mean is not divided by the mask's area, as there: a half-masked
// image weighs about half.
#include <torch/torch.h>

namespace sinter::train {

// [B, H, W] masks (any float type, any device) -> [B, 1, height, width] float32 on their device,
// area-averaged as F.interpolate(mode="area") does (adaptive average pooling).
torch::Tensor lossMaskAt(const torch::Tensor& masks, int64_t height, int64_t width);

// loss [B, C, h, w] times mask [B, 1, h, w] (undefined: the loss unchanged).
torch::Tensor applyLossMask(const torch::Tensor& loss, const torch::Tensor& mask);

}  // namespace sinter::train
