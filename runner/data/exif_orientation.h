#pragma once
// EXIF orientation (tag 0x0112) of JPEG files: cameras store the sensor's pixels and record how
// to turn them; training on the raw pixels would teach sideways photos.
#include <cstdint>
#include <string>

#include "data/image_decode.h"

namespace sinter::data {

// 1..8 as EXIF defines it; 1 (as stored) when the file has no readable orientation.
int jpegExifOrientation(const std::uint8_t* data, size_t size);

// Returns the image turned the way the orientation says it is displayed.
RgbImage applyExifOrientation(const RgbImage& stored, int orientation);

// True for orientations 5..8, which swap width and height.
inline bool orientationSwapsAxes(int orientation) { return orientation >= 5 && orientation <= 8; }

}  // namespace sinter::data
