#pragma once
// bitsandbytes' blockwise 8-bit quantization of optimizer states (its 8-bit optimizers since
// 0.44: blocks of 256 values): each block of a flattened state is divided by its largest
// magnitude (absmax) and every value becomes the index of the nearest entry of the dynamic
// quantization map (functional.create_dynamic_map: signed for a first moment, unsigned for a
// second). Tensor ops only, on any device, with no host read (a captured step may run them).
#include <torch/torch.h>

#include <cstdint>
#include <utility>

namespace sinter::train {

// bitsandbytes' block size for optimizer states (optim/optimizer.py, "blocksize = 256"; 2048
// before 0.44.0).
inline constexpr int64_t kOptimizerStateBlockSize = 256;

// The 256 float32 values of create_dynamic_map(signed, max_exponent_bits=7, total_bits=8),
// sorted, computed with the same float32 operations (on the CPU, then moved to `device`).
torch::Tensor dynamicQuantizationMap(bool isSigned, torch::Device device = torch::kCPU);

class BlockwiseQuantizer {
 public:
  BlockwiseQuantizer(bool isSigned, torch::Device device);

  // Blocks of kOptimizerStateBlockSize needed for `numel` values (the last one padded).
  static int64_t blockCount(int64_t numel);

  // `values` (float32, [blocks, kOptimizerStateBlockSize]) as uint8 codes of the same shape and
  // the float32 absmax of each block ([blocks]). Rounds to the nearest map entry; a signed state
  // keeps its sign (a small negative value that rounds to 0 takes the smallest negative code),
  // as bitsandbytes' kernels do. A block of zeros has absmax 0 and the code of 0.
  std::pair<torch::Tensor, torch::Tensor> quantize(const torch::Tensor& values) const;
  // The float32 values [blocks, kOptimizerStateBlockSize] that `codes` and `absmax` stand for.
  torch::Tensor dequantize(const torch::Tensor& codes, const torch::Tensor& absmax) const;

  const torch::Tensor& map() const { return map_; }

 private:
  bool signed_;
  torch::Tensor map_;        // [256] float32, sorted
  torch::Tensor midpoints_;  // [255] float32: (map[k] + map[k + 1]) * 0.5, the decision boundaries
};

}  // namespace sinter::train
