#include "models/weights/scaled_float8_weight.h"

#include <cstdlib>
#include <stdexcept>

#include "kernels/fused_kernels.h"
#include "models/layers/linear.h"

namespace sinter::models {

namespace {

// SINTER_FP8_GEMV=0 turns the few-row kernels off (the dequantised weight's GEMM instead): a
// diagnostic, for measuring what they gain (tests/gpu/README.md). Read once.
bool gemvEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("SINTER_FP8_GEMV");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// The FP8 GEMM's operands need K and N to be multiples of 16 (cuBLASLt's FP8 layouts).
bool float8GemmShape(const torch::Tensor& weight) { return weight.size(0) % 16 == 0 && weight.size(1) % 16 == 0; }

class ScaledFloat8Weight : public ServedWeight {
 public:
  ScaledFloat8Weight(torch::Tensor stored, torch::Tensor scale, Float8Tensor transposed, const Float8ScaledOptions& options)
      : stored_(std::move(stored)),
        scale_(std::move(scale)),
        transposed_(std::move(transposed)),
        options_(options),
        multipliable_(options.fastForward) {}

  // The dequantised weight: a bfloat16 upcast times the scale (a bfloat16 value: a scalar or one a
  // row, broadcast) rounds once; other dtypes scale in float32.
  torch::Tensor get(torch::ScalarType dtype) override {
    if (dtype == torch::kBFloat16 && kernels::float8UpcastFits(stored_))
      return kernels::float8Upcast(stored_, dtype).mul_(scale_);
    return stored_.to(torch::kFloat32).mul_(scale_).to(dtype);
  }

  // fp8_fast's FP8 GEMMs, and on the GPU the products of a few rows, read from the codes
  // (kernels::float8GemvForward; more rows dequantise and keep the Linear's own GEMM order).
  bool computesProducts(int64_t rows) const override {
    return options_.fastForward || (rows <= kernels::kFloat8GemvMaxRows && stored_.is_cuda() && gemvEnabled());
  }
  // Which products run on FP8 tensor cores; false where the stored form cannot serve them (stored
  // for dequantising only, or no transposed copy for the backward).
  bool setCompute(bool forward, bool backward, Float8Format gradientFormat) {
    if (!multipliable_ || (forward && backward && !transposed_.data.defined())) return false;
    options_.fastForward = forward;
    options_.fastBackward = forward && backward;
    options_.gradientFormat = gradientFormat;
    return true;
  }

  torch::Tensor forwardProduct(const torch::Tensor& x2, const torch::Tensor& bias) override {
    if (!options_.fastForward) {
      if (gemvTakes(x2)) return kernels::float8GemvForward(x2, stored_, scale_, bias);
      return ServedWeight::forwardProduct(x2, bias);
    }
    // mat2 = W^T [in, out], column-major: the stored [out, in] row-major data as it is.
    return float8Matmul(quantize(x2.contiguous(), Float8Format::E4M3), asSecondOperand({stored_, scale_}), bias, x2.scalar_type(),
                        options_.fastAccumulationForward);
  }

  torch::Tensor backwardProduct(const torch::Tensor& g) override {
    if (!options_.fastBackward || !transposed_.data.defined()) {
      if (gemvTakes(g)) return kernels::float8GemvBackward(g, stored_, scale_);
      return ServedWeight::backwardProduct(g);
    }
    // mat2 = W [out, in], column-major: the transposed copy's [in, out] row-major data.
    return float8Matmul(quantize(g.contiguous(), options_.gradientFormat), asSecondOperand(transposed_), torch::Tensor(),
                        g.scalar_type(), options_.fastAccumulationBackward);
  }

 private:
  // The few-row kernels multiply these rows (x or g) from the stored codes.
  bool gemvTakes(const torch::Tensor& rows) const { return gemvEnabled() && kernels::float8GemvFits(rows, stored_, scale_); }

  Float8Tensor quantize(const torch::Tensor& x, Float8Format format) const {
    return options_.scaling == Float8Scaling::Row ? quantizeRows(x, format) : quantizePerTensor(x, format);
  }

  torch::Tensor stored_;     // the module's weight: e4m3 [out, in]
  torch::Tensor scale_;      // float32 on the device: a scalar, or [out, 1] (fastForward, rowwise)
  Float8Tensor transposed_;  // e4m3 [in, out] and its scale ([in, 1] rowwise) with fastBackward, else undefined
  Float8ScaledOptions options_;
  bool multipliable_;  // stored for fp8_fast's GEMMs (its scale's form is the GEMM's)
};

}  // namespace

Float8Tensor quantizeWeight(const torch::Tensor& weight, const torch::Device& device, bool transposed, Float8Scaling scaling) {
  torch::NoGradGuard noGrad;
  torch::Tensor w = weight.detach().to(device, torch::kFloat32);
  if (transposed) w = w.t();
  const torch::Tensor amax = scaling == Float8Scaling::Row ? w.abs().amax({1}, /*keepdim=*/true) : w.abs().max();
  const torch::Tensor scale = float8ScaleFromAmax(amax, Float8Format::E4M3);
  // |w / scale| <= 448 * (1 + 2^-8): the cast rounds it to 448.
  return {w.div(scale).contiguous().to(float8ScalarType(Float8Format::E4M3)), scale};
}

void float8FastAccumulationFromEnvironment(Float8ScaledOptions& options, const char* variable) {
  const char* value = std::getenv(variable);
  if (!value || !*value) return;
  const std::string v = value;
  if (v != "0" && v != "forward" && v != "1")
    throw std::invalid_argument(std::string(variable) + " must be 0, forward or 1 (both passes), got '" + v + "'");
  options.fastAccumulationForward = v != "0";
  options.fastAccumulationBackward = v == "1";
}

Float8Tensor asSecondOperand(const Float8Tensor& q) {
  return {q.data.t(), q.scale.numel() == 1 ? q.scale : q.scale.view({1, -1})};
}

int storeLinearsInScaledFloat8(torch::nn::Module& root, const torch::Device& device, const Float8ScaledOptions& options,
                               const Float8LinearFilter& multipliesInFloat8) {
  float8ScalarType(Float8Format::E4M3);  // throws, naming the option, without float8 types
  torch::NoGradGuard noGrad;
  int count = 0;
  for (const auto& item : root.named_modules(/*name_prefix=*/"", /*include_self=*/true)) {
    auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
    if (!linear || linear->served) continue;
    Float8ScaledOptions own = options;
    // Dequantised per call instead: a shape the FP8 GEMM cannot take, or a Linear left out.
    if (!float8GemmShape(linear->weight) || (multipliesInFloat8 && !multipliesInFloat8(item.key())))
      own.fastForward = own.fastBackward = false;
    // Dequantised per call only: musubi's per-tensor scale. Multiplied as stored: the GEMM's
    // scaling, which a Linear left out keeps too (per channel is the finer dequantisation).
    const Float8Scaling scaling = options.fastForward ? options.scaling : Float8Scaling::Tensor;
    const Float8Tensor stored = quantizeWeight(linear->weight, device, /*transposed=*/false, scaling);
    const Float8Tensor transposed = own.fastForward && own.fastBackward
                                        ? quantizeWeight(linear->weight, device, /*transposed=*/true, scaling)
                                        : Float8Tensor{};
    linear->weight.set_requires_grad(false);
    linear->weight.set_data(stored.data);
    linear->served = std::make_shared<ScaledFloat8Weight>(linear->weight, stored.scale, transposed, own);
    ++count;
  }
  return count;
}

int setFloat8Compute(torch::nn::Module& root, bool forward, bool backward, Float8Format gradientFormat,
                     const Float8LinearFilter& which) {
  int count = 0;
  for (const auto& item : root.named_modules(/*name_prefix=*/"", /*include_self=*/true))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value()); linear && (!which || which(item.key())))
      if (auto weight = std::dynamic_pointer_cast<ScaledFloat8Weight>(linear->served);
          weight && weight->setCompute(forward, backward, gradientFormat))
        ++count;
  return count;
}

}  // namespace sinter::models
