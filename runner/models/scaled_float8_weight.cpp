#include "models/scaled_float8_weight.h"

#include "kernels/fused_kernels.h"
#include "models/linear.h"

namespace sinter::models {

namespace {

// The FP8 GEMM's operands need K and N to be multiples of 16 (cuBLASLt's FP8 layouts).
bool float8GemmShape(const torch::Tensor& weight) { return weight.size(0) % 16 == 0 && weight.size(1) % 16 == 0; }

class ScaledFloat8Weight : public ServedWeight {
 public:
  ScaledFloat8Weight(torch::Tensor stored, torch::Tensor scale, torch::Tensor transposed, const Float8ScaledOptions& options)
      : stored_(std::move(stored)), scale_(std::move(scale)), transposed_(std::move(transposed)), options_(options) {}

  // The dequantised weight: a bfloat16 upcast times the scale is exact in the factor (the scale
  // is a bfloat16 value); other dtypes scale in float32.
  torch::Tensor get(torch::ScalarType dtype) override {
    if (dtype == torch::kBFloat16 && kernels::float8UpcastFits(stored_))
      return kernels::float8Upcast(stored_, dtype).mul_(scale_);
    return stored_.to(torch::kFloat32).mul_(scale_).to(dtype);
  }

  bool computesProducts() const override { return options_.fastForward; }
  bool setBackward(bool on) {
    if (!transposed_.defined()) return false;
    options_.fastBackward = on;
    return true;
  }

  torch::Tensor forwardProduct(const torch::Tensor& x2, const torch::Tensor& bias) override {
    if (!options_.fastForward) return ServedWeight::forwardProduct(x2, bias);
    // mat2 = W^T [in, out], column-major: the stored [out, in] row-major data as it is.
    return float8Matmul(quantizePerTensor(x2.contiguous(), Float8Format::E4M3), {stored_.t(), scale_}, bias, x2.scalar_type());
  }

  torch::Tensor backwardProduct(const torch::Tensor& g) override {
    if (!options_.fastBackward || !transposed_.defined()) return ServedWeight::backwardProduct(g);
    // mat2 = W [out, in], column-major: the transposed copy's [in, out] row-major data.
    return float8Matmul(quantizePerTensor(g.contiguous(), options_.gradientFormat), {transposed_.t(), scale_}, torch::Tensor(),
                        g.scalar_type());
  }

 private:
  torch::Tensor stored_;      // the module's weight: e4m3 [out, in]
  torch::Tensor scale_;       // float32 scalar on the device
  torch::Tensor transposed_;  // e4m3 [in, out] (fastBackward), else undefined
  Float8ScaledOptions options_;
};

}  // namespace

Float8Tensor quantizeWeight(const torch::Tensor& weight, const torch::Device& device, bool transposed) {
  torch::NoGradGuard noGrad;
  const torch::Tensor w = weight.detach().to(device, torch::kFloat32);
  const torch::Tensor scale = float8ScaleFromAmax(w.abs().max(), Float8Format::E4M3);
  torch::Tensor scaled = w.div(scale);  // |scaled| <= 448 * (1 + 2^-8): the cast rounds it to 448
  if (transposed) scaled = scaled.t().contiguous();
  return {scaled.to(float8ScalarType(Float8Format::E4M3)), scale};
}

int storeLinearsInScaledFloat8(torch::nn::Module& root, const torch::Device& device, const Float8ScaledOptions& options) {
  float8ScalarType(Float8Format::E4M3);  // throws, naming the option, without float8 types
  torch::NoGradGuard noGrad;
  int count = 0;
  for (const auto& module : root.modules(/*include_self=*/true)) {
    auto linear = std::dynamic_pointer_cast<LinearImpl>(module);
    if (!linear || linear->served) continue;
    Float8ScaledOptions own = options;
    if (!float8GemmShape(linear->weight)) own.fastForward = own.fastBackward = false;  // dequantised instead
    const Float8Tensor stored = quantizeWeight(linear->weight, device);
    const torch::Tensor transposed =
        own.fastForward && own.fastBackward ? quantizeWeight(linear->weight, device, /*transposed=*/true).data : torch::Tensor();
    linear->weight.set_requires_grad(false);
    linear->weight.set_data(stored.data);
    linear->served = std::make_shared<ScaledFloat8Weight>(linear->weight, stored.scale, transposed, own);
    ++count;
  }
  return count;
}

int setFloat8ComputeBackward(torch::nn::Module& root, bool on) {
  int count = 0;
  for (const auto& module : root.modules(/*include_self=*/true))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module))
      if (auto weight = std::dynamic_pointer_cast<ScaledFloat8Weight>(linear->served); weight && weight->setBackward(on)) ++count;
  return count;
}

}  // namespace sinter::models
