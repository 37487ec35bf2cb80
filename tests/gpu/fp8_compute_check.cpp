// fp8_fast on the GPU (tests/gpu/flux_fp8_compute.sh runs it): FP8 tensor-core GEMMs for FLUX's
// frozen base (models/weights/float8_compute.h, models/weights/scaled_float8_weight.h) against float64 and bf16.
//   sinter-fp8-compute-check quantize           the fused rowwise quantize kernel against its torch
//                                               operators (bit for bit) at FLUX's row lengths, and timed
//   sinter-fp8-compute-check gemm               FLUX's Linear GEMMs timed and against float64: bf16,
//                                               FP8 per tensor, FP8 rowwise, rowwise with use_fast_accum
//   sinter-fp8-compute-check gemv               the few-row e4m3 products (modulations) against float64
//                                               and the dequantised weight's cuBLAS GEMM, timed
//   sinter-fp8-compute-check linear             one FP8 Linear (with LoRA) forward/backward vs float64
//   sinter-fp8-compute-check grads [SIDE]       every LoRA module's gradient, FP8 vs bf16, same batch
//   sinter-fp8-compute-check loss [STEPS] [SIDE] [forward-only-too]   loss curves, bf16 vs FP8 (and
//                                               FP8 forward only), the same batches and noise
// grads and loss build the full-size FLUX.1-dev transformer with random weights; SIDE is the
// latent side (128: 1024x1024 images, 64: 512x512). Exit 1 when a bound fails.
// The FP8 form of linear, grads and loss comes from the environment (this check only; the trainer
// has no such options): FP8_SCALING=row (default: tokens and channels) or tensor (one scale per
// tensor), FP8_GRADIENT_FORMAT=e4m3 or e5m2 (the backward's dy; default e4m3 rowwise, e5m2 per
// tensor), FP8_FAST_ACCUM=0 or forward (at::_scaled_mm's use_fast_accum off, or in the forward's GEMMs
// only; default 1, both passes', as fp8_fast trains).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/fused_kernels.h"
#include "models/flux/flux_layout.h"
#include "models/flux/flux_transformer.h"
#include "models/weights/float8_compute.h"
#include "models/adapters/frozen_linear_lora.h"
#include "models/layers/linear.h"
#include "models/weights/scaled_float8_weight.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"
#include "train/flux/flux_model_set.h"
#include "train/flux/flux_train_step.h"

using namespace sinter;

namespace {

double relError(const torch::Tensor& got, const torch::Tensor& want) {
  const torch::Tensor w = want.to(torch::kFloat64);
  return (got.to(torch::kFloat64) - w).norm().item<double>() / w.norm().item<double>();
}

bool report(const std::string& what, double value, double bound) {
  const bool ok = value <= bound;
  std::printf("| %-58s | %10.3e | %10.3e | %-5s |\n", what.c_str(), value, bound, ok ? "ok" : "FAILS");
  return ok;
}

std::string environment(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// The FP8 form under test: fp8_fast's defaults, or what FP8_SCALING, FP8_GRADIENT_FORMAT and
// FP8_FAST_ACCUM ask for.
models::Float8ScaledOptions fastOptions(bool backward) {
  models::Float8ScaledOptions o;
  o.fastForward = true;
  o.fastBackward = backward;
  const std::string scaling = environment("FP8_SCALING", "row");
  if (scaling != "row" && scaling != "tensor") throw std::invalid_argument("FP8_SCALING must be row or tensor, got " + scaling);
  o.scaling = scaling == "row" ? models::Float8Scaling::Row : models::Float8Scaling::Tensor;
  const std::string format = environment("FP8_GRADIENT_FORMAT", scaling == "row" ? "e4m3" : "e5m2");
  if (format != "e4m3" && format != "e5m2") throw std::invalid_argument("FP8_GRADIENT_FORMAT must be e4m3 or e5m2, got " + format);
  o.gradientFormat = format == "e4m3" ? models::Float8Format::E4M3 : models::Float8Format::E5M2;
  models::float8FastAccumulationFromEnvironment(o, "FP8_FAST_ACCUM");
  return o;
}

const char* formatName(models::Float8Format f) { return f == models::Float8Format::E4M3 ? "e4m3" : "e5m2"; }

void printForm(const models::Float8ScaledOptions& o) {
  std::printf("FP8 form: scaling %s, backward dy %s, use_fast_accum %s\n\n",
              o.scaling == models::Float8Scaling::Row ? "rowwise (tokens, channels)" : "per tensor", formatName(o.gradientFormat),
              o.fastAccumulationBackward ? "forward and backward" : o.fastAccumulationForward ? "forward" : "off");
}

// Unit roundoff of a format: 2^-4 (e4m3), 2^-3 (e5m2).
double roundoff(models::Float8Format f) { return f == models::Float8Format::E4M3 ? 1.0 / 16 : 1.0 / 8; }

models::Float8Tensor quantizeAs(const torch::Tensor& x, models::Float8Format format, models::Float8Scaling scaling) {
  return scaling == models::Float8Scaling::Row ? models::quantizeRows(x, format) : models::quantizePerTensor(x, format);
}

// Milliseconds a call of f takes on the GPU, the mean of `iterations` after a warm-up.
double timeMs(const std::function<void()>& f, int iterations) {
  for (int i = 0; i < 3; ++i) f();
  torch::cuda::synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) f();
  torch::cuda::synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / iterations;
}

torch::Tensor bytesOf(const torch::Tensor& float8) { return float8.view(torch::kUInt8); }

// The fused rowwise quantize kernel (kernels::float8QuantizeRows, through models::quantizeRows)
// against the same arithmetic in torch operators (models::quantizeRowsReference): every float8
// code and every scale the same bits, at FLUX's row lengths; rows of very different sizes, an
// all-zero row and a tiny one. Then each timed against the torch operators and the per-tensor form.
int quantizeCheck(const torch::Device& device) {
  if (!kernels::fusedKernelsCompiledIn()) {
    std::printf("sinter-fp8-compute-check quantize: this build has no CUDA kernels (nvcc), nothing to compare\n");
    return 1;
  }
  struct Case {
    int64_t rows, k;
    torch::ScalarType dtype;
  };
  // FLUX's activations and gradients: 4096 image + 512 text tokens at 1024x1024; widths 3072
  // (hidden), 9216 (qkv), 12288 (MLP), 15360 (single block's linear2 input), 21504 (its linear1
  // output); one-row modulation inputs and outputs (3072, 18432).
  const std::vector<Case> cases = {{4608, 3072, torch::kBFloat16},  {4096, 3072, torch::kBFloat16},  {512, 3072, torch::kBFloat16},
                                   {4608, 9216, torch::kBFloat16},  {4096, 12288, torch::kBFloat16}, {4096, 15360, torch::kBFloat16},
                                   {4096, 21504, torch::kBFloat16}, {1, 3072, torch::kBFloat16},     {1, 18432, torch::kBFloat16},
                                   {333, 16, torch::kBFloat16},     {4096, 3072, torch::kFloat16},   {4096, 3072, torch::kFloat32},
                                   {4608, 21504, torch::kBFloat16}, {4608, 15360, torch::kBFloat16}, {64, 32768, torch::kBFloat16}};
  std::printf("| %-18s | %-8s | %-4s | %13s | %13s | %10s | %9s | %7s | %13s | %15s | %-5s |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
              "rows x K", "dtype", "fmt", "codes differ", "scales differ", "rel. error", "kernel us", "GB/s", "torch rows us",
              "per tensor us", "");
  bool ok = true;
  torch::manual_seed(0);
  for (const Case& c : cases)
    for (const models::Float8Format format : {models::Float8Format::E4M3, models::Float8Format::E5M2}) {
      const auto on = torch::TensorOptions(device).dtype(torch::kFloat32);
      // Row sizes spread over ~e^+-9 (gradients' rows differ that much; e^+-3 within float16's
      // range), row 0 all zero, row 1 tiny.
      const bool half = c.dtype == torch::kFloat16;
      torch::Tensor x = torch::randn({c.rows, c.k}, on) * torch::exp(torch::randn({c.rows, 1}, on) * (half ? 1.0 : 3.0));
      if (c.rows > 2) {
        x[0].zero_();
        x[1].mul_(half ? 1e-3 : 1e-25);
      }
      x = x.to(c.dtype);
      if (!kernels::float8QuantizeRowsFits(x)) {
        std::printf("| %6lld x %-9lld | kernel refuses these rows | FAILS |\n", static_cast<long long>(c.rows),
                    static_cast<long long>(c.k));
        ok = false;
        continue;
      }
      const models::Float8Tensor fused = models::quantizeRows(x, format);
      const models::Float8Tensor reference = models::quantizeRowsReference(x, format);
      const int64_t codes = bytesOf(fused.data).ne(bytesOf(reference.data)).sum().item<int64_t>();
      const int64_t scales = fused.scale.ne(reference.scale).sum().item<int64_t>();
      const bool shapes = fused.scale.sizes() == reference.scale.sizes() && fused.data.sizes() == x.sizes();
      // Each value within the format's rounding of x (relative; a row's few values below the
      // format's normal range have absolute steps far smaller).
      const double error = relError(fused.data.to(torch::kFloat64) * fused.scale.to(torch::kFloat64), x);
      const double bound = roundoff(format);
      const bool pass = codes == 0 && scales == 0 && shapes && error <= bound;
      ok &= pass;
      const int iterations = c.rows * c.k > 1000000 ? 50 : 200;
      const double kernelMs = timeMs([&] { models::quantizeRows(x, format); }, iterations);
      const double torchMs = timeMs([&] { models::quantizeRowsReference(x, format); }, iterations);
      const double tensorMs = timeMs([&] { models::quantizePerTensor(x, format); }, iterations);
      const double bytes = static_cast<double>(c.rows * c.k) * (x.element_size() + 1) + 4.0 * static_cast<double>(c.rows);
      std::printf("| %6lld x %-9lld | %-8s | %-4s | %13lld | %13lld | %10.3e | %9.1f | %7.0f | %13.1f | %15.1f | %-5s |\n",
                  static_cast<long long>(c.rows), static_cast<long long>(c.k), c10::toString(c.dtype), formatName(format),
                  static_cast<long long>(codes), static_cast<long long>(scales), error, 1000 * kernelMs, bytes / (kernelMs * 1e6),
                  1000 * torchMs, 1000 * tensorMs, pass ? "ok" : "FAILS");
    }
  std::printf("(bound: no code or scale differs; rel. error of data * scale against x <= the format's unit roundoff; "
              "GB/s: the kernel's bytes read and written once)\n");
  return ok ? 0 : 1;
}

// The few-row products of fp8_scaled's dequantised Linears (kernels::float8GemvForward/Backward:
// FLUX's modulations, embedders and final adaLN at bs 1-4) against float64 of the same e4m3 codes
// and scales, beside the path they replace (the weight dequantised to bf16, then cuBLAS), each
// timed; the backward run twice must give the same bits (its chunks are summed in order).
int gemvCheck(const torch::Device& device) {
  if (!kernels::fusedKernelsCompiledIn()) {
    std::printf("sinter-fp8-compute-check gemv: this build has no CUDA kernels (nvcc), nothing to compare\n");
    return 1;
  }
  struct Case {
    int64_t rows, k, n;
    bool perRow;
  };
  // [in, out]: double/single blocks' modulations, the final adaLN, time/guidance embedders' two
  // Linears, the pooled-text embedder's first; per channel (fp8_fast) and per tensor (fp8_scaled).
  const std::vector<Case> cases = {{1, 3072, 18432, true}, {1, 3072, 9216, true},  {1, 3072, 6144, true},  {1, 256, 3072, true},
                                   {1, 3072, 3072, true},  {1, 768, 3072, true},   {2, 3072, 18432, true}, {4, 3072, 18432, true},
                                   {1, 3072, 18432, false}, {3, 3072, 9216, false}};
  std::printf("| %-6s | %-5s | %-5s | %-9s | %13s | %13s | %13s | %13s | %9s | %9s | %9s | %9s | %-5s |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
              "rows", "in", "out", "scale", "y rel. err", "y dequant err", "dx rel. err", "dx dequant err", "fwd us",
              "dequant us", "bwd us", "dequant us", "");
  bool ok = true;
  torch::manual_seed(0);
  const auto f32 = torch::TensorOptions(device).dtype(torch::kFloat32);
  for (const Case& c : cases) {
    const torch::Tensor w = torch::randn({c.n, c.k}, f32) * 0.02;
    const models::Float8Tensor q =
        models::quantizeWeight(w, device, false, c.perRow ? models::Float8Scaling::Row : models::Float8Scaling::Tensor);
    const torch::Tensor x = torch::randn({c.rows, c.k}, f32).to(torch::kBFloat16);
    const torch::Tensor g = torch::randn({c.rows, c.n}, f32).to(torch::kBFloat16);
    const torch::Tensor bias = (torch::randn({c.n}, f32) * 0.1).to(torch::kBFloat16);
    if (!kernels::float8GemvFits(x, q.data, q.scale) || !kernels::float8GemvFits(g, q.data, q.scale)) {
      std::printf("| %6lld | %5lld | %5lld | kernel refuses these shapes | FAILS |\n", static_cast<long long>(c.rows),
                  static_cast<long long>(c.k), static_cast<long long>(c.n));
      ok = false;
      continue;
    }
    const torch::Tensor w64 = q.data.to(torch::kFloat64) * q.scale.to(torch::kFloat64);
    const torch::Tensor yRef = x.to(torch::kFloat64).mm(w64.t()) + bias.to(torch::kFloat64);
    const torch::Tensor dxRef = g.to(torch::kFloat64).mm(w64);
    auto dequantised = [&] { return (q.data.to(torch::kFloat32) * q.scale).to(torch::kBFloat16); };
    const torch::Tensor y = kernels::float8GemvForward(x, q.data, q.scale, bias);
    const torch::Tensor dx = kernels::float8GemvBackward(g, q.data, q.scale);
    const bool same = torch::equal(dx, kernels::float8GemvBackward(g, q.data, q.scale)) &&
                      torch::equal(y, kernels::float8GemvForward(x, q.data, q.scale, bias));
    const double yErr = relError(y, yRef), dxErr = relError(dx, dxRef);
    const double yDeq = relError(torch::addmm(bias, x, dequantised().t()), yRef), dxDeq = relError(g.mm(dequantised()), dxRef);
    // The bf16 output's rounding (2^-9 relative) and float32 sums; the dequantised path also rounds
    // each W * scale to bf16 first.
    const double bound = 1.0 / 256;
    const bool pass = same && yErr <= bound && dxErr <= bound;
    ok &= pass;
    const double fwdMs = timeMs([&] { kernels::float8GemvForward(x, q.data, q.scale, bias); }, 200);
    const double fwdDeqMs = timeMs([&] { torch::addmm(bias, x, dequantised().t()); }, 200);
    const double bwdMs = timeMs([&] { kernels::float8GemvBackward(g, q.data, q.scale); }, 200);
    const double bwdDeqMs = timeMs([&] { g.mm(dequantised()); }, 200);
    std::printf("| %6lld | %5lld | %5lld | %-9s | %13.3e | %13.3e | %13.3e | %13.3e | %9.1f | %9.1f | %9.1f | %9.1f | %-5s |\n",
                static_cast<long long>(c.rows), static_cast<long long>(c.k), static_cast<long long>(c.n),
                c.perRow ? "per row" : "tensor", yErr, yDeq, dxErr, dxDeq, 1000 * fwdMs, 1000 * fwdDeqMs, 1000 * bwdMs,
                1000 * bwdDeqMs, pass ? "ok" : (same ? "FAILS" : "FAILS: not deterministic"));
  }
  std::printf("(bound: y and dx within 2^-8 of float64 on the same codes and scales, relative; twice the same bits; "
              "dequant: the weight upcast to bf16 times its scale, then cuBLAS, as the kernels replace)\n");
  return ok ? 0 : 1;
}

// FLUX's Linear GEMMs (4608 tokens: 1024x1024 with 512 text tokens) forward y = x W^T and backward
// dx = dy W: bf16, and FP8 per tensor, rowwise, rowwise with use_fast_accum (the quantization of x
// or dy included, the weight's stored form not), each against float64.
int gemmCheck(const torch::Device& device) {
  struct Shape {
    const char* name;
    int64_t in, out;
  };
  const std::vector<Shape> shapes = {{"mlp.0", 3072, 12288},           {"mlp.2", 12288, 3072}, {"qkv", 3072, 9216},
                                     {"single linear1", 3072, 21504}, {"single linear2", 15360, 3072}};
  const int64_t tokens = 4608;
  std::printf("| %-30s | %-8s | %-38s | %9s | %9s | %10s | %10s | %-5s |\n|---|---|---|---|---|---|---|---|\n", "Linear (in -> out)",
              "pass", "form", "ms", "TFLOP/s", "rel. error", "bound", "");
  bool ok = true;
  torch::manual_seed(0);
  for (const Shape& s : shapes) {
    const auto on = torch::TensorOptions(device).dtype(torch::kFloat32);
    const torch::Tensor w = (torch::randn({s.out, s.in}, on) / std::sqrt(static_cast<double>(s.in))).to(torch::kBFloat16);
    const torch::Tensor x = torch::randn({tokens, s.in}, on).to(torch::kBFloat16);
    const torch::Tensor dy = (torch::randn({tokens, s.out}, on) * torch::exp(torch::randn({tokens, 1}, on))).to(torch::kBFloat16);
    const torch::Tensor w64 = w.to(torch::kFloat64);
    const torch::Tensor yRef = x.to(torch::kFloat64).mm(w64.t()), dxRef = dy.to(torch::kFloat64).mm(w64);
    const double flops = 2.0 * tokens * s.in * s.out;
    const std::string name = std::string(s.name) + " (" + std::to_string(s.in) + " -> " + std::to_string(s.out) + ")";
    auto row = [&](const char* pass, const std::string& form, const std::function<torch::Tensor()>& f, const torch::Tensor& ref,
                   double bound) {
      const double error = relError(f(), ref);
      const double ms = timeMs([&] { f(); }, 20);
      const bool good = error <= bound;
      ok &= good;
      std::printf("| %-30s | %-8s | %-38s | %9.3f | %9.1f | %10.3e | %10.3e | %-5s |\n", name.c_str(), pass, form.c_str(), ms,
                  flops / (ms * 1e9), error, bound, good ? "ok" : "FAILS");
    };
    row("forward", "bf16", [&] { return torch::mm(x, w.t()); }, yRef, 1.0 / 64);
    row("backward", "bf16", [&] { return torch::mm(dy, w); }, dxRef, 1.0 / 64);
    for (const models::Float8Scaling scaling : {models::Float8Scaling::Tensor, models::Float8Scaling::Row}) {
      const bool rows = scaling == models::Float8Scaling::Row;
      const models::Float8Tensor wq = models::quantizeWeight(w, device, false, scaling);
      const models::Float8Tensor wt = models::quantizeWeight(w, device, true, scaling);
      const models::Float8Format dyFormat = rows ? models::Float8Format::E4M3 : models::Float8Format::E5M2;
      for (const bool fast : {false, true}) {
        if (!rows && fast) continue;
        const std::string form = std::string(rows ? "fp8 rowwise" : "fp8 per tensor") + (fast ? ", fast accum" : "");
        const double u4 = roundoff(models::Float8Format::E4M3);
        row("forward", form + ", x e4m3",
            [&] { return models::float8Matmul(quantizeAs(x, models::Float8Format::E4M3, scaling), models::asSecondOperand(wq), {},
                                              torch::kBFloat16, fast); },
            yRef, 2 * u4);
        row("backward", form + ", dy " + formatName(dyFormat),
            [&] { return models::float8Matmul(quantizeAs(dy, dyFormat, scaling), models::asSecondOperand(wt), {}, torch::kBFloat16,
                                              fast); },
            dxRef, u4 + roundoff(dyFormat));
      }
    }
  }
  std::printf("(%lld tokens; ms: the mean of 20 calls, quantizing x or dy included; bound: each operand's unit roundoff summed, "
              "bf16 2^-6; the weight quantized once, as stored)\n",
              static_cast<long long>(tokens));
  return ok ? 0 : 1;
}

// One Linear of FLUX's MLP shape (3072 -> 12288, bias, LoRA rank 32) on 4096 tokens.
int linearCheck(const torch::Device& device) {
  const models::Float8ScaledOptions form = fastOptions(true);
  printForm(form);
  torch::manual_seed(0);
  const int64_t n = 4096, in = 3072, out = 12288, rank = 32;
  const auto bf16 = torch::TensorOptions(device).dtype(torch::kBFloat16);
  const torch::Tensor x64 = torch::randn({n, in}, torch::TensorOptions(device).dtype(torch::kFloat64));
  const torch::Tensor g64 = torch::randn({n, out}, x64.options()) * 1e-3;  // a gradient's scale
  models::Linear linear(in, out, true);
  linear->to(device, torch::kBFloat16);
  linear->weight.set_requires_grad(false);
  linear->bias.set_requires_grad(false);
  const torch::Tensor w64 = linear->weight.to(torch::kFloat64), b64 = linear->bias.to(torch::kFloat64);
  const torch::Tensor down = (torch::randn({rank, in}, bf16) * 0.02).requires_grad_(true);
  const torch::Tensor up = (torch::randn({out, rank}, bf16) * 0.02).requires_grad_(true);
  const double alpha = 0.5;
  const torch::Tensor xb = x64.to(torch::kBFloat16), d64 = down.detach().to(torch::kFloat64), u64 = up.detach().to(torch::kFloat64);
  // float64 reference of the bf16 inputs: y = x W^T + b + alpha (x D^T) U^T, dx = g W + alpha (g U) D.
  const torch::Tensor xr = xb.to(torch::kFloat64);
  const torch::Tensor yRef = xr.mm(w64.t()) + b64 + alpha * xr.mm(d64.t()).mm(u64.t());
  const torch::Tensor gb = g64.to(torch::kBFloat16), gr = gb.to(torch::kFloat64);
  const torch::Tensor dxRef = gr.mm(w64) + alpha * gr.mm(u64).mm(d64);
  const torch::Tensor dDownRef = alpha * gr.mm(u64).t().mm(xr), dUpRef = alpha * gr.t().mm(xr.mm(d64.t()));

  std::printf("| %-58s | %10s | %10s | %-5s |\n|---|---|---|---|\n", "one Linear 3072->12288, 4096 tokens, LoRA rank 32", "rel. error", "bound",
              "");
  bool ok = true;
  // bf16 path first, for scale: the same function with the weight as it is.
  auto run = [&](const std::shared_ptr<models::ServedWeight>& served, const torch::Tensor& stored) {
    const torch::Tensor xin = xb.clone().requires_grad_(true);
    down.mutable_grad() = torch::Tensor();
    up.mutable_grad() = torch::Tensor();
    const torch::Tensor y = models::frozenLinearWithLora(xin, stored, linear->bias, down, up, alpha, served);
    y.backward(gb);
    return std::vector<torch::Tensor>{y.detach(), xin.grad(), down.grad().clone(), up.grad().clone()};
  };
  const auto ref = run(nullptr, linear->weight);
  ok &= report("bf16: y", relError(ref[0], yRef), 1.0 / 64);
  ok &= report("bf16: dx", relError(ref[1], dxRef), 1.0 / 64);
  // The FP8 forms: e4m3 data has a unit roundoff of 2^-4 and e5m2 of 2^-3; a product of two
  // quantized operands is off by at most the sum relative to its size (first order), and random
  // data stays far below it (errors of separate terms partly cancel).
  const double u4 = roundoff(models::Float8Format::E4M3), ug = roundoff(form.gradientFormat);
  for (const bool fp8Backward : {false, true}) {
    models::Linear copy(in, out, true);
    copy->to(device, torch::kBFloat16);
    copy->weight.set_data(linear->weight.detach().clone());
    copy->bias.set_data(linear->bias.detach().clone());
    copy->weight.set_requires_grad(false);
    copy->bias.set_requires_grad(false);
    models::Float8ScaledOptions options = form;
    options.fastBackward = fp8Backward;
    models::storeLinearsInScaledFloat8(*copy, device, options);
    const auto got = run(copy->served, copy->weight);
    const std::string tag = fp8Backward ? "fp8 fwd+bwd: " : "fp8 fwd only: ";
    ok &= report(tag + "y vs float64", relError(got[0], yRef), 2 * u4);
    ok &= report(tag + "dx vs float64", relError(got[1], dxRef), fp8Backward ? u4 + ug : 1.0 / 64 + u4);
    // One Linear's LoRA gradients read x and dy, not the base's products: bf16's error only.
    ok &= report(tag + "lora_down grad vs float64", relError(got[2], dDownRef), 1.0 / 64);
    ok &= report(tag + "lora_up grad vs float64", relError(got[3], dUpRef), 1.0 / 64);
    // No grad: frozenLinear's path (Linears without LoRA).
    {
      torch::NoGradGuard noGrad;
      const torch::Tensor plain = models::frozenLinear(xb, copy->served, copy->bias);
      ok &= report(tag + "no-LoRA Linear y vs float64", relError(plain, xr.mm(w64.t()) + b64), 2 * u4);
    }
  }
  // The GEMM against its own quantized operands (checks the scales' placement): only the bf16
  // output's rounding (2^-8 at most, relative) and float32 accumulation remain.
  const models::Float8Tensor xq = quantizeAs(xb, models::Float8Format::E4M3, form.scaling);
  const models::Float8Tensor wq = models::quantizeWeight(linear->weight, device, false, form.scaling);
  auto value = [](const models::Float8Tensor& q) { return q.data.to(torch::kFloat64) * q.scale.to(torch::kFloat64); };
  const torch::Tensor exact = value(xq).mm(value(wq).t());
  ok &= report("float8Matmul vs its dequantised operands",
               relError(models::float8Matmul(xq, models::asSecondOperand(wq), {}, torch::kBFloat16, form.fastAccumulationForward), exact),
               1.0 / 128);
  const models::Float8Tensor gq = quantizeAs(gb, form.gradientFormat, form.scaling);
  const models::Float8Tensor wt = models::quantizeWeight(linear->weight, device, /*transposed=*/true, form.scaling);
  const torch::Tensor exactBack = value(gq).mm(value(wt).t());
  ok &= report(std::string("float8Matmul ") + formatName(form.gradientFormat) + " x e4m3 vs dequantised operands",
               relError(models::float8Matmul(gq, models::asSecondOperand(wt), {}, torch::kBFloat16, form.fastAccumulationBackward), exactBack),
               1.0 / 128);
  ok &= report("quantize e4m3 of x", relError(value(xq), xr), u4);
  ok &= report(std::string("quantize ") + formatName(form.gradientFormat) + " of g", relError(value(gq), gr), ug);
  ok &= report("quantizeWeight e4m3 of W", relError(value(wq), w64), u4);
  return ok ? 0 : 1;
}

struct FluxSetup {
  models::FluxTransformer transformer{nullptr};
  std::unique_ptr<network::LoraNetwork> lora;
  std::vector<train::FluxStepBatch> batches;
};

// Full-size FLUX.1-dev with random weights in bf16 on `device`, LoRA rank 32 alpha 16 on sd-scripts'
// targets with random lora_up (not zero, so every module has a gradient), `count` random batches.
FluxSetup buildFlux(const torch::Device& device, int64_t side, int count) {
  torch::manual_seed(0);
  FluxSetup s;
  const models::FluxConfig config = models::FluxConfig::dev();
  s.transformer = models::FluxTransformer(config);
  train::placeFluxTransformer(*s.transformer, device, torch::kBFloat16, train::FluxWeightPlacement{});
  network::LoraNetworkOptions options;
  options.dim = 32;
  options.alpha = 16;
  options.device = device;
  s.lora = std::make_unique<network::LoraNetwork>(options);
  s.lora->attach(network::fluxLoraRule(network::LoraComponent::Unet), *s.transformer);
  {
    torch::NoGradGuard noGrad;
    for (const network::LoraModule& m : s.lora->modules()) m.adapter->up.normal_(0.0, 1e-3);
  }
  const auto on = torch::TensorOptions(device).dtype(torch::kBFloat16);
  for (int i = 0; i < count; ++i)
    s.batches.push_back(train::FluxStepBatch{torch::randn({1, 16, side, side}, on), torch::randn({1, 512, config.contextInDim}, on),
                                             torch::ones({1, 512}, on.dtype(torch::kFloat32)), torch::randn({1, config.vecInDim}, on),
                                             torch::ones({1}, on.dtype(torch::kFloat32)), torch::Tensor()});
  return s;
}

train::FluxTrainStep makeStep(const FluxSetup& s, const torch::Device& device) {
  train::FluxStepOptions o;
  o.computeDtype = torch::kBFloat16;
  o.guidanceScale = 1.0;
  return train::FluxTrainStep(s.transformer, o, device, /*seed=*/0);  // the same noise and timesteps each time
}

std::vector<torch::Tensor> loraGradients(FluxSetup& s, const torch::Device& device) {
  for (const network::LoraModule& m : s.lora->modules()) {
    m.adapter->down.mutable_grad() = torch::Tensor();
    m.adapter->up.mutable_grad() = torch::Tensor();
  }
  train::FluxTrainStep step = makeStep(s, device);
  step.loss(s.batches[0]).backward();
  std::vector<torch::Tensor> grads;
  for (const network::LoraModule& m : s.lora->modules()) {
    grads.push_back(m.adapter->down.grad().defined() ? m.adapter->down.grad().flatten().to(torch::kFloat64) : torch::Tensor());
    grads.push_back(m.adapter->up.grad().defined() ? m.adapter->up.grad().flatten().to(torch::kFloat64) : torch::Tensor());
  }
  return grads;
}

double cosine(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.defined() || !b.defined()) return 0.0;
  const double na = a.norm().item<double>(), nb = b.norm().item<double>();
  if (na == 0.0 && nb == 0.0) return 1.0;
  return a.dot(b).item<double>() / std::max(na * nb, 1e-300);
}

int gradsCheck(const torch::Device& device, int64_t side) {
  const models::Float8ScaledOptions form = fastOptions(true);
  printForm(form);
  FluxSetup s = buildFlux(device, side, 1);
  const std::vector<torch::Tensor> reference = loraGradients(s, device);
  std::printf("| %-44s | %-10s | %-50s | %-10s | %-9s |\n|---|---|---|---|---|\n", "FP8 compute vs bf16", "min cosine", "worst module",
              "median", "");
  // The weights quantized once as the trainer stores them (the bf16 copy is gone after it), the
  // modulations left out of the FP8 products (train::fluxLinearMultipliesInFloat8); then the
  // products' form switched: none (the weights' own rounding, the floor of every row), forward
  // only, forward and backward with dy in each format, and the text stream left out too.
  models::storeLinearsInScaledFloat8(*s.transformer, device, form, train::fluxLinearMultipliesInFloat8);
  const models::Float8Format other =
      form.gradientFormat == models::Float8Format::E4M3 ? models::Float8Format::E5M2 : models::Float8Format::E4M3;
  struct Row {
    std::string label;
    bool forward, backward;
    models::Float8Format format;
    bool textStreamToo;  // the double blocks' text stream dequantised as well
    bool judged;         // the form fp8_fast trains with
  };
  const std::string dy = std::string(" (dy ") + formatName(form.gradientFormat) + ")";
  const std::vector<Row> rows = {
      {"e4m3 weights, bf16 products", false, false, form.gradientFormat, false, false},
      {"fp8 forward only", true, false, form.gradientFormat, false, true},
      {"fp8 forward + backward" + dy, true, true, form.gradientFormat, false, true},
      {std::string("fp8 forward + backward (dy ") + formatName(other) + ")", true, true, other, false, false},
      {"fp8 fwd + bwd" + dy + ", text stream bf16", true, true, form.gradientFormat, true, false},
  };
  bool ok = true;
  for (const Row& r : rows) {
    models::setFloat8Compute(*s.transformer, r.forward, r.backward, r.format);
    if (r.textStreamToo) models::setFloat8Compute(*s.transformer, false, false, r.format, models::fluxLinearIsInTextStream);
    const std::vector<torch::Tensor> got = loraGradients(s, device);
    double worst = 2.0;
    std::string worstName;
    std::vector<double> all;
    for (size_t i = 0; i < got.size(); ++i) {
      const double c = cosine(got[i], reference[i]);
      all.push_back(c);
      if (c < worst) {
        worst = c;
        worstName = s.lora->modules()[i / 2].name + (i % 2 ? ".lora_up" : ".lora_down");
      }
    }
    std::sort(all.begin(), all.end());
    const bool pass = worst >= 0.99;
    if (r.judged) ok &= pass;
    std::printf("| %-44s | %10.5f | %-50s | %10.5f | %-9s |\n", r.label.c_str(), worst, worstName.c_str(), all[all.size() / 2],
                r.judged ? (pass ? "ok" : "FAILS") : (pass ? "(ok)" : "(below)"));
  }
  std::printf("(%zu LoRA modules, down and up each; bound: every cosine >= 0.99 in the rows fp8_fast trains with, the others shown in "
              "parentheses; the modulations dequantised in every row; latent side %lld, 128 = 1024x1024)\n",
              s.lora->modules().size(), static_cast<long long>(side));
  return ok ? 0 : 1;
}

// Trailing mean over `window` steps (fewer at the start).
std::vector<double> smoothed(const std::vector<double>& v, size_t window) {
  std::vector<double> out(v.size());
  double sum = 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    sum += v[i];
    if (i >= window) sum -= v[i - window];
    out[i] = sum / static_cast<double>(std::min(i + 1, window));
  }
  return out;
}

std::vector<double> lossCurve(FluxSetup& s, const torch::Device& device, const std::vector<torch::Tensor>& initial, int steps) {
  std::vector<torch::Tensor> params;
  {
    torch::NoGradGuard noGrad;
    size_t i = 0;
    for (const network::LoraModule& m : s.lora->modules()) {
      m.adapter->down.copy_(initial[i++]);
      m.adapter->up.copy_(initial[i++]);
      params.push_back(m.adapter->down);
      params.push_back(m.adapter->up);
    }
  }
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(1e-4).weight_decay(0.01));
  train::FluxTrainStep step = makeStep(s, device);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    const torch::Tensor loss = step.loss(s.batches[i % s.batches.size()]);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

int lossCheck(const torch::Device& device, int steps, int64_t side, bool forwardOnlyToo) {
  printForm(fastOptions(true));
  FluxSetup s = buildFlux(device, side, 8);
  std::vector<torch::Tensor> initial;
  for (const network::LoraModule& m : s.lora->modules()) {
    initial.push_back(m.adapter->down.detach().clone());
    initial.push_back(m.adapter->up.detach().clone());
  }
  const std::vector<double> bf16 = lossCurve(s, device, initial, steps);
  models::storeLinearsInScaledFloat8(*s.transformer, device, fastOptions(true), train::fluxLinearMultipliesInFloat8);
  const std::vector<double> both = lossCurve(s, device, initial, steps);
  std::vector<double> forward(both.size(), std::nan(""));  // asked for: a third run
  if (forwardOnlyToo) {
    models::setFloat8Compute(*s.transformer, true, false);
    forward = lossCurve(s, device, initial, steps);
  }
  const size_t window = 25;
  const std::vector<double> sb = smoothed(bf16, window), s2 = smoothed(both, window), s1 = smoothed(forward, window);
  std::printf("| step | bf16 loss | fp8 fwd+bwd | fp8 fwd only | bf16 smoothed | fwd+bwd smoothed | fwd smoothed |\n"
              "|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < steps; ++i)
    if ((i + 1) % 25 == 0 || i == 0)
      std::printf("| %4d | %9.5f | %11.5f | %12.5f | %13.5f | %16.5f | %12.5f |\n", i + 1, bf16[i], both[i], forward[i], sb[i], s2[i], s1[i]);
  double dev2 = 0.0, dev1 = 0.0;
  for (size_t i = window - 1; i < sb.size(); ++i) {
    dev2 = std::max(dev2, std::abs(s2[i] - sb[i]) / sb[i]);
    if (forwardOnlyToo) dev1 = std::max(dev1, std::abs(s1[i] - sb[i]) / sb[i]);
  }
  std::printf("smoothed: the mean of the last %zu steps' losses; deviation: max over steps %zu..%d of |fp8 - bf16| / bf16 "
              "(same batches, noise and timesteps; latent side %lld)\n",
              window, window, steps, static_cast<long long>(side));
  std::printf("RESULT loss-curve deviation: fp8 forward+backward %.4f%% %s", 100 * dev2, dev2 <= 0.02 ? "ok" : "FAILS");
  if (forwardOnlyToo) std::printf(", fp8 forward only %.4f%% %s", 100 * dev1, dev1 <= 0.02 ? "ok" : "FAILS");
  std::printf(" (bound 2%%)\n");
  return dev2 <= 0.02 && dev1 <= 0.02 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "linear";
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "sinter-fp8-compute-check: no CUDA device\n");
    return 2;
  }
  const torch::Device device(torch::kCUDA, 0);
  if (const std::string why = models::float8ComputeRefusal(device); !why.empty()) {
    std::printf("refused: %s\n", why.c_str());
    return 2;
  }
  try {
    if (mode == "quantize") return quantizeCheck(device);
    if (mode == "gemm") return gemmCheck(device);
    if (mode == "gemv") return gemvCheck(device);
    if (mode == "linear") return linearCheck(device);
    if (mode == "grads") return gradsCheck(device, argc > 2 ? std::stoll(argv[2]) : 128);
    if (mode == "loss")
      return lossCheck(device, argc > 2 ? std::stoi(argv[2]) : 300, argc > 3 ? std::stoll(argv[3]) : 64,
                       argc > 4 && std::string(argv[4]) == "forward-only-too");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sinter-fp8-compute-check %s: %s\n", mode.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: sinter-fp8-compute-check quantize | gemm | gemv | linear | grads [SIDE] | loss [STEPS] [SIDE] [forward-only-too]\n");
  return 2;
}
