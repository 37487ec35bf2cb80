#include "data/exif_orientation.h"

namespace sinter::data {
namespace {

// Reads 16/32-bit integers in the TIFF block's byte order, refusing reads past its end.
struct TiffReader {
  const std::uint8_t* base;
  size_t size;
  bool bigEndian;
  bool u16(size_t at, unsigned& out) const {
    if (at + 2 > size) return false;
    out = bigEndian ? (base[at] << 8 | base[at + 1]) : (base[at + 1] << 8 | base[at]);
    return true;
  }
  bool u32(size_t at, std::uint32_t& out) const {
    if (at + 4 > size) return false;
    const std::uint8_t* p = base + at;
    out = bigEndian ? (std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3])
                    : (std::uint32_t(p[3]) << 24 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[1]) << 8 | p[0]);
    return true;
  }
};

int orientationFromTiff(const std::uint8_t* tiff, size_t size) {
  if (size < 8) return 1;
  bool big;
  if (tiff[0] == 'I' && tiff[1] == 'I') big = false;
  else if (tiff[0] == 'M' && tiff[1] == 'M') big = true;
  else return 1;
  TiffReader r{tiff, size, big};
  std::uint32_t ifd0 = 0;
  unsigned count = 0;
  if (!r.u32(4, ifd0) || !r.u16(ifd0, count)) return 1;
  for (unsigned i = 0; i < count; ++i) {
    const size_t entry = ifd0 + 2 + size_t(i) * 12;
    unsigned tag = 0, type = 0, value = 0;
    if (!r.u16(entry, tag) || !r.u16(entry + 2, type)) return 1;
    if (tag != 0x0112) continue;
    if (type != 3 || !r.u16(entry + 8, value)) return 1;  // SHORT, stored in the value field
    return (value >= 1 && value <= 8) ? int(value) : 1;
  }
  return 1;
}

}  // namespace

int jpegExifOrientation(const std::uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 1;
  size_t at = 2;
  while (at + 4 <= size) {
    if (data[at] != 0xFF) return 1;
    const std::uint8_t marker = data[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;  // image data starts: no EXIF before it
    const size_t length = size_t(data[at + 2]) << 8 | data[at + 3];
    if (length < 2 || at + 2 + length > size) return 1;
    const std::uint8_t* payload = data + at + 4;
    const size_t payloadSize = length - 2;
    if (marker == 0xE1 && payloadSize >= 6 && std::string(reinterpret_cast<const char*>(payload), 6) ==
                                                    std::string("Exif\0\0", 6)) {
      return orientationFromTiff(payload + 6, payloadSize - 6);
    }
    at += 2 + length;
  }
  return 1;
}

RgbImage applyExifOrientation(const RgbImage& in, int orientation) {
  if (orientation <= 1 || orientation > 8) return in;
  const int W = in.width, H = in.height;
  const bool swap = orientationSwapsAxes(orientation);
  RgbImage out(swap ? H : W, swap ? W : H);
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;
      switch (orientation) {
        case 2: sx = W - 1 - x; sy = y; break;              // mirrored
        case 3: sx = W - 1 - x; sy = H - 1 - y; break;      // upside down
        case 4: sx = x; sy = H - 1 - y; break;              // mirrored vertically
        case 5: sx = y; sy = x; break;                      // transposed
        case 6: sx = y; sy = H - 1 - x; break;              // turned 90 degrees clockwise
        case 7: sx = W - 1 - y; sy = H - 1 - x; break;      // transverse
        case 8: sx = W - 1 - y; sy = x; break;              // turned 90 degrees counter-clockwise
      }
      const std::uint8_t* s = in.pixel(sx, sy);
      std::uint8_t* d = out.pixel(x, y);
      d[0] = s[0];
      d[1] = s[1];
      d[2] = s[2];
    }
  }
  return out;
}

}  // namespace sinter::data
