#include "data/image_tensor.h"

#include <cstring>
#include <stdexcept>

namespace sinter::data {

torch::Tensor imageToTensor(const RgbImage& image) {
  auto hwc = torch::from_blob(const_cast<std::uint8_t*>(image.pixels.data()), {image.height, image.width, 3},
                              torch::kUInt8);
  return hwc.permute({2, 0, 1}).to(torch::kFloat32).div_(127.5).sub_(1.0).contiguous();
}

torch::Tensor maskToTensor(const GrayImage& plane) {
  auto hw = torch::from_blob(const_cast<std::uint8_t*>(plane.pixels.data()), {plane.height, plane.width}, torch::kUInt8);
  return hw.to(torch::kFloat32).div_(255.0).contiguous();
}

RgbImage tensorToImage(const torch::Tensor& chw) {
  if (chw.dim() != 3 || chw.size(0) != 3) throw std::invalid_argument("tensorToImage: expected a [3, H, W] tensor");
  auto hwc = ((chw.detach().to(torch::kCPU, torch::kFloat32).clamp(-1.0, 1.0) + 1.0) * 127.5)
                 .round()
                 .to(torch::kUInt8)
                 .permute({1, 2, 0})
                 .contiguous();
  RgbImage out(static_cast<int>(chw.size(2)), static_cast<int>(chw.size(1)));
  std::memcpy(out.pixels.data(), hwc.data_ptr<std::uint8_t>(), out.pixels.size());
  return out;
}

}  // namespace sinter::data
