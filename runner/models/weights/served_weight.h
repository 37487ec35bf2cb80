#pragma once
// Linear weights that autograd must not hold on to: stored in float8 (fp8_base) or streamed
// between host and device memory (blocks_to_swap, models/layers/block_swap.h). The Linear asks for the
// weight in the compute dtype when its forward runs, and again when its backward pass needs it
// (dx = dy W), so neither an upcast copy nor a swapped-out block stays alive between the passes.
// SDXL's fp8_base serves its U-Net's Conv2d kernels the same way (models/layers/frozen_conv2d.h).
// Such weights are frozen (LoRA), except streamed ones in a full-weight run: their gradient
// (dW = dy^T x) is handed to the weight in the backward pass, which steps it there (block_swap.h).
#include <torch/torch.h>

#include <memory>
#include <string>

namespace sinter::models {

class ServedWeight {
 public:
  virtual ~ServedWeight() = default;
  // The weight ([out, in], or a Conv2d's [out, in, k, k]) on the compute device, in `dtype`,
  // usable on the current stream.
  virtual torch::Tensor get(torch::ScalarType dtype) = 0;
  // Kept in host memory and copied in when needed (blocks_to_swap): the Linear's `weight` stays there.
  virtual bool streamed() const { return false; }
  // Trained: the backward pass computes dW and calls takeGradient with it.
  virtual bool trained() const { return false; }
  virtual void takeGradient(const torch::Tensor& /*grad*/) {}
  // Whether the Linear's products for an input of `rows` rows come from forwardProduct and
  // backwardProduct (fp8_fast's FP8 GEMMs, fp8_scaled's few-row kernels on the stored form), not
  // from get(): frozenLinear and frozenLinearWithLora ask this first.
  virtual bool computesProducts(int64_t /*rows*/) const { return false; }
  // x2 W^T (+ bias where defined) for x2 [N, in], in x2's dtype. By default through get().
  virtual torch::Tensor forwardProduct(const torch::Tensor& x2, const torch::Tensor& bias);
  // g W for g [N, out], in g's dtype. By default through get().
  virtual torch::Tensor backwardProduct(const torch::Tensor& g);
};

// x W^T + bias with W from `weight`; the gradient reaches x only (W and bias are frozen).
torch::Tensor frozenLinear(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias);

// x W^T + bias as the Linear computes it with a served weight: frozenLinear, or, for a trained
// weight while gradients are recorded, with the gradient also reaching the bias and, through
// takeGradient, the weight.
torch::Tensor servedLinear(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias);

// Whether this libtorch has float8 e4m3 (2.1 and newer), and the type (throws without it).
bool float8InBuild();
torch::ScalarType float8Dtype();

// fp8_base: every Linear weight under `root` stored as float8 e4m3 (cast as sd-scripts casts it,
// without a scale) and upcast to the activations' dtype per call. Returns how many Linears; a
// libtorch without float8 throws std::runtime_error naming the option.
int storeLinearsInFloat8(torch::nn::Module& root);

// fp8_base for SDXL's U-Net: every Conv2d kernel under `root` stored as float8 e4m3 likewise (sd-scripts
// casts the whole U-Net), upcast per call through frozenConv2d. Returns how many Conv2d layers; a
// libtorch without float8 throws as above.
int storeConvolutionsInFloat8(torch::nn::Module& root);

// Every parameter and buffer under `root` onto `device`, module by module (so a model larger than
// the device never has to fit there in its loading precision), except streamed Linears' weights.
void moveToDevice(torch::nn::Module& root, const torch::Device& device);

}  // namespace sinter::models
