#include "train/optim/blockwise_quantizer.h"

#include <cmath>
#include <vector>

namespace sinter::train {

torch::Tensor dynamicQuantizationMap(bool isSigned, torch::Device device) {
  // create_dynamic_map's defaults: 7 exponent bits of 8. Exponent i (10^(i - 6)) holds 2^i
  // fractions (signed, each with both signs) or 2^(i + 1) (unsigned): the midpoints of a linspace
  // over [0.1, 1]. Then 0 and 1.0; its "additional items" are 2^(7 - 7) - 1 = 0.
  constexpr int kMaxExponentBits = 7, kNonSignBits = 7;
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  std::vector<torch::Tensor> parts;
  for (int i = 0; i < kMaxExponentBits; ++i) {
    const int shift = i + kNonSignBits - kMaxExponentBits + (isSigned ? 0 : 1);
    const int64_t fractionItems = (int64_t{1} << shift) + 1;
    const torch::Tensor boundaries = torch::linspace(0.1, 1.0, fractionItems, f32);
    const torch::Tensor means = (boundaries.slice(0, 0, fractionItems - 1) + boundaries.slice(0, 1)) / 2.0;
    // Python's 10 ** (i - 6) is a double; times a float32 tensor it rounds to float32.
    const double scale = std::pow(10.0, i - (kMaxExponentBits - 1));
    parts.push_back(means * scale);
    if (isSigned) parts.push_back(means * -scale);
  }
  parts.push_back(torch::tensor({0.0f, 1.0f}, f32));
  return std::get<0>(torch::cat(parts).sort()).to(device);
}

BlockwiseQuantizer::BlockwiseQuantizer(bool isSigned, torch::Device device)
    : signed_(isSigned), map_(dynamicQuantizationMap(isSigned, device)) {
  const int64_t n = map_.size(0);
  // As bitsandbytes' quantize_2D decides between neighbours: (lower + upper) * 0.5f in float32.
  midpoints_ = (map_.slice(0, 0, n - 1) + map_.slice(0, 1)) * 0.5;
}

int64_t BlockwiseQuantizer::blockCount(int64_t numel) { return (numel + kOptimizerStateBlockSize - 1) / kOptimizerStateBlockSize; }

std::pair<torch::Tensor, torch::Tensor> BlockwiseQuantizer::quantize(const torch::Tensor& values) const {
  const torch::Tensor map = map_.to(values.device()), midpoints = midpoints_.to(values.device());
  torch::Tensor absmax = values.abs().amax(1);
  // A block of zeros divides by 1 instead of 0: every value stays 0 and takes the code of 0
  // (bitsandbytes divides 0 by 0 there; its codes dequantize to 0 just the same).
  const torch::Tensor divisor = absmax + (absmax == 0).to(torch::kFloat32);
  const torch::Tensor normalized = values / divisor.unsqueeze(1);
  // The nearest map entry: the number of decision boundaries below the value.
  torch::Tensor codes = torch::bucketize(normalized, midpoints);
  if (signed_) {
    // bitsandbytes: "make sure state1 term has still the same sign after quantization".
    const torch::Tensor wrongSign = torch::signbit(map.take(codes)) != torch::signbit(values);
    const torch::Tensor towardSign = (values > 0).to(torch::kLong) * 2 - 1;
    codes = codes + wrongSign.to(torch::kLong) * towardSign;
  }
  return {codes.to(torch::kUInt8), absmax};
}

torch::Tensor BlockwiseQuantizer::dequantize(const torch::Tensor& codes, const torch::Tensor& absmax) const {
  return map_.to(codes.device()).take(codes.to(torch::kLong)) * absmax.unsqueeze(1);
}

}  // namespace sinter::train
