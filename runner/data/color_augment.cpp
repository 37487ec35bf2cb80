#include "data/color_augment.h"

#include <algorithm>
#include <cmath>

namespace sinter::data {

namespace {

// OpenCV's 8-bit BGR→HSV (imgproc/src/color_hsv.simd.hpp, RGB2HSV_b): fixed point with 12
// fractional bits; H in [0, 180), S and V in [0, 255].
constexpr int kShift = 12;

void bgrToHsv(int b, int g, int r, int& h, int& s, int& v) {
  v = std::max({b, g, r});
  const int vmin = std::min({b, g, r});
  const int diff = v - vmin;
  const int vr = v == r ? -1 : 0;
  const int vg = v == g ? -1 : 0;
  const int sdiv = v == 0 ? 0 : static_cast<int>(std::lround((255 << kShift) / static_cast<double>(v)));
  s = (diff * sdiv + (1 << (kShift - 1))) >> kShift;
  int hue = (vr & (g - b)) + (~vr & ((vg & (b - r + 2 * diff)) + ((~vg) & (r - g + 4 * diff))));
  const int hdiv = diff == 0 ? 0 : static_cast<int>(std::lround((180 << kShift) / (6.0 * diff)));
  hue = (hue * hdiv + (1 << (kShift - 1))) >> kShift;
  h = hue + (hue < 0 ? 180 : 0);
}

std::uint8_t toByte(float x) { return static_cast<std::uint8_t>(std::clamp(static_cast<int>(std::nearbyint(x)), 0, 255)); }

// OpenCV's 8-bit HSV→BGR (HSV2RGB_b): through floats, rounded to the nearest byte.
void hsvToBgr(int h, int s, int v, std::uint8_t& b, std::uint8_t& g, std::uint8_t& r) {
  const float vf = static_cast<float>(v) * (1.f / 255.f);
  const float sf = static_cast<float>(s) * (1.f / 255.f);
  float bf = vf, gf = vf, rf = vf;
  if (sf != 0.f) {
    static const int sectorData[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
    float hf = static_cast<float>(h) * (6.f / 180.f);
    while (hf < 0.f) hf += 6.f;
    while (hf >= 6.f) hf -= 6.f;
    int sector = static_cast<int>(std::floor(hf));
    hf -= static_cast<float>(sector);
    if (sector < 0 || sector >= 6) {
      sector = 0;
      hf = 0.f;
    }
    const float tab[4] = {vf, vf * (1.f - sf), vf * (1.f - sf * hf), vf * (1.f - sf * (1.f - hf))};
    bf = tab[sectorData[sector][0]];
    gf = tab[sectorData[sector][1]];
    rf = tab[sectorData[sector][2]];
  }
  b = toByte(bf * 255.f);
  g = toByte(gf * 255.f);
  r = toByte(rf * 255.f);
}

}  // namespace

void shiftHue(RgbImage& image, double hueShift) {
  // sd-scripts hands the RGB array to cv2.COLOR_BGR2HSV: channel 0 is read as blue.
  for (size_t i = 0; i + 2 < image.pixels.size(); i += 3) {
    std::uint8_t* p = image.pixels.data() + i;
    int h, s, v;
    bgrToHsv(p[0], p[1], p[2], h, s, v);
    // (hsv[..., 0] + hue_shift) % 180 in float64, stored back into uint8: truncated.
    h = static_cast<int>(std::fmod(static_cast<double>(h) + hueShift, 180.0));
    hsvToBgr(h, s, v, p[0], p[1], p[2]);
  }
}

void applyGamma(RgbImage& image, double gamma) {
  // np.clip(image ** gamma, 0, 255).astype(np.uint8): on 0-255 values, truncated.
  std::uint8_t table[256];
  for (int v = 0; v < 256; ++v) table[v] = static_cast<std::uint8_t>(std::clamp(std::pow(static_cast<double>(v), gamma), 0.0, 255.0));
  for (auto& p : image.pixels) p = table[p];
}

void colorAugment(RgbImage& image, Rng& rng) {
  constexpr double kHueShiftLimit = 8;
  if (rng.uniform() > 0.33) return;
  if (rng.uniform() > 0.5) {
    double shift = -kHueShiftLimit + 2 * kHueShiftLimit * rng.uniform();
    if (shift < 0) shift += 180;
    shiftHue(image, shift);
  } else {
    applyGamma(image, 0.95 + 0.1 * rng.uniform());
  }
}

}  // namespace sinter::data
