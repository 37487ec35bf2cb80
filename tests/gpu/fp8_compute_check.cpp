// fp8_fast on the GPU (tests/gpu/flux_fp8_compute.sh runs it): FP8 tensor-core GEMMs for FLUX's
// frozen base (models/float8_compute.h, models/scaled_float8_weight.h) against float64 and bf16.
//   sinter-fp8-compute-check linear             one FP8 Linear (with LoRA) forward/backward vs float64
//   sinter-fp8-compute-check grads [SIDE]       every LoRA module's gradient, FP8 vs bf16, same batch
//   sinter-fp8-compute-check loss [STEPS] [SIDE] [forward-only-too]   loss curves, bf16 vs FP8 (and
//                                               FP8 forward only), the same batches and noise
// grads and loss build the full-size FLUX.1-dev transformer with random weights; SIDE is the
// latent side (128: 1024x1024 images, 64: 512x512). Exit 1 when a bound fails.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/flux_transformer.h"
#include "models/float8_compute.h"
#include "models/frozen_linear_lora.h"
#include "models/linear.h"
#include "models/scaled_float8_weight.h"
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

models::Float8ScaledOptions fastOptions(bool backward) {
  models::Float8ScaledOptions o;
  o.fastForward = true;
  o.fastBackward = backward;
  return o;
}

// One Linear of FLUX's MLP shape (3072 -> 12288, bias, LoRA rank 32) on 4096 tokens.
int linearCheck(const torch::Device& device) {
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
  const double u4 = 1.0 / 16, u5 = 1.0 / 8;
  for (const bool fp8Backward : {false, true}) {
    models::Linear copy(in, out, true);
    copy->to(device, torch::kBFloat16);
    copy->weight.set_data(linear->weight.detach().clone());
    copy->bias.set_data(linear->bias.detach().clone());
    copy->weight.set_requires_grad(false);
    copy->bias.set_requires_grad(false);
    models::storeLinearsInScaledFloat8(*copy, device, fastOptions(fp8Backward));
    const auto got = run(copy->served, copy->weight);
    const std::string tag = fp8Backward ? "fp8 fwd+bwd: " : "fp8 fwd only: ";
    ok &= report(tag + "y vs float64", relError(got[0], yRef), 2 * u4);
    ok &= report(tag + "dx vs float64", relError(got[1], dxRef), fp8Backward ? u4 + u5 : 1.0 / 64 + u4);
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
  const models::Float8Tensor xq = models::quantizePerTensor(xb, models::Float8Format::E4M3);
  const models::Float8Tensor wq = models::quantizeWeight(linear->weight, device);
  const torch::Tensor exact = (xq.data.to(torch::kFloat64) * xq.scale.to(torch::kFloat64))
                                  .mm((wq.data.to(torch::kFloat64) * wq.scale.to(torch::kFloat64)).t());
  ok &= report("float8Matmul vs its dequantised operands", relError(models::float8Matmul(xq, {wq.data.t(), wq.scale}, {}, torch::kBFloat16), exact),
               1.0 / 128);
  const models::Float8Tensor gq = models::quantizePerTensor(gb, models::Float8Format::E5M2);
  const models::Float8Tensor wt = models::quantizeWeight(linear->weight, device, /*transposed=*/true);
  const torch::Tensor exactBack = (gq.data.to(torch::kFloat64) * gq.scale.to(torch::kFloat64))
                                      .mm(wt.data.to(torch::kFloat64).t() * wt.scale.to(torch::kFloat64));
  ok &= report("float8Matmul e5m2 x e4m3 vs dequantised operands",
               relError(models::float8Matmul(gq, {wt.data.t(), wt.scale}, {}, torch::kBFloat16), exactBack), 1.0 / 128);
  ok &= report("quantizePerTensor e4m3 of x", relError(xq.data.to(torch::kFloat64) * xq.scale.to(torch::kFloat64), xr), u4);
  ok &= report("quantizePerTensor e5m2 of g", relError(gq.data.to(torch::kFloat64) * gq.scale.to(torch::kFloat64), gr), u5);
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
  FluxSetup s = buildFlux(device, side, 1);
  const std::vector<torch::Tensor> reference = loraGradients(s, device);
  std::printf("| %-24s | %-10s | %-50s | %-10s | %-5s |\n|---|---|---|---|---|\n", "FP8 compute vs bf16", "min cosine", "worst module",
              "median", "");
  // The weights quantized once (the bf16 copy is gone after it); the backward's products flipped.
  models::storeLinearsInScaledFloat8(*s.transformer, device, fastOptions(true));
  bool ok = true;
  for (const bool backward : {false, true}) {
    models::setFloat8ComputeBackward(*s.transformer, backward);
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
    ok &= pass;
    std::printf("| %-24s | %10.5f | %-50s | %10.5f | %-5s |\n", backward ? "fp8 forward + backward" : "fp8 forward only", worst,
                worstName.c_str(), all[all.size() / 2], pass ? "ok" : "FAILS");
  }
  std::printf("(%zu LoRA modules, down and up each; bound: every cosine >= 0.99; latent side %lld, 128 = 1024x1024)\n",
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
  FluxSetup s = buildFlux(device, side, 8);
  std::vector<torch::Tensor> initial;
  for (const network::LoraModule& m : s.lora->modules()) {
    initial.push_back(m.adapter->down.detach().clone());
    initial.push_back(m.adapter->up.detach().clone());
  }
  const std::vector<double> bf16 = lossCurve(s, device, initial, steps);
  models::storeLinearsInScaledFloat8(*s.transformer, device, fastOptions(true));
  const std::vector<double> both = lossCurve(s, device, initial, steps);
  std::vector<double> forward(both.size(), std::nan(""));  // asked for: a third run
  if (forwardOnlyToo) {
    models::setFloat8ComputeBackward(*s.transformer, false);
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
    if (mode == "linear") return linearCheck(device);
    if (mode == "grads") return gradsCheck(device, argc > 2 ? std::stoll(argv[2]) : 128);
    if (mode == "loss")
      return lossCheck(device, argc > 2 ? std::stoi(argv[2]) : 300, argc > 3 ? std::stoll(argv[3]) : 64,
                       argc > 4 && std::string(argv[4]) == "forward-only-too");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sinter-fp8-compute-check %s: %s\n", mode.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: sinter-fp8-compute-check linear | grads [SIDE] | loss [STEPS] [SIDE] [forward-only-too]\n");
  return 2;
}
