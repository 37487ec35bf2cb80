// fp8_fast's FP8 GEMM that adds into an output already holding the LoRA's product (cuBLASLt's C
// with beta 1), where at::_scaled_mm writes a new tensor that the LoRA's product is then added
// into: one pass over the output less in every LoRA Linear's forward and backward.
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "kernels/fused_kernels.h"

#if SINTER_WITH_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <cublasLt.h>
#endif

namespace sinter::kernels {

#if SINTER_WITH_CUDA_KERNELS

namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

void check(cublasStatus_t status, const char* what) {
  TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "float8 GEMM accumulate: ", what, " failed (cuBLAS status ", static_cast<int>(status),
              ")");
}

cudaDataType_t cudaFloat8Type(const torch::Tensor& t) {
  return t.scalar_type() == at::kFloat8_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
}

// One shape's descriptors and the algorithm cuBLASLt's heuristic picked for it (or none).
struct Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, cd = nullptr;
  cublasLtMatmulAlgo_t algorithm{};
  bool found = false;
};

// (device, M, N, K, rows' float8 type, fast accumulation)
using PlanKey = std::tuple<int, int64_t, int64_t, int64_t, int, bool>;

// Column-major, as cuBLASLt counts: D [N, M] = W [K, N]^T X [K, M] + C, i.e. the row-major
// out [M, N] = rows [M, K] W [N, K]^T + out; FP8 wants both operands K-major (the "TN" form).
Plan makePlan(cublasLtHandle_t handle, int64_t m, int64_t n, int64_t k, cudaDataType_t rowsType, bool fast) {
  Plan p;
  check(cublasLtMatmulDescCreate(&p.operation, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof(transposed)), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof(plain)), "TRANSB");
  // A's scales one per output channel (its N rows), B's one per row of the rows (M).
  const int32_t outer = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &outer, sizeof(outer)), "A_SCALE_MODE");
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &outer, sizeof(outer)), "B_SCALE_MODE");
  const int8_t fastAccumulation = fast ? 1 : 0;
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fastAccumulation, sizeof(fastAccumulation)),
        "FAST_ACCUM");
  check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, k, n, k), "layout A");
  check(cublasLtMatrixLayoutCreate(&p.b, rowsType, k, m, k), "layout B");
  check(cublasLtMatrixLayoutCreate(&p.cd, CUDA_R_16BF, n, m, n), "layout C/D");
  cublasLtMatmulPreference_t preference = nullptr;
  check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const size_t workspace = kWorkspaceBytes;
  check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)),
        "MAX_WORKSPACE_BYTES");
  // Scale pointers are set per call, but the heuristic needs to know they exist.
  cublasLtMatmulHeuristicResult_t result{};
  int count = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle, p.operation, p.a, p.b, p.cd, p.cd, preference, 1, &result, &count);
  cublasLtMatmulPreferenceDestroy(preference);
  p.found = status == CUBLAS_STATUS_SUCCESS && count > 0;
  if (p.found) p.algorithm = result.algo;
  return p;
}

}  // namespace

bool float8GemmAccumulateFits(const torch::Tensor& rows, const torch::Tensor& weight, const torch::Tensor& out) {
  if (!rows.is_cuda() || rows.dim() != 2 || !rows.is_contiguous() || !at::isFloat8Type(rows.scalar_type())) return false;
  if (weight.scalar_type() != at::kFloat8_e4m3fn || weight.dim() != 2 || !weight.is_contiguous()) return false;
  if (out.scalar_type() != at::kBFloat16 || !out.is_contiguous() || out.dim() != 2) return false;
  const int64_t m = rows.size(0), k = rows.size(1), n = weight.size(0);
  return weight.size(1) == k && out.size(0) == m && out.size(1) == n && k % 16 == 0 && n % 16 == 0 &&
         rows.device() == weight.device() && out.device() == rows.device();
}

bool float8GemmAccumulate(const torch::Tensor& rows, const torch::Tensor& rowScale, const torch::Tensor& weight,
                          const torch::Tensor& weightScale, torch::Tensor& out, bool fastAccumulation) {
  TORCH_CHECK(float8GemmAccumulateFits(rows, weight, out), "float8 GEMM accumulate: rows [M, K] float8, weight [N, K] e4m3 and out ",
              "[M, N] bfloat16, contiguous on one CUDA device, K and N multiples of 16, are needed; got ", rows.sizes(), " ",
              rows.scalar_type(), ", ", weight.sizes(), " ", weight.scalar_type(), ", ", out.sizes(), " ", out.scalar_type());
  TORCH_CHECK(rowScale.scalar_type() == at::kFloat && rowScale.numel() == rows.size(0) && weightScale.scalar_type() == at::kFloat &&
                  weightScale.numel() == weight.size(0) && rowScale.is_contiguous() && weightScale.is_contiguous(),
              "float8 GEMM accumulate: float32 scales, one a row of each operand, are needed; got ", rowScale.sizes(), " and ",
              weightScale.sizes());
  const int64_t m = rows.size(0), n = weight.size(0), k = rows.size(1);
  if (m == 0) return true;
  cublasLtHandle_t handle = at::cuda::getCurrentCUDABlasLtHandle();
  static std::mutex mutex;
  static std::map<PlanKey, Plan> plans;
  std::lock_guard<std::mutex> lock(mutex);
  const PlanKey key{rows.get_device(), m, n, k, static_cast<int>(cudaFloat8Type(rows)), fastAccumulation};
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, makePlan(handle, m, n, k, cudaFloat8Type(rows), fastAccumulation)).first;
  const Plan& p = it->second;
  if (!p.found) return false;
  const void* aScale = weightScale.data_ptr();
  const void* bScale = rowScale.data_ptr();
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &aScale, sizeof(aScale)), "A_SCALE_POINTER");
  check(cublasLtMatmulDescSetAttribute(p.operation, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &bScale, sizeof(bScale)), "B_SCALE_POINTER");
  const torch::Tensor workspace = at::empty({static_cast<int64_t>(kWorkspaceBytes)}, out.options().dtype(at::kByte));
  const float one = 1.0f;
  const cublasStatus_t status = cublasLtMatmul(handle, p.operation, &one, weight.data_ptr(), p.a, rows.data_ptr(), p.b, &one,
                                               out.data_ptr(), p.cd, out.data_ptr(), p.cd, &p.algorithm, workspace.data_ptr(),
                                               kWorkspaceBytes, at::cuda::getCurrentCUDAStream());
  // An algorithm the heuristic offered but the call refuses: not offered for this shape from now on.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE) {
    it->second.found = false;
    return false;
  }
  check(status, "cublasLtMatmul");
  return true;
}

#else

bool float8GemmAccumulateFits(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) { return false; }

bool float8GemmAccumulate(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, torch::Tensor&,
                          bool) {
  throw std::runtime_error("float8 GEMM accumulate: this build has no CUDA kernels");
}

#endif

}  // namespace sinter::kernels
