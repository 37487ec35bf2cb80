#pragma once
// color_aug: sd-scripts' weak colour augmentation (library/train_util.py, AugHelper.color_aug), on
// an image after its resize and crop. A third of the images change: half of those get a hue shift
// of up to ±8 OpenCV hue units (±16°), the others each channel value v raised to γ in [0.95, 1.05)
// (v^γ on 0-255, clipped, as sd-scripts computes it). sd-scripts converts the RGB pixels with
// OpenCV's BGR↔HSV; the same 8-bit conversions are done here, on the channels in the same order.
#include "data/image_decode.h"
#include "data/random.h"

namespace sinter::data {

// Draws from `rng` as sd-scripts draws from Python's random: the chance, then the choice, then
// the amount.
void colorAugment(RgbImage& image, Rng& rng);

// The two changes alone (tests): a hue shift in OpenCV's 0-180 units, a gamma.
void shiftHue(RgbImage& image, double hueShift);
void applyGamma(RgbImage& image, double gamma);

}  // namespace sinter::data
