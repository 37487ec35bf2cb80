#include "models/weights/float8_compute.h"

#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels/fused_kernels.h"

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#if (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define SINTER_HAS_SCALED_MM 1
#else
#define SINTER_HAS_SCALED_MM 0
#endif

namespace sinter::models {

namespace {
// Keeps an all-zero tensor's scale finite (and its reciprocal within bfloat16's range).
constexpr double kSmallestAmax = 1e-30;

// The largest magnitude along `dims` (over all of x without them) in one reduction (no |x| tensor
// written), accumulated in float32.
torch::Tensor amaxOf(const torch::Tensor& x, at::OptionalIntArrayRef dims, bool keepdim) {
  return at::linalg_vector_norm(x, std::numeric_limits<double>::infinity(), dims, keepdim, torch::kFloat32);
}
}  // namespace

bool float8ComputeInBuild() { return SINTER_HAS_SCALED_MM != 0; }

std::string float8ComputeRefusal(const torch::Device& device) {
  if (!float8ComputeInBuild())
    return "fp8_fast: this libtorch (" TORCH_VERSION ") has no at::_scaled_mm (libtorch 2.4 or newer has it); turn fp8_fast off";
  if (!device.is_cuda())
    return "fp8_fast: FP8 tensor-core GEMMs need a CUDA GPU of compute capability 8.9 or higher; the training device is " +
           device.str() + "; turn fp8_fast off";
#if SINTER_WITH_CUDA
  const int index = device.has_index() ? device.index() : 0;
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(index);
  if (props->major * 10 + props->minor < 89)
    return "fp8_fast: " + device.str() + " (" + props->name + ", compute capability " + std::to_string(props->major) + "." +
           std::to_string(props->minor) + ") has no FP8 tensor cores (8.9 or higher: Ada, Hopper and later); turn fp8_fast off";
  return "";
#else
  return "fp8_fast: this build has no CUDA support, so no FP8 tensor cores for " + device.str() + "; turn fp8_fast off";
#endif
}

double float8Max(Float8Format format) { return format == Float8Format::E4M3 ? 448.0 : 57344.0; }

torch::ScalarType float8ScalarType(Float8Format format) {
#if SINTER_HAS_SCALED_MM || (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  return format == Float8Format::E4M3 ? at::kFloat8_e4m3fn : at::kFloat8_e5m2;
#else
  (void)format;
  throw std::runtime_error("fp8_scaled: this libtorch (" TORCH_VERSION ") has no float8 types (libtorch 2.1 or newer has them); "
                           "turn fp8_scaled and fp8_fast off");
#endif
}

torch::Tensor float8ScaleFromAmax(const torch::Tensor& amax, Float8Format format) {
  return amax.to(torch::kFloat32).clamp_min(kSmallestAmax).div(float8Max(format)).to(torch::kBFloat16).to(torch::kFloat32);
}

Float8Tensor quantizePerTensor(const torch::Tensor& x, Float8Format format) {
  const torch::ScalarType type = float8ScalarType(format);
  // The factor max / amax that maps the largest magnitude onto the format's largest value (a few
  // scalar kernels).
  const torch::Tensor amax = amaxOf(x, c10::nullopt, /*keepdim=*/false);
  const torch::Tensor factor = amax.clamp_min(kSmallestAmax).reciprocal().mul_(float8Max(format));
  if (x.scalar_type() == torch::kBFloat16) {
    // x * factor computes in bfloat16, so the factor is rounded to bfloat16 and the scale is its
    // reciprocal: two bfloat16 roundings (2^-8 each) leave |x * factor| <= max * 1.008, which the
    // cast rounds to max (e4m3 rounds up to its NaN only from 464, e5m2 to infinity from 59392).
    const torch::Tensor factor16 = factor.to(torch::kBFloat16);
    return {x.mul(factor16).to(type), factor16.to(torch::kFloat32).reciprocal()};
  }
  return {x.to(torch::kFloat32).mul(factor).to(type), factor.reciprocal()};
}

torch::Tensor float8RowFactors(const torch::Tensor& x, Float8Format format) {
  TORCH_CHECK(x.dim() == 2, "fp8_fast: rows [rows, K] to quantize, got ", x.sizes());
  // As kernels/float8_quantize_rows.cu computes it: reciprocal, multiply, round to bfloat16.
  return amaxOf(x, at::IntArrayRef{1}, /*keepdim=*/true)
      .clamp_min(kSmallestAmax)
      .reciprocal()
      .mul_(float8Max(format))
      .to(torch::kBFloat16)
      .to(torch::kFloat32);
}

Float8Tensor quantizeRowsReference(const torch::Tensor& x, Float8Format format) {
  const torch::ScalarType type = float8ScalarType(format);
  const torch::Tensor factor = float8RowFactors(x, format);
  return {x.to(torch::kFloat32).mul(factor).to(type), factor.reciprocal()};
}

Float8Tensor quantizeRows(const torch::Tensor& x, Float8Format format) {
  if (!kernels::float8QuantizeRowsFits(x)) return quantizeRowsReference(x, format);
  const std::vector<torch::Tensor> q = kernels::float8QuantizeRows(x, float8ScalarType(format), float8Max(format), kSmallestAmax);
  return {q[0], q[1]};
}

torch::Tensor float8Matmul(const Float8Tensor& a, const Float8Tensor& b, const torch::Tensor& bias, torch::ScalarType outDtype,
                           bool fastAccumulation) {
#if SINTER_HAS_SCALED_MM
  TORCH_CHECK(a.data.dim() == 2 && b.data.dim() == 2 && a.data.size(1) == b.data.size(0), "fp8_fast: a [M, K] and b [K, N] needed, got ",
              a.data.sizes(), " and ", b.data.sizes());
  TORCH_CHECK(a.data.is_contiguous() && b.data.t().is_contiguous(), "fp8_fast: a must be row-major and b column-major, got strides ",
              a.data.strides(), " and ", b.data.strides());
  // Rowwise: b's scale has one entry per column (N >= 16); a's then one per row (M may be 1).
  const bool rowwise = b.scale.numel() != 1;
  if (rowwise) {
    TORCH_CHECK(a.scale.dim() == 2 && a.scale.size(0) == a.data.size(0) && a.scale.size(1) == 1 && b.scale.dim() == 2 &&
                    b.scale.size(0) == 1 && b.scale.size(1) == b.data.size(1),
                "fp8_fast: rowwise scales [M, 1] and [1, N] needed, got ", a.scale.sizes(), " and ", b.scale.sizes());
  } else {
    TORCH_CHECK(a.scale.numel() == 1, "fp8_fast: per-tensor scales needed for both operands, got ", a.scale.sizes());
  }
  // The GEMM's own output: bfloat16 for rowwise scaling (PyTorch's CUTLASS rowwise kernel writes
  // only that), else outDtype. Its epilogue adds a bias of that dtype (not with a float32 output).
  const torch::ScalarType gemmDtype = rowwise ? torch::kBFloat16 : outDtype;
  const bool biasInGemm = bias.defined() && gemmDtype == outDtype && outDtype != torch::kFloat32;
  c10::optional<torch::Tensor> gemmBias;
  if (biasInGemm) gemmBias = bias.scalar_type() == outDtype ? bias : bias.to(outDtype);
  torch::Tensor y = at::_scaled_mm(a.data, b.data, a.scale, b.scale, gemmBias, /*scale_result=*/c10::nullopt, gemmDtype,
                                   fastAccumulation);
  if (gemmDtype != outDtype) y = y.to(outDtype);
  if (bias.defined() && !biasInGemm) y.add_(bias);
  return y;
#else
  (void)a, (void)b, (void)bias, (void)outDtype, (void)fastAccumulation;
  throw std::runtime_error(float8ComputeRefusal(torch::kCPU));
#endif
}

}  // namespace sinter::models
