// On the GPU machine: each fused kernel of runner/kernels against the formula it replaces, forward
// and backward (for GroupNorm+SiLU, and the plain GroupNorm, also the weight and bias gradients, NCHW and NHWC, for QK RMSNorm+RoPE the
// scales', for FLUX's modulation the shift, scale and gate gradients; the U-Net's joint q/k/v too), in float64 (the reference) and in the stock operators of the same dtype. Exits 1
// when a kernel is further from the float64 reference than the bound stated for its dtype:
//   float32: 1e-5 relative (max abs difference over max abs value);
//   float16 / bfloat16: 1.5x the stock operators' own distance from the reference, and 1e-2
//   (the kernel rounds once, the stock operators after each operation). GroupNorm+SiLU's reference
//   starts from the inputs rounded to the dtype.
//   build-cuda/bin/sinter-kernel-check
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/fused_kernels.h"
#include "models/flux/flux_attention.h"
#include "models/layers/attention.h"
#include "models/flux/flux_config.h"
#include "models/flux/flux_double_block.h"
#include "models/flux/flux_single_block.h"
#include "models/flux/flux_layers.h"
#include "models/flux/flux_rope.h"

namespace {

double relative(const torch::Tensor& a, const torch::Tensor& reference) {
  return (a.to(torch::kFloat64) - reference).abs().max().item<double>() / reference.abs().max().item<double>();
}

// SGM's GEGLU as the model writes it with stock operators.
torch::Tensor gegluStock(const torch::Tensor& projected) {
  const auto parts = projected.chunk(2, -1);
  return parts[0] * torch::gelu(parts[1]);
}

// `n`: the output's columns. 257 runs the scalar kernels (rows and columns not multiples of a block
// or of a vector), 1280 (SDXL's) the vector ones.
bool checkGeglu(torch::Dtype dtype, int64_t n) {
  torch::manual_seed(3);
  const torch::Device cuda(torch::kCUDA);
  const torch::Tensor base = torch::randn({2, 333, 2 * n}, torch::TensorOptions().dtype(torch::kFloat64).device(cuda)) * 2;
  const torch::Tensor gradOut = torch::randn({2, 333, n}, base.options());

  torch::Tensor ref = base.clone().requires_grad_(true);
  const torch::Tensor refOut = gegluStock(ref);
  refOut.backward(gradOut);

  torch::Tensor fused = base.to(dtype).requires_grad_(true);
  const torch::Tensor fusedOut = sinter::kernels::geglu(fused);
  fusedOut.backward(gradOut.to(dtype));

  torch::Tensor stock = base.to(dtype).requires_grad_(true);
  const torch::Tensor stockOut = gegluStock(stock);
  stockOut.backward(gradOut.to(dtype));

  const double fwd = relative(fusedOut, refOut.detach()), bwd = relative(fused.grad(), ref.grad());
  const double stockFwd = relative(stockOut, refOut.detach()), stockBwd = relative(stock.grad(), ref.grad());
  const bool fp32 = dtype == torch::kFloat32;
  const double boundFwd = fp32 ? 1e-5 : std::min(1e-2, 1.5 * stockFwd), boundBwd = fp32 ? 1e-5 : std::min(1e-2, 1.5 * stockBwd);
  const bool ok = fwd <= boundFwd && bwd <= boundBwd;
  std::printf("GEGLU n=%-4lld %-9s forward %.2e (stock %.2e, bound %.2e), backward %.2e (stock %.2e, bound %.2e): %s\n",
              static_cast<long long>(n), c10::toString(dtype), fwd, stockFwd, boundFwd, bwd, stockBwd, boundBwd, ok ? "ok" : "FAILS");
  return ok;
}

// The U-Net's GroupNorm32 (then SiLU), as the model writes them with stock operators.
torch::Tensor groupNormSiluStock(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                 int64_t groups, bool silu = true) {
  const torch::Tensor normed =
      torch::group_norm(x.to(torch::kFloat32), groups, weight.to(torch::kFloat32), bias.to(torch::kFloat32), 1e-5)
          .to(x.scalar_type());
  return silu ? torch::silu(normed) : normed;
}

// `offset` shifts the input's mean away from zero: the statistics must not cancel in float32.
// `channelsLast`: the kernels get x and the output gradient channels_last (the NHWC kernels) and must
// give the output and x's gradient channels_last; the references run on the NCHW copy. `silu` false:
// the plain GroupNorm (kernels::groupNorm).
bool checkGroupNormSilu(torch::Dtype dtype, std::vector<int64_t> shape, int64_t groups, double offset, bool channelsLast = false,
                        bool silu = true) {
  torch::manual_seed(5);
  const torch::Device cuda(torch::kCUDA);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(cuda);
  const int64_t channels = shape[1];
  torch::Tensor base = torch::randn(shape, f64) * 3 + offset;
  torch::Tensor weightBase = torch::randn({channels}, f64) * 0.5 + 1, biasBase = torch::randn({channels}, f64) * 0.5;
  torch::Tensor gradOut = torch::randn(shape, f64);

  struct Run {
    torch::Tensor x, weight, bias, out;
  };
  const auto layout = channelsLast ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
  auto run = [&](torch::Dtype d, bool fused) {
    auto leaf = [d](const torch::Tensor& t, torch::MemoryFormat format = torch::MemoryFormat::Contiguous) {
      return t.to(d).contiguous(format).detach().clone(format).requires_grad_(true);
    };
    Run r{leaf(base, fused ? layout : torch::MemoryFormat::Contiguous), leaf(weightBase), leaf(biasBase), {}};
    if (fused) {
      r.out = silu ? sinter::kernels::groupNormSilu(r.x, r.weight, r.bias, groups, 1e-5)
                   : sinter::kernels::groupNorm(r.x, r.weight, r.bias, groups, 1e-5);
    } else if (d == torch::kFloat64) {
      r.out = torch::group_norm(r.x, groups, r.weight, r.bias, 1e-5);
      if (silu) r.out = torch::silu(r.out);
    } else {
      r.out = groupNormSiluStock(r.x, r.weight, r.bias, groups, silu);
    }
    r.out.backward(gradOut.to(d).contiguous(fused ? layout : torch::MemoryFormat::Contiguous));
    return r;
  };
  // The reference starts from the same rounded input as the kernels, so that the input's own
  // rounding (0.25 at a mean of 40 in bfloat16) is not counted as the kernels' error.
  const Run fused = run(dtype, true), stock = run(dtype, false);
  for (torch::Tensor* t : {&base, &weightBase, &biasBase, &gradOut}) *t = t->to(dtype).to(torch::kFloat64);
  const Run ref = run(torch::kFloat64, false);
  const bool fp32 = dtype == torch::kFloat32;
  bool ok = true;
  std::printf("%s%s %-9s %s, %lld groups, mean %+.0f:", silu ? "GroupNorm+SiLU" : "GroupNorm", channelsLast ? " NHWC" : "",
              c10::toString(dtype), c10::str(c10::IntArrayRef(shape)).c_str(), static_cast<long long>(groups), offset);
  if (channelsLast) {
    const bool layoutOk = fused.out.is_contiguous(torch::MemoryFormat::ChannelsLast) &&
                          fused.x.grad().is_contiguous(torch::MemoryFormat::ChannelsLast);
    ok = ok && layoutOk;
    std::printf(" layout %s", layoutOk ? "channels_last" : "NOT channels_last FAILS");
  }
  const std::pair<const char*, std::function<torch::Tensor(const Run&)>> parts[] = {
      {"out", [](const Run& r) { return r.out.detach(); }},
      {"dx", [](const Run& r) { return r.x.grad(); }},
      {"dweight", [](const Run& r) { return r.weight.grad(); }},
      {"dbias", [](const Run& r) { return r.bias.grad(); }}};
  for (const auto& [name, get] : parts) {
    const double ours = relative(get(fused), get(ref)), theirs = relative(get(stock), get(ref));
    const double bound = fp32 ? 1e-5 : std::min(1e-2, 1.5 * theirs);
    const bool partOk = ours <= bound;
    ok = ok && partOk;
    std::printf(" %s %.2e (stock %.2e, bound %.2e)%s", name, ours, theirs, bound, partOk ? "" : " FAILS");
  }
  std::printf(": %s\n", ok ? "ok" : "FAILS");
  return ok;
}

// Prints each part's distance from the float64 reference, the fused kernel's and the stock
// operators', against the bound: float32 1e-5; half types 1.5x the stock operators' (at least 1e-4,
// at most 1e-2). Parts: {name, fused, stock, reference}.
bool reportParts(const std::string& label, torch::Dtype dtype,
                 const std::vector<std::tuple<const char*, torch::Tensor, torch::Tensor, torch::Tensor>>& parts) {
  const bool fp32 = dtype == torch::kFloat32;
  bool ok = true;
  std::printf("%s %-9s:", label.c_str(), c10::toString(dtype));
  for (const auto& [name, fused, stock, ref] : parts) {
    const double ours = relative(fused, ref), theirs = relative(stock, ref);
    const double bound = fp32 ? 1e-5 : std::max(1e-4, std::min(1e-2, 1.5 * theirs));
    const bool partOk = ours <= bound;
    ok = ok && partOk;
    std::printf(" %s %.2e (stock %.2e, bound %.2e)%s", name, ours, theirs, bound, partOk ? "" : " FAILS");
  }
  std::printf(": %s\n", ok ? "ok" : "FAILS");
  return ok;
}

// FLUX's QK RMSNorm + RoPE: the fused kernel and the model's stock path (normedRotatedQkv) against
// the formula in float64, on a strided input as the single block's linear1 output gives it, with
// scales other than 1, the real RoPE of a [txt, img] sequence and strided incoming gradients.
// d: the head's channels; extra: columns after qkv in each row (an odd count leaves the rows unaligned
// for vector loads, so the launcher copies them first); heads: the sequence's heads.
bool checkQkNormRope(torch::Dtype dtype, int64_t d, int64_t extra, int64_t heads) {
  using namespace sinter::models;
  torch::manual_seed(7);
  const torch::Device cuda(torch::kCUDA);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(cuda);
  const int64_t b = 2, txt = 7, img = 6 * 5, l = txt + img;
  torch::Tensor wide = torch::randn({b, l, 3 * heads * d + extra}, f64) * 2;
  torch::Tensor qScaleBase = torch::rand({d}, f64) + 0.5, kScaleBase = torch::rand({d}, f64) + 0.5;
  torch::Tensor gradQ = torch::randn({b, heads, l, d}, f64), gradK = torch::randn_like(gradQ), gradV = torch::randn_like(gradQ);
  // Text tokens at (0, 0, 0), image tokens at (0, row, column).
  torch::Tensor ids = torch::zeros({b, l, 3}, f64);
  const torch::Tensor rows = torch::arange(6, f64).repeat_interleave(5), cols = torch::arange(5, f64).repeat({6});
  ids.narrow(1, txt, img).select(2, 1).copy_(rows.expand({b, img}));
  ids.narrow(1, txt, img).select(2, 2).copy_(cols.expand({b, img}));
  const int64_t axis0 = d / 8, axis12 = (d - axis0) / 2;  // FLUX's (16, 56, 56) at d = 128
  const torch::Tensor rotations = fluxRopeRotations(ids, {axis0, axis12, axis12}, 10000.0);

  struct Run {
    torch::Tensor wide, qScale, kScale;
    FluxQkv out;
  };
  auto run = [&](torch::Dtype t, int kind) {  // 0: float64 formula, 1: stock operators, 2: fused kernel
    auto leaf = [t](const torch::Tensor& x) { return x.to(t).detach().clone().requires_grad_(true); };
    Run r{leaf(wide), leaf(qScaleBase), leaf(kScaleBase), {}};
    const torch::Tensor qkv = r.wide.narrow(2, 0, 3 * heads * d);  // rows strided, as in the single block
    if (kind == 0) {
      const FluxQkv split = splitFluxQkv(qkv, heads);
      const torch::Tensor rot = rotations.to(torch::kFloat64);
      auto normRotate = [&](const torch::Tensor& x, const torch::Tensor& s) {
        const torch::Tensor n = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6) * s;
        std::vector<int64_t> pairs = n.sizes().vec();
        pairs.back() /= 2;
        pairs.push_back(1);
        pairs.push_back(2);
        const torch::Tensor p = n.reshape(pairs);
        return (rot.select(-1, 0) * p.select(-1, 0) + rot.select(-1, 1) * p.select(-1, 1)).reshape(n.sizes());
      };
      r.out = {normRotate(split.q, r.qScale), normRotate(split.k, r.kScale), split.v};
    } else {
      FluxQkNorm norm(d);
      norm->to(t);
      // The module's scales are the leaves whose gradients are compared.
      norm->query_norm->scale = r.qScale;
      norm->key_norm->scale = r.kScale;
      r.out = normedRotatedQkv(qkv, *norm, rotations, heads, kind == 2);
    }
    // The gradients as the double block's joint attention hands them to one stream: slices of the
    // joint sequence's (strided), which the kernel reads in place.
    auto sliceOfJoint = [](const torch::Tensor& g) {
      const torch::Tensor joint = torch::zeros({g.size(0), g.size(1), g.size(2) + 5, g.size(3)}, g.options());
      return joint.narrow(2, 3, g.size(2)).copy_(g);
    };
    torch::autograd::backward({r.out.q, r.out.k, r.out.v}, {sliceOfJoint(gradQ.to(t)), sliceOfJoint(gradK.to(t)), sliceOfJoint(gradV.to(t))});
    return r;
  };
  // As for GroupNorm+SiLU, the reference starts from the inputs rounded to the dtype: a scale's
  // gradient sums the input's rounding over every row.
  const Run fused = run(dtype, 2), stock = run(dtype, 1);
  for (torch::Tensor* t : {&wide, &qScaleBase, &kScaleBase, &gradQ, &gradK, &gradV}) *t = t->to(dtype).to(torch::kFloat64);
  const Run ref = run(torch::kFloat64, 0);
  auto part = [&](const char* name, const std::function<torch::Tensor(const Run&)>& get) {
    return std::make_tuple(name, get(fused), get(stock), get(ref));
  };
  return reportParts("QK RMSNorm+RoPE [" + std::to_string(b) + ", " + std::to_string(l) + ", " + std::to_string(heads) +
                         " heads x " + std::to_string(d) + "], row stride " + std::to_string(wide.size(2)),
                     dtype,
                     {part("q", [](const Run& r) { return r.out.q.detach(); }),
                      part("k", [](const Run& r) { return r.out.k.detach(); }),
                      part("v", [](const Run& r) { return r.out.v.detach(); }),
                      part("dqkv", [](const Run& r) { return r.wide.grad(); }),
                      part("dqscale", [](const Run& r) { return r.qScale.grad(); }),
                      part("dkscale", [](const Run& r) { return r.kScale.grad(); })});
}

// A modulation Linear's output as the blocks chunk it: [B, 1, 3C] read as shift, scale, gate views.
std::vector<torch::Tensor> modulationChunks(const torch::Tensor& wide) { return wide.chunk(3, -1); }

// FLUX's LayerNorm+modulate and gated residual: the fused kernels and the blocks' stock path
// (FluxModulationOut with fused off) against the formulas in float64, on chunks of one modulation
// output (strided vectors), x with a mean far from zero, rows not a multiple of a tile.
bool checkFluxModulation(torch::Dtype dtype, int64_t b, int64_t l, int64_t c) {
  using namespace sinter::models;
  torch::manual_seed(11);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
  torch::Tensor xBase = torch::randn({b, l, c}, f64) * 2 + 5, yBase = torch::randn({b, l, c}, f64);
  torch::Tensor wideBase = torch::randn({b, 1, 3 * c}, f64) * 0.5;
  torch::Tensor gradNorm = torch::randn({b, l, c}, f64), gradGated = torch::randn({b, l, c}, f64);
  struct Run {
    torch::Tensor x, y, wide, normed, gated;
  };
  auto run = [&](torch::Dtype t, int kind) {  // 0: float64 formula, 1: stock operators, 2: fused kernels
    auto leaf = [t](const torch::Tensor& v) { return v.to(t).detach().clone().requires_grad_(true); };
    Run r{leaf(xBase), leaf(yBase), leaf(wideBase), {}, {}};
    const std::vector<torch::Tensor> m = modulationChunks(r.wide);
    const FluxModulationOut mod{m[0], m[1], m[2]};
    if (kind == 0) {
      const torch::Tensor mean = r.x.mean(-1, true), var = (r.x - mean).pow(2).mean(-1, true);
      r.normed = (1 + mod.scale) * (r.x - mean) / torch::sqrt(var + 1e-6) + mod.shift;
      r.gated = r.x + mod.gate * r.y;
    } else {
      r.normed = mod.normModulate(r.x, kind == 2);
      r.gated = mod.gatedAdd(r.x, r.y, kind == 2);
    }
    torch::autograd::backward({r.normed, r.gated}, {gradNorm.to(t), gradGated.to(t)});
    return r;
  };
  const Run fused = run(dtype, 2), stock = run(dtype, 1);
  for (torch::Tensor* v : {&xBase, &yBase, &wideBase, &gradNorm, &gradGated}) *v = v->to(dtype).to(torch::kFloat64);
  const Run ref = run(torch::kFloat64, 0);
  auto part = [&](const char* name, const std::function<torch::Tensor(const Run&)>& get) {
    return std::make_tuple(name, get(fused), get(stock), get(ref));
  };
  return reportParts("FLUX LayerNorm+modulate, gated residual [" + std::to_string(b) + ", " + std::to_string(l) + ", " +
                         std::to_string(c) + "]",
                     dtype,
                     {part("normed", [](const Run& r) { return r.normed.detach(); }),
                      part("gated", [](const Run& r) { return r.gated.detach(); }),
                      part("dx", [](const Run& r) { return r.x.grad(); }),
                      part("dy", [](const Run& r) { return r.y.grad(); }),
                      part("dshift", [c](const Run& r) { return r.wide.grad().narrow(2, 0, c); }),
                      part("dscale", [c](const Run& r) { return r.wide.grad().narrow(2, c, c); }),
                      part("dgate", [c](const Run& r) { return r.wide.grad().narrow(2, 2 * c, c); })});
}

// The single block's join of the attention output and GELU(tanh) of linear1's MLP columns (a
// strided slice), against cat + gelu in float64 and the stock operators.
bool checkAttentionGeluJoin(torch::Dtype dtype) {
  torch::manual_seed(13);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
  const int64_t b = 2, heads = 3, l = 37, d = 64, m = 4 * heads * d, qkvWidth = 3 * heads * d;
  torch::Tensor attnBase = torch::randn({b, heads, l, d}, f64), wideBase = torch::randn({b, l, qkvWidth + m}, f64) * 2;
  torch::Tensor gradOut = torch::randn({b, l, heads * d + m}, f64);
  struct Run {
    torch::Tensor attn, wide, out;
  };
  auto run = [&](torch::Dtype t, bool fusedKernel) {
    auto leaf = [t](const torch::Tensor& v) { return v.to(t).detach().clone().requires_grad_(true); };
    Run r{leaf(attnBase), leaf(wideBase), {}};
    const torch::Tensor byToken = r.attn.transpose(1, 2), mlp = r.wide.narrow(2, qkvWidth, m);
    r.out = fusedKernel ? sinter::kernels::fluxAttentionGeluJoin(byToken, mlp)
                        : torch::cat({byToken.reshape({b, l, -1}), torch::gelu(mlp, "tanh")}, 2);
    r.out.backward(gradOut.to(t));
    return r;
  };
  const Run fused = run(dtype, true), stock = run(dtype, false);
  for (torch::Tensor* v : {&attnBase, &wideBase, &gradOut}) *v = v->to(dtype).to(torch::kFloat64);
  const Run ref = run(torch::kFloat64, false);
  auto part = [&](const char* name, const std::function<torch::Tensor(const Run&)>& get) {
    return std::make_tuple(name, get(fused), get(stock), get(ref));
  };
  return reportParts("FLUX attention+GELU join", dtype,
                     {part("out", [](const Run& r) { return r.out.detach(); }),
                      part("dattended", [](const Run& r) { return r.attn.grad(); }),
                      part("dmlp", [&](const Run& r) { return r.wide.grad().narrow(2, qkvWidth, m); }),
                      // linear1's q, k, v columns get no gradient from the join: zeros, compared shifted by 1
                      // (a distance relative to a maximum of 0 is undefined).
                      part("dqkv (zero)", [&](const Run& r) { return r.wide.grad().narrow(2, 0, qkvWidth) + 1; })});
}

// The single block's linear1 output split for the fused QK and GELU-join kernels, whose backward
// passes write its gradient into one shared buffer (kernels/shared_gradient.h): the same gradient,
// bit for bit, as split_with_sizes and the concatenation autograd makes of the two parts.
bool checkSharedLinear1Gradient(torch::Dtype dtype) {
  torch::manual_seed(17);
  const auto on = torch::TensorOptions().dtype(dtype).device(torch::kCUDA);
  const int64_t b = 1, l = 45, heads = 6, d = 128, qkvWidth = 3 * heads * d, m = 4 * heads * d;
  const torch::Tensor base = torch::randn({b, l, qkvWidth + m}, on), attended = torch::randn({b, l, heads, d}, on);
  const torch::Tensor rotations = torch::randn({1, 1, l, d / 2, 2, 2}, on.dtype(torch::kFloat32));
  const torch::Tensor scale = torch::rand({d}, on.dtype(torch::kFloat32)) + 0.5;
  const torch::Tensor gq = torch::randn({b, heads, l, d}, on), gk = torch::randn_like(gq), gv = torch::randn_like(gq);
  const torch::Tensor gj = torch::randn({b, l, heads * d + m}, on);
  auto gradient = [&](bool shared) {
    const torch::Tensor wide = base.detach().clone().requires_grad_(true);
    sinter::kernels::SplitSharingGradient split;
    if (shared) split = sinter::kernels::splitSharingGradient(wide, {qkvWidth, m});
    else split.parts = wide.split_with_sizes({qkvWidth, m}, -1);
    const std::vector<torch::Tensor> qkv =
        sinter::kernels::fluxQkNormRope(split.parts[0], scale, scale, rotations, heads, split.into(0));
    const torch::Tensor joined = sinter::kernels::fluxAttentionGeluJoin(attended, split.parts[1], split.into(1));
    torch::autograd::backward({qkv[0], qkv[1], qkv[2], joined}, {gq, gk, gv, gj});
    return wide.grad();
  };
  const torch::Tensor viaCat = gradient(false), inPlace = gradient(true);
  const bool ok = torch::equal(viaCat, inPlace);
  std::printf("FLUX linear1 gradient shared by the QK and GELU-join kernels %-9s: %s\n", c10::toString(dtype),
              ok ? "ok (bitwise equal to the concatenation)" : "FAILS (differs from the concatenation)");
  return ok;
}

// The double block's two streams through one joint QK call (each writes its rows of the joint q, k
// and v) against two single-stream calls and a concatenation: the same values and gradients, bit
// for bit. 10 heads: more than a block's warps, so warps take a second head.
bool checkJointQkNormRope(torch::Dtype dtype) {
  torch::manual_seed(19);
  const auto on = torch::TensorOptions().dtype(dtype).device(torch::kCUDA);
  const auto f32 = on.dtype(torch::kFloat32);
  const int64_t b = 2, txt = 7, img = 30, heads = 10, d = 128;
  const torch::Tensor qkvBase[2] = {torch::randn({b, txt, 3 * heads * d}, on), torch::randn({b, img, 3 * heads * d}, on)};
  const torch::Tensor scaleBase[2][2] = {{torch::rand({d}, f32) + 0.5, torch::rand({d}, f32) + 0.5},
                                         {torch::rand({d}, f32) + 0.5, torch::rand({d}, f32) + 0.5}};
  const torch::Tensor rotations = torch::randn({1, 1, txt + img, d / 2, 2, 2}, f32);
  const torch::Tensor gq = torch::randn({b, heads, txt + img, d}, on), gk = torch::randn_like(gq), gv = torch::randn_like(gq);
  struct Run {
    std::vector<torch::Tensor> leaves, out;  // leaves: qkv a, q scale a, k scale a, then b's
  };
  auto run = [&](bool joint) {
    Run r;
    for (int s = 0; s < 2; ++s)
      for (const torch::Tensor& t : {qkvBase[s], scaleBase[s][0], scaleBase[s][1]}) r.leaves.push_back(t.clone().requires_grad_(true));
    const std::vector<torch::Tensor>& x = r.leaves;
    if (joint) {
      r.out = sinter::kernels::fluxJointQkNormRope(x[0], x[1], x[2], x[3], x[4], x[5], rotations, heads);
    } else {
      const std::vector<torch::Tensor> a = sinter::kernels::fluxQkNormRope(x[0], x[1], x[2], rotations.narrow(2, 0, txt), heads);
      const std::vector<torch::Tensor> c = sinter::kernels::fluxQkNormRope(x[3], x[4], x[5], rotations.narrow(2, txt, img), heads);
      for (int i = 0; i < 3; ++i) r.out.push_back(torch::cat({a[i], c[i]}, 2));
    }
    torch::autograd::backward(r.out, {gq, gk, gv});
    return r;
  };
  const Run joint = run(true), apart = run(false);
  bool ok = true;
  for (int i = 0; i < 3; ++i) ok = ok && torch::equal(joint.out[i], apart.out[i]);
  for (size_t i = 0; i < joint.leaves.size(); ++i) ok = ok && torch::equal(joint.leaves[i].grad(), apart.leaves[i].grad());
  std::printf("FLUX joint QK RMSNorm+RoPE of two streams %-9s: %s\n", c10::toString(dtype),
              ok ? "ok (bitwise equal to two calls and a concatenation)" : "FAILS (differs from two calls and a concatenation)");
  return ok;
}

// A double block and a single block in a row, fused against the stock path and float64, with heads
// of 128 channels so the half types take cuDNN's attention: the fused QK kernel lays q, k and v out
// token-major, and the attention's output and its gradient must come back as cuDNN wants them (it
// reads a single block's output gradient with the output's strides; a column range of linear2's
// input gradient has other strides and gave wrong gradients).
bool checkFluxBlocks(torch::Dtype dtype) {
  using namespace sinter::models;
  torch::manual_seed(23);
  FluxConfig c = FluxConfig::tiny();
  c.hiddenSize = 256;
  c.numHeads = 2;
  c.axesDim = {16, 56, 56};
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
  const int64_t b = 2, txt = 8, img = 40, l = txt + img;
  FluxDoubleBlock doubleBlock(c);
  FluxSingleBlock singleBlock(c);
  const torch::Tensor imgBase = torch::randn({b, img, c.hiddenSize}, f64), txtBase = torch::randn({b, txt, c.hiddenSize}, f64);
  const torch::Tensor vecBase = torch::randn({b, c.hiddenSize}, f64), gradOut = torch::randn({b, l, c.hiddenSize}, f64);
  const torch::Tensor ids = torch::randint(0, 8, {b, l, 3}, f64);
  const torch::Tensor rotations = fluxRopeRotations(ids, c.axesDim, c.theta);
  struct Run {
    torch::Tensor img, txt, vec, out;
  };
  auto run = [&](torch::Dtype t, bool fused) {
    doubleBlock->to(torch::kCUDA, t);
    singleBlock->to(torch::kCUDA, t);
    doubleBlock->fused = singleBlock->fused = fused;
    auto leaf = [t](const torch::Tensor& v) { return v.to(t).detach().clone().requires_grad_(true); };
    Run r{leaf(imgBase), leaf(txtBase), leaf(vecBase), {}};
    const auto [imgOut, txtOut] = doubleBlock->forward(r.img, r.txt, r.vec, rotations, torch::Tensor());
    r.out = singleBlock->forward(torch::cat({txtOut, imgOut}, 1), r.vec, rotations, torch::Tensor());
    r.out.backward(gradOut.to(t));
    return r;
  };
  const Run ref = run(torch::kFloat64, false), fused = run(dtype, true), stock = run(dtype, false);
  auto part = [&](const char* name, const std::function<torch::Tensor(const Run&)>& get) {
    return std::make_tuple(name, get(fused), get(stock), get(ref));
  };
  return reportParts("FLUX double + single block, fused vs stock", dtype,
                     {part("out", [](const Run& r) { return r.out.detach(); }),
                      part("dimg", [](const Run& r) { return r.img.grad(); }),
                      part("dtxt", [](const Run& r) { return r.txt.grad(); }),
                      part("dvec", [](const Run& r) { return r.vec.grad(); })});
}

// The U-Net's self-attention with q/k/v as one GEMM (CrossAttentionImpl::setJointQkv; plain GEMMs, no
// kernel of ours, but q, k and v reach the fused attention as column views of one output) and LoRA
// on each, against the three projections in the same dtype and float64: SDXL's 640 channels in 10
// heads of 64. Each run moves the module, so the joint run joins the moved weights again.
bool checkUnetJointQkv(torch::Dtype dtype) {
  using namespace sinter::models;
  torch::manual_seed(29);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
  const int64_t b = 2, n = 256, c = 640, heads = 10, rank = 8;
  CrossAttention attention(c, c, heads, c / heads);
  for (auto& p : attention->parameters()) p.set_requires_grad(false);
  std::vector<Linear> qkv{attention->to_q, attention->to_k, attention->to_v};
  std::vector<torch::Tensor> downBase, upBase;
  for (size_t i = 0; i < qkv.size(); ++i) {
    downBase.push_back(torch::randn({rank, c}, f64) * 0.1);
    upBase.push_back(torch::randn({c, rank}, f64) * 0.1);
    qkv[i]->lora = std::make_shared<LoraAdapter>();
    qkv[i]->lora->alpha = 4.0 * static_cast<double>(i + 1);
  }
  const torch::Tensor xBase = torch::randn({b, n, c}, f64), gradOut = torch::randn({b, n, c}, f64);
  struct Run {
    torch::Tensor x, out;
    std::vector<torch::Tensor> adapters;  // each projection's down and up
    bool joined = false;
  };
  auto run = [&](torch::Dtype t, bool joint) {
    attention->to(torch::kCUDA, t);
    attention->setJointQkv(joint);
    auto leaf = [t](const torch::Tensor& v) { return v.to(t).detach().clone().requires_grad_(true); };
    Run r{leaf(xBase), {}, {}};
    for (size_t i = 0; i < qkv.size(); ++i) {
      qkv[i]->lora->down = leaf(downBase[i]);
      qkv[i]->lora->up = leaf(upBase[i]);
      r.adapters.push_back(qkv[i]->lora->down);
      r.adapters.push_back(qkv[i]->lora->up);
    }
    r.out = attention->forward(r.x);
    r.out.backward(gradOut.to(t));
    const torch::Tensor &q = qkv[0]->weight, &k = qkv[1]->weight, &v = qkv[2]->weight;
    r.joined = k.storage().is_alias_of(q.storage()) && v.storage().is_alias_of(q.storage());
    return r;
  };
  const Run ref = run(torch::kFloat64, false), stock = run(dtype, false), joint = run(dtype, true);
  if (!joint.joined || stock.joined) {
    std::printf("U-Net joint q/k/v %-9s: FAILS (the joint run's weights were %sjoined, the stock run's %sjoined)\n",
                c10::toString(dtype), joint.joined ? "" : "not ", stock.joined ? "" : "not ");
    return false;
  }
  auto part = [&](const char* name, const std::function<torch::Tensor(const Run&)>& get) {
    return std::make_tuple(name, get(joint), get(stock), get(ref));
  };
  const char* names[] = {"dq_down", "dq_up", "dk_down", "dk_up", "dv_down", "dv_up"};
  std::vector<std::tuple<const char*, torch::Tensor, torch::Tensor, torch::Tensor>> parts{
      part("out", [](const Run& r) { return r.out.detach(); }), part("dx", [](const Run& r) { return r.x.grad(); })};
  for (size_t i = 0; i < 6; ++i) parts.push_back(part(names[i], [i](const Run& r) { return r.adapters[i].grad(); }));
  return reportParts("U-Net self-attention, q/k/v as one GEMM with LoRA, vs three projections", dtype, parts);
}

// fp8_base's upcast kernel against PyTorch's cast, bit for bit: every e4m3 code (the two NaN
// codes only as NaN), to each dtype, in a tensor whose size leaves a tail of 5 codes after the
// kernel's groups of 8.
bool checkFloat8Upcast() {
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor codes = torch::arange(256, cuda.dtype(torch::kInt32)).repeat({33}).narrow(0, 0, 256 * 32 + 5);
  const torch::Tensor stored = codes.to(torch::kUInt8).view(torch::kFloat8_e4m3fn);
  bool ok = true;
  for (const torch::Dtype dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) {
    const torch::Tensor ours = sinter::kernels::float8Upcast(stored, dtype), theirs = stored.to(dtype);
    const torch::Tensor nan = theirs.isnan();
    const torch::Dtype bits = dtype == torch::kFloat32 ? torch::kInt32 : torch::kInt16;
    const bool same = torch::equal(ours.isnan(), nan) &&
                      torch::equal(ours.masked_fill(nan, 0).view(bits), theirs.masked_fill(nan, 0).view(bits));
    std::printf("float8 e4m3 upcast to %-9s: %s\n", c10::toString(dtype), same ? "ok (bitwise equal to PyTorch's cast)" : "FAILS");
    ok = ok && same;
  }
  return ok;
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  bool ok = checkFloat8Upcast();
  for (torch::Dtype dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) {
    for (int64_t n : {257, 1280}) ok = checkGeglu(dtype, n) && ok;
    // Odd sizes (3 channels a group, rows not a multiple of a block); the U-Net's largest map (one
    // group spans 40 reduction chunks); a mean far from zero.
    ok = checkGroupNormSilu(dtype, {2, 96, 37, 41}, 32, 0.0) && ok;
    ok = checkGroupNormSilu(dtype, {1, 320, 128, 128}, 32, 0.0) && ok;
    ok = checkGroupNormSilu(dtype, {2, 640, 32, 32}, 32, 40.0) && ok;
    // NHWC (the U-Net's channels_last activations): SDXL's three map sizes; batch 2 with an odd
    // channel count a group (3; 15 with channels not a multiple of a 32-channel tile and pixels not
    // of a 256-pixel chunk); a mean far from zero.
    for (const std::vector<int64_t>& sdxl : {std::vector<int64_t>{1, 320, 128, 128}, {1, 640, 64, 64}, {1, 1280, 32, 32}})
      ok = checkGroupNormSilu(dtype, sdxl, 32, 0.0, /*channelsLast=*/true) && ok;
    ok = checkGroupNormSilu(dtype, {2, 96, 37, 41}, 32, 0.0, true) && ok;
    ok = checkGroupNormSilu(dtype, {2, 120, 19, 23}, 8, 0.0, true) && ok;
    ok = checkGroupNormSilu(dtype, {2, 640, 32, 32}, 32, 40.0, true) && ok;
    // The plain GroupNorm (before a SpatialTransformer), both layouts.
    ok = checkGroupNormSilu(dtype, {1, 640, 64, 64}, 32, 0.0, true, /*silu=*/false) && ok;
    ok = checkGroupNormSilu(dtype, {2, 120, 19, 23}, 8, 40.0, true, false) && ok;
    ok = checkGroupNormSilu(dtype, {2, 96, 37, 41}, 32, 0.0, false, false) && ok;
    ok = checkQkNormRope(dtype, 128, 100, 6) && ok;  // FLUX's heads
    ok = checkQkNormRope(dtype, 32, 101, 3) && ok;   // the tiny model's, rows not aligned for vector loads
    ok = checkQkNormRope(dtype, 256, 100, 3) && ok;  // the widest the kernel takes
    ok = checkJointQkNormRope(dtype) && ok;
    ok = checkFluxBlocks(dtype) && ok;
    ok = checkFluxModulation(dtype, 2, 45, 3072) && ok;  // FLUX's width; 45 rows: a tile and a part
    ok = checkFluxModulation(dtype, 1, 70, 64) && ok;    // the tiny model's width
    ok = checkAttentionGeluJoin(dtype) && ok;
    ok = checkSharedLinear1Gradient(dtype) && ok;
    ok = checkUnetJointQkv(dtype) && ok;
  }
  return ok ? 0 : 1;
}
