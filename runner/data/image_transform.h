#pragma once
// Resizing, cropping and mirroring RGB images (and one-channel planes: alpha, loss masks, which
// go through the same geometry) for bucketing and flip_aug.
#include <string>

#include "data/image_decode.h"

namespace sinter::data {

// sd-scripts' resize_interpolation names. Default picks as sd-scripts does: "area" when shrinking
// in both directions, else "lanczos". stb has no Lanczos or exact area filter, so "lanczos" and
// "bicubic" use Catmull-Rom and "area"/"box" stb's box filter (area averaging when shrinking).
enum class ResizeFilter { Default, Area, Box, Lanczos, Bicubic, Bilinear, Nearest };
// Throws std::invalid_argument listing the accepted names.
ResizeFilter resizeFilterFromString(const std::string& name);

RgbImage resizeImage(const RgbImage& in, int width, int height, ResizeFilter filter = ResizeFilter::Default);
// The region [left, left+width) x [top, top+height); must lie inside the image.
RgbImage cropImage(const RgbImage& in, int left, int top, int width, int height);
RgbImage flipHorizontal(const RgbImage& in);

// The same for a one-channel plane, each channel resized on its own as for RGB.
GrayImage resizeImage(const GrayImage& in, int width, int height, ResizeFilter filter = ResizeFilter::Default);
GrayImage cropImage(const GrayImage& in, int left, int top, int width, int height);
GrayImage flipHorizontal(const GrayImage& in);

}  // namespace sinter::data
