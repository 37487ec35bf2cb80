#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/BFloat16.h>
#include <cuda_bf16.h>
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/low_rank_accumulate_cuda.h"

namespace sinter::kernels {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;         // a block's warps
constexpr int kTile = 16;         // WMMA's 16 x 16 x 16 bfloat16 tile
constexpr int kStripCols = 128;   // a warp's strip: 16 rows x 128 columns of out
constexpr int kTilesPerStrip = kStripCols / kTile;

struct alignas(16) EightBf16 {
  c10::BFloat16 v[8];
};

// out [M, N] += alpha * a [M, R] b [R, N]. A warp takes a strip of 16 rows and 128 columns: the
// strip's product on tensor cores (bfloat16 products, float32 sums) staged in shared memory, then
// out read, added to and written back 16 bytes a lane, 512 contiguous bytes a warp, once. The
// strips are ordered so that a block's warps share their columns (b's tiles are read from L1 after
// the first warp) and walk down the rows.
template <int R, typename BLayout>
__global__ void __launch_bounds__(kWarps * 32)
    lowRankAccumulate(c10::BFloat16* __restrict__ out, const c10::BFloat16* __restrict__ a, const c10::BFloat16* __restrict__ b,
                      int64_t ldb, int64_t rowStrips, int64_t strips, int64_t n, float alpha) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  __shared__ __align__(16) float staged[kWarps][kTile][kStripCols];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t strip = int64_t{blockIdx.x} * kWarps + warp; strip < strips; strip += int64_t{gridDim.x} * kWarps) {
    const int64_t row0 = (strip % rowStrips) * kTile, col0 = (strip / rowStrips) * kStripCols;
    wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, __nv_bfloat16, wmma::row_major> aTiles[R / kTile];
#pragma unroll
    for (int k = 0; k < R / kTile; ++k)
      wmma::load_matrix_sync(aTiles[k], reinterpret_cast<const __nv_bfloat16*>(a + row0 * R + k * kTile), R);
#pragma unroll
    for (int t = 0; t < kTilesPerStrip; ++t) {
      const int64_t col = col0 + t * kTile;
      wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> sum;
      wmma::fill_fragment(sum, 0.0f);
#pragma unroll
      for (int k = 0; k < R / kTile; ++k) {
        wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, __nv_bfloat16, BLayout> bTile;
        // b (k, n) sits at k * ldb + n row-major, at n * ldb + k column-major.
        const c10::BFloat16* tile = std::is_same_v<BLayout, wmma::row_major> ? b + int64_t{k} * kTile * ldb + col
                                                                              : b + col * ldb + k * kTile;
        wmma::load_matrix_sync(bTile, reinterpret_cast<const __nv_bfloat16*>(tile), static_cast<unsigned>(ldb));
        wmma::mma_sync(sum, aTiles[k], bTile, sum);
      }
      wmma::store_matrix_sync(&staged[warp][0][t * kTile], sum, kStripCols, wmma::mem_row_major);
    }
    __syncwarp();
    // Two rows of the strip an iteration: 16 lanes a row, 8 columns a lane; all of a lane's loads
    // issued before the first add.
    EightBf16 y[kTile / 2];
    EightBf16* target[kTile / 2];
#pragma unroll
    for (int i = 0; i < kTile / 2; ++i) {
      const int r = 2 * i + lane / 16, c = (lane % 16) * 8;
      target[i] = reinterpret_cast<EightBf16*>(out + (row0 + r) * n + col0 + c);
      y[i] = *target[i];
    }
#pragma unroll
    for (int i = 0; i < kTile / 2; ++i) {
      const int r = 2 * i + lane / 16, c = (lane % 16) * 8;
      const float4 s0 = *reinterpret_cast<const float4*>(&staged[warp][r][c]);
      const float4 s1 = *reinterpret_cast<const float4*>(&staged[warp][r][c + 4]);
      const float sums[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
      for (int e = 0; e < 8; ++e)
        // As cuBLAS's beta-1 GEMM: alpha * sum + out in float32, rounded once.
        y[i].v[e] = c10::BFloat16(__fmaf_rn(alpha, sums[e], static_cast<float>(y[i].v[e])));
      *target[i] = y[i];
    }
    __syncwarp();  // staged is written again for the next strip
  }
#endif
}

template <int R>
void launch(at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float alpha) {
  const int64_t m = out.size(0), n = out.size(1);
  const int64_t rowStrips = m / kTile, strips = rowStrips * (n / kStripCols);
  const int64_t blocks = std::min<int64_t>((strips + kWarps - 1) / kWarps, int64_t{1} << 20);
  const bool rowMajor = b.stride(1) == 1;
  auto* o = reinterpret_cast<c10::BFloat16*>(out.data_ptr());
  const auto* pa = reinterpret_cast<const c10::BFloat16*>(a.data_ptr());
  const auto* pb = reinterpret_cast<const c10::BFloat16*>(b.data_ptr());
  const int64_t ldb = rowMajor ? b.stride(0) : b.stride(1);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (rowMajor)
    lowRankAccumulate<R, wmma::row_major>
        <<<static_cast<unsigned int>(blocks), kWarps * 32, 0, stream>>>(o, pa, pb, ldb, rowStrips, strips, n, alpha);
  else
    lowRankAccumulate<R, wmma::col_major>
        <<<static_cast<unsigned int>(blocks), kWarps * 32, 0, stream>>>(o, pa, pb, ldb, rowStrips, strips, n, alpha);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void lowRankAccumulateCuda(at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float alpha) {
  if (out.numel() == 0) return;
  switch (a.size(1)) {
    case 16: return launch<16>(out, a, b, alpha);
    case 32: return launch<32>(out, a, b, alpha);
    case 64: return launch<64>(out, a, b, alpha);
    case 128: return launch<128>(out, a, b, alpha);
    default: TORCH_CHECK(false, "low-rank accumulate: a rank of 16, 32, 64 or 128 is needed, got ", a.size(1));
  }
}

}  // namespace sinter::kernels
