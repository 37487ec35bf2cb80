#pragma once
// Sample images as PNG files with their settings in text chunks (tEXt for ASCII text, iTXt for
// UTF-8), written atomically.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace sinter::sample {

using PngText = std::vector<std::pair<std::string, std::string>>;  // keyword, text

// `rgb`: [H, W, 3] uint8 on the CPU. Keywords are 1-79 Latin letters, digits, spaces or
// punctuation, as PNG allows. Throws std::runtime_error naming the path.
void writePng(const std::string& path, const torch::Tensor& rgb, const PngText& text);

// The tEXt and uncompressed iTXt chunks of a PNG file, in file order (what writePng wrote). Throws
// std::runtime_error naming the path for a file that cannot be read or is no PNG.
PngText readPngText(const std::string& path);

// An image of the decoder's range (about [-1, 1]), [1, 3, H, W] on any device, as [H, W, 3] uint8
// on the CPU: clamped, mapped to 0..255 and rounded, as diffusers' numpy_to_pil does.
torch::Tensor imageToRgb8(const torch::Tensor& decoded);

}  // namespace sinter::sample
