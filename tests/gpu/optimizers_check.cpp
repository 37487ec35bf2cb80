// On the GPU machine: bitsandbytes' AdamW family, Lion and SGDNesterov (8-bit and 32-bit states)
// on CUDA. (1) Against the same optimizer on the CPU from the same weights and gradients: the
// weights within 1e-5 of their scale after 8 steps, the 8-bit codes the same but for values at a
// decision boundary (at most 0.1%). (2) A captured step (one CUDA graph) replayed against eager
// steps on CUDA: weights and every state bit for bit, plain and with fp16's found_inf set and
// clear. Exits 1 when a check fails.
//   build-cuda/bin/sinter-optimizers-check
#include <torch/torch.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "compile/cuda_graph.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"

using namespace sinter;
using namespace sinter::train;

namespace {

const std::vector<std::string> kTypes = {"AdamW8bit", "PagedAdamW8bit", "PagedAdamW32bit", "Lion", "Lion8bit",
                                         "SGDNesterov", "SGDNesterov8bit"};

std::vector<torch::Tensor> makeParams(torch::Device device) {
  torch::manual_seed(3);
  std::vector<torch::Tensor> out;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{320, 77}, {9}, {64, 130}})
    out.push_back(torch::randn(shape).to(device).set_requires_grad(true));
  return out;
}

std::unique_ptr<Optimizer> makeFor(const std::string& type, const std::vector<torch::Tensor>& params) {
  OptimizerSettings settings = parseOptimizerSettings(type, {});
  settings.min8bitSize = 1000;  // the first and last weights keep 8-bit states, the second 32-bit ones
  return makeOptimizer(settings,
                       {{"unet", type.find("Lion") != std::string::npos ? 1e-3 : 1e-2, {params[0], params[1]}}, {"te", 3e-3, {params[2]}}},
                       /*fusedBackwardPass=*/false);
}

// Writes step `step`'s gradients into the persistent buffers (same values on any device).
void setGrads(const std::vector<torch::Tensor>& params, int step) {
  torch::manual_seed(100 + step);
  for (const torch::Tensor& p : params) {
    const torch::Tensor g = torch::randn(p.sizes()) * torch::exp(torch::randn(p.sizes()));
    p.mutable_grad().copy_(g.to(p.device()));
  }
}

std::map<std::string, torch::Tensor> stateOf(const Optimizer& opt) {
  std::map<std::string, torch::Tensor> m;
  for (const auto& [k, t] : opt.stateTensors()) m[k] = t;
  return m;
}

bool checkAgainstCpu(const std::string& type, torch::Device cuda) {
  const std::vector<torch::Tensor> onCpu = makeParams(torch::kCPU), onGpu = makeParams(cuda);
  std::unique_ptr<Optimizer> cpu = makeFor(type, onCpu), gpu = makeFor(type, onGpu);
  for (int step = 0; step < 8; ++step) {
    setGrads(onCpu, step), setGrads(onGpu, step);
    cpu->step(), gpu->step();
  }
  bool ok = true;
  for (size_t j = 0; j < onCpu.size(); ++j) {
    const double diff = (onGpu[j].cpu() - onCpu[j]).abs().max().item<double>();
    const double scale = onCpu[j].abs().max().item<double>();
    std::printf("  %-16s weight %zu: max |cuda - cpu| %.3g (scale %.3g)\n", type.c_str(), j, diff, scale);
    ok &= diff <= 1e-5 * scale;
  }
  const auto a = stateOf(*cpu), b = stateOf(*gpu);
  for (const auto& [k, t] : a) {
    if (k.find("_codes") == std::string::npos) continue;
    const double differ = (t != b.at(k)).sum().item<double>() / t.numel();
    std::printf("  %-16s %s: %.4f%% of codes differ\n", type.c_str(), k.c_str(), 100 * differ);
    ok &= differ <= 1e-3;
  }
  return ok;
}

bool checkCaptured(const std::string& type, torch::Device cuda, bool foundInf) {
  const std::vector<torch::Tensor> eagerParams = makeParams(cuda), capturedParams = makeParams(cuda);
  std::unique_ptr<Optimizer> eager = makeFor(type, eagerParams), captured = makeFor(type, capturedParams);
  const torch::Tensor flag = torch::zeros({1}, torch::TensorOptions().device(cuda));
  auto step = [&](Optimizer& opt) {
    if (foundInf) opt.step(flag);
    else opt.step();
  };
  // The graph's warm-up runs one eager step with step 0's gradients.
  setGrads(eagerParams, 0), setGrads(capturedParams, 0);
  step(*eager);
  compile::CapturedGraph graph(cuda, [&] { step(*captured); }, /*warmups=*/1, {});
  bool ok = true;
  for (int s = 1; s < 8; ++s) {
    setGrads(eagerParams, s), setGrads(capturedParams, s);
    flag.fill_(foundInf && s % 3 == 0 ? 1.0 : 0.0);  // every third step overflows
    step(*eager);
    graph.replay();
  }
  torch::cuda::synchronize();
  for (size_t j = 0; j < eagerParams.size(); ++j) ok &= torch::equal(eagerParams[j], capturedParams[j]);
  const auto a = stateOf(*eager), b = stateOf(*captured);
  for (const auto& [k, t] : a) ok &= torch::equal(t, b.at(k));
  std::printf("  %-16s captured vs eager%s: %s (step count %.0f)\n", type.c_str(), foundInf ? " with found_inf" : "",
              ok ? "bit for bit" : "DIFFERENT", captured->stepCount().item<double>());
  return ok;
}

// AdamW's fused step over parameters, gradients and moments lying one after another in one buffer
// (the compute copies' masters: one span each, train/optim/adjacent_span.h) against the same
// parameters held apart (one list entry each): bit for bit.
bool checkAdamWSpans(torch::Device cuda) {
  const std::vector<torch::Tensor> apart = makeParams(cuda), init = makeParams(cuda);
  int64_t total = 0;
  for (const torch::Tensor& p : init) total += p.numel();
  const torch::Tensor buffer = torch::empty({total}, init.front().options().requires_grad(false));
  const torch::Tensor gradBuffer = torch::zeros({total}, buffer.options());
  std::vector<torch::Tensor> adjacent;
  int64_t offset = 0;
  for (const torch::Tensor& p : init) {
    torch::Tensor view = buffer.narrow(0, offset, p.numel()).view(p.sizes());
    view.copy_(p.detach());
    torch::Tensor leaf = view.detach().set_requires_grad(true);  // a leaf sharing the buffer
    leaf.mutable_grad() = gradBuffer.narrow(0, offset, p.numel()).view(p.sizes());
    adjacent.push_back(leaf);
    offset += p.numel();
  }
  std::unique_ptr<Optimizer> one = makeFor("AdamW", apart), spans = makeFor("AdamW", adjacent);
  for (int step = 0; step < 8; ++step) {
    setGrads(apart, step), setGrads(adjacent, step);
    one->step(), spans->step();
  }
  bool ok = true;
  for (size_t j = 0; j < apart.size(); ++j) ok &= torch::equal(apart[j], adjacent[j]);
  const auto a = stateOf(*one), b = stateOf(*spans);
  for (const auto& [k, t] : a) ok &= torch::equal(t, b.at(k));
  std::printf("  AdamW            over one span vs one entry a parameter: %s\n", ok ? "bit for bit" : "DIFFERENT");
  return ok;
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const torch::Device cuda(torch::kCUDA, 0);
  bool ok = checkAdamWSpans(cuda);
  for (const std::string& type : kTypes) {
    ok &= checkAgainstCpu(type, cuda);
    ok &= checkCaptured(type, cuda, false);
    ok &= checkCaptured(type, cuda, true);
  }
  std::printf("%s\n", ok ? "all optimizer checks passed" : "OPTIMIZER CHECK FAILED");
  return ok ? 0 : 1;
}
