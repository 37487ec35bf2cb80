// On the GPU machine: blocks_to_swap and fp8_base against the resident float32 model, on CUDA,
// where the swapped blocks' weights arrive on a side stream one block ahead of the compute. A
// FLUX transformer of small width and more blocks than the tiny one (6 double, 10 single), random
// weights, TF32 off; three steps of forward and backward, with and without gradient checkpointing;
// the output and the gradients of both inputs compared. Exits 1 above 1e-5 relative (float32:
// the same GEMMs, dx computed by the Linear's own node). fp8_base: against the same model with its
// Linear weights rounded through e4m3, likewise. Trained swapped weights (full-weight runs): every
// weight stepped by SGD, the streamed ones inside the backward pass through their device copies
// and written back to host memory on the side stream; outputs and the final weights against the
// resident model stepped after its backward pass. With LoRA: rank-4 adapters on every Linear of the
// frozen model (as a LoRA run trains them: one fused function with the served weight asked for in
// each pass), the adapters' gradients compared as well, resident against swapped and fp8_base.
//   build-cuda/bin/sinter-block-swap-check
#include <torch/torch.h>

#include <cstdio>
#include <string>
#include <vector>

#include "models/flux/flux_latents.h"
#include "models/flux/flux_rope.h"
#include "models/flux/flux_transformer.h"
#include "models/weights/served_weight.h"
#include "models/layers/linear.h"

using namespace sinter::models;

namespace {

FluxConfig checkConfig() {
  FluxConfig c = FluxConfig::tiny();
  c.hiddenSize = 256;
  c.numHeads = 4;
  c.axesDim = {16, 24, 24};
  c.contextInDim = 64;
  c.depth = 6;
  c.depthSingleBlocks = 10;
  return c;
}

FluxTransformer randomModel() {
  torch::manual_seed(4);
  FluxTransformer m(checkConfig());
  torch::NoGradGuard noGrad;
  for (auto& p : m->parameters()) {
    p.copy_(torch::randn_like(p) * 0.05 + (p.dim() == 1 ? 1.0 : 0.0));
    p.set_requires_grad(false);
  }
  return m;
}

struct Outputs {
  std::vector<torch::Tensor> tensors;  // output, d img, d txt per step
};

constexpr double kLearningRate = 0.05;

// SGD on every parameter that has a gradient (the streamed weights, if any, are stepped elsewhere).
void sgdStep(FluxTransformer& m) {
  torch::NoGradGuard noGrad;
  for (auto& p : m->parameters())
    if (p.grad().defined()) {
      p.sub_(p.grad() * kLearningRate);
      p.mutable_grad() = torch::Tensor();
    }
}

// Rank-4 adapters on every Linear, the same values in every model built by randomModel(); their
// down and up tensors in module order.
std::vector<torch::Tensor> attachAdapters(FluxTransformer& m) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> tensors;
  for (const auto& module : m->modules(/*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module)) {
      auto adapter = std::make_shared<LoraAdapter>();
      adapter->down = (torch::randn({4, linear->inFeatures()}) * 0.05).to(torch::kCUDA).requires_grad_(true);
      adapter->up = (torch::randn({linear->outFeatures(), 4}) * 0.05).to(torch::kCUDA).requires_grad_(true);
      adapter->alpha = 2.0;
      linear->lora = adapter;
      tensors.push_back(adapter->down);
      tensors.push_back(adapter->up);
    }
  return tensors;
}

Outputs threeSteps(FluxTransformer& m, bool checkpointing, bool train = false, const std::vector<torch::Tensor>& adapters = {}) {
  m->train();
  m->setGradientCheckpointing(checkpointing, false);
  const FluxConfig& c = m->config();
  const torch::Device cuda(torch::kCUDA);
  Outputs out;
  for (int step = 0; step < 3; ++step) {
    torch::manual_seed(100 + step);
    const auto f32 = torch::TensorOptions().device(cuda);
    const torch::Tensor img = packFluxLatents(torch::randn({1, 16, 32, 32}, f32)).requires_grad_(true);
    const torch::Tensor txt = torch::randn({1, 32, c.contextInDim}, f32).requires_grad_(true);
    const torch::Tensor y = m(img, fluxImageIds(1, 16, 16, f32), txt, fluxTextIds(1, 32, f32), torch::full({1}, 0.6, f32),
                              torch::randn({1, c.vecInDim}, f32), torch::full({1}, 3.5, f32));
    y.pow(2).mean().backward();
    if (train) sgdStep(m);
    out.tensors.push_back(y.detach());
    out.tensors.push_back(img.grad());
    out.tensors.push_back(txt.grad());
    for (torch::Tensor a : adapters) {
      out.tensors.push_back(a.grad().clone());
      a.mutable_grad() = torch::Tensor();
    }
  }
  torch::cuda::synchronize();
  if (train)
    for (const auto& [key, t] : m->checkpointTensors("")) out.tensors.push_back(t.detach().to(torch::kCPU));
  return out;
}

FluxTransformer trainable(FluxTransformer m) {
  for (auto& p : m->parameters()) p.set_requires_grad(true);
  return m;
}

bool compare(const std::string& what, const Outputs& reference, const Outputs& other) {
  double worst = 0;
  for (size_t i = 0; i < reference.tensors.size(); ++i) {
    const torch::Tensor r = reference.tensors[i].to(torch::kFloat64), o = other.tensors[i].to(torch::kFloat64);
    worst = std::max(worst, (r - o).abs().max().item<double>() / r.abs().max().item<double>());
  }
  const bool ok = worst <= 1e-5;
  std::printf("%-52s max relative difference %.3g  %s\n", what.c_str(), worst, ok ? "ok" : "FAIL");
  return ok;
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  const torch::Device cuda(torch::kCUDA);
  bool ok = true;
  for (const bool checkpointing : {false, true}) {
    const std::string gc = checkpointing ? ", gradient checkpointing" : "";
    FluxTransformer resident = randomModel();
    moveToDevice(*resident, cuda);
    const Outputs reference = threeSteps(resident, checkpointing);

    FluxTransformer swapped = randomModel();
    swapped->enableBlockSwap(4, cuda, torch::kFloat32);  // 2 double, 4 single swapped: 4 and 6 stream
    moveToDevice(*swapped, cuda);
    ok = compare("blocks_to_swap 4 (" + swapped->streamedBlocks() + ")" + gc, reference, threeSteps(swapped, checkpointing)) && ok;
    std::printf("  ring loads: %lld double, %lld single\n", static_cast<long long>(swapped->doubleSwap()->loads()),
                static_cast<long long>(swapped->singleSwap()->loads()));

    // Trained: the streamed weights stepped in the backward pass, written back to host memory.
    FluxTransformer trainedResident = trainable(randomModel());
    moveToDevice(*trainedResident, cuda);
    const Outputs trainedReference = threeSteps(trainedResident, checkpointing, true);
    FluxTransformer trainedSwapped = randomModel();
    trainedSwapped->enableBlockSwap(4, cuda, torch::kFloat32);
    moveToDevice(*trainedSwapped, cuda);
    trainable(trainedSwapped);
    for (const auto& swap : {trainedSwapped->doubleSwap(), trainedSwapped->singleSwap()})
      swap->trainWeights([](const torch::Tensor&, torch::Tensor& onDevice, const torch::Tensor& grad) { onDevice.sub_(grad * kLearningRate); });
    const Outputs trained = threeSteps(trainedSwapped, checkpointing, true);
    for (const auto& swap : {trainedSwapped->doubleSwap(), trainedSwapped->singleSwap()}) swap->synchronize();
    ok = compare("blocks_to_swap 4, trained (SGD; outputs, weights)" + gc, trainedReference, trained) && ok;

    if (!float8InBuild()) continue;
    FluxTransformer rounded = randomModel();
    {
      torch::NoGradGuard noGrad;
      for (const auto& m : rounded->modules(false))
        if (auto l = std::dynamic_pointer_cast<LinearImpl>(m)) l->weight.copy_(l->weight.to(float8Dtype()).to(torch::kFloat32));
    }
    moveToDevice(*rounded, cuda);
    const Outputs roundedReference = threeSteps(rounded, checkpointing);
    FluxTransformer fp8 = randomModel();
    storeLinearsInFloat8(*fp8);
    moveToDevice(*fp8, cuda);
    ok = compare("fp8_base" + gc, roundedReference, threeSteps(fp8, checkpointing)) && ok;
    FluxTransformer both = randomModel();
    both->enableBlockSwap(4, cuda, float8Dtype());
    storeLinearsInFloat8(*both);
    moveToDevice(*both, cuda);
    ok = compare("fp8_base + blocks_to_swap 4" + gc, roundedReference, threeSteps(both, checkpointing)) && ok;

    // LoRA on the frozen models: the rounded resident model's adapters against each served form.
    const std::vector<torch::Tensor> roundedAdapters = attachAdapters(rounded);
    const Outputs loraReference = threeSteps(rounded, checkpointing, false, roundedAdapters);
    FluxTransformer loraFp8 = randomModel();
    storeLinearsInFloat8(*loraFp8);
    moveToDevice(*loraFp8, cuda);
    ok = compare("LoRA, fp8_base" + gc, loraReference, threeSteps(loraFp8, checkpointing, false, attachAdapters(loraFp8))) && ok;
    FluxTransformer loraBoth = randomModel();
    loraBoth->enableBlockSwap(4, cuda, float8Dtype());
    storeLinearsInFloat8(*loraBoth);
    moveToDevice(*loraBoth, cuda);
    ok = compare("LoRA, fp8_base + blocks_to_swap 4" + gc, loraReference,
                 threeSteps(loraBoth, checkpointing, false, attachAdapters(loraBoth))) && ok;
  }
  return ok ? 0 : 1;
}
