// LyCORIS deltas built once per step (network/lycoris_step_deltas.h): over several micro-batches
// the tiny SDXL U-Net's outputs and the trained tensors' gradients equal those of rebuilding the
// delta in every forward pass, as LyCORIS does; after an update the deltas follow the tensors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/adapters/lycoris_adapter.h"
#include "models/unet/sdxl_unet.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"
#include "network/lycoris_step_deltas.h"

using namespace sinter;
using namespace sinter::network;

namespace {

struct Inputs {
  torch::Tensor x, t, context, y, weight;  // weight: the loss's per-output weights
};

std::vector<Inputs> microBatches(const models::SdxlUnetConfig& c, int n) {
  torch::manual_seed(11);
  std::vector<Inputs> out;
  for (int i = 0; i < n; ++i)
    out.push_back({torch::randn({1, 4, 16, 16}), torch::randint(0, 1000, {1}), torch::randn({1, 8, c.contextDim}),
                   torch::randn({1, c.admInChannels}), torch::randn({1, 4, 16, 16})});
  return out;
}

struct Trained {
  models::SdxlUnet unet{nullptr};
  std::unique_ptr<LoraNetwork> net;
};

// The same U-Net and network every time (same seeds), the trained tensors moved off their zero
// starts so that every factor has a gradient.
Trained make(const std::vector<std::string>& args) {
  torch::manual_seed(5);
  Trained t;
  t.unet = models::SdxlUnet(models::SdxlUnetConfig::tiny());
  LoraNetworkOptions o;
  o.dim = 4;
  o.alpha = 2.0;
  o.args = parseNetworkArgs(args, "lycoris.kohya");
  t.net = std::make_unique<LoraNetwork>(o);
  t.net->attach(sdxlLoraRule(LoraComponent::Unet), *t.unet);
  torch::NoGradGuard noGrad;
  for (torch::Tensor& p : t.net->parameters()) p.add_(0.1 * torch::randn_like(p));
  t.unet->train();
  return t;
}

std::vector<torch::Tensor> gradients(const LoraNetwork& net) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : net.parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return out;
}

}  // namespace

TEST(LycorisStepDeltas, MicroBatchesTrainAsPerForwardRebuilds) {
  const std::vector<std::vector<std::string>> cases{{"algo=loha", "conv_dim=2"},
                                                    {"algo=lokr", "factor=4", "conv_dim=2"},
                                                    {"algo=locon", "dora_wd=True"},
                                                    {"algo=loha", "dora_wd=True", "use_scalar=True"}};
  const models::SdxlUnetConfig config = models::SdxlUnetConfig::tiny();
  const std::vector<Inputs> batches = microBatches(config, 3);
  for (const auto& args : cases) {
    SCOPED_TRACE(args.front() + " " + args[1]);
    Trained perForward = make(args), perStep = make(args);
    LycorisStepDeltas deltas(*perStep.net, torch::kFloat32);
    ASSERT_GT(deltas.size(), 0u);
    deltas.start();
    for (const Inputs& in : batches) {
      const torch::Tensor a = perForward.unet->forward(in.x, in.t, in.context, in.y);
      const torch::Tensor b = perStep.unet->forward(in.x, in.t, in.context, in.y);
      EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-6));
      (a * in.weight).sum().backward();
      (b * in.weight).sum().backward();
    }
    // The forward passes used the step deltas: no gradient has reached the trained tensors yet.
    for (const torch::Tensor& p : perStep.net->parameters()) EXPECT_FALSE(p.grad().defined());
    deltas.backpropagate();
    const std::vector<torch::Tensor> ga = gradients(*perForward.net), gb = gradients(*perStep.net);
    ASSERT_EQ(ga.size(), gb.size());
    double largest = 0;
    for (const torch::Tensor& g : ga) largest = std::max(largest, g.abs().max().item<double>());
    for (size_t i = 0; i < ga.size(); ++i)
      EXPECT_TRUE(torch::allclose(gb[i], ga[i], 1e-4, 1e-5 * largest)) << i << " max diff " << (gb[i] - ga[i]).abs().max().item<double>();
    // The accumulated delta gradients are spent: a second call adds nothing.
    deltas.backpropagate();
    const std::vector<torch::Tensor> again = gradients(*perStep.net);
    for (size_t i = 0; i < gb.size(); ++i) EXPECT_TRUE(torch::equal(again[i], gb[i])) << i;

    // An update: the refreshed step deltas are the deltas of the new tensors.
    {
      torch::NoGradGuard noGrad;
      for (torch::Tensor& p : perStep.net->parameters()) p.add_(0.05 * torch::randn_like(p));
      for (torch::Tensor& p : perForward.net->parameters()) p.zero_();
    }
    deltas.refresh();
    for (const LoraModule& m : perStep.net->modules()) {
      if (!m.lycoris->stepDelta.defined()) continue;
      const torch::Tensor base = m.linear ? m.linear->weight : m.conv->weight;
      const torch::Tensor expected = models::lycorisComputeDelta(*m.lycoris, base, torch::kFloat32, {});
      EXPECT_TRUE(torch::allclose(m.lycoris->stepDelta, expected, 1e-6, 1e-7)) << m.name;
    }
  }
}

// Rank dropout's mask is the step's: every micro-batch of a step sees the same rows dropped, and
// the next step draws a new mask.
TEST(LycorisStepDeltas, RankDropoutMaskIsDrawnOncePerStep) {
  const models::SdxlUnetConfig config = models::SdxlUnetConfig::tiny();
  const std::vector<Inputs> batches = microBatches(config, 1);
  const Inputs& in = batches.front();
  Trained t = make({"algo=loha", "rank_dropout=0.5", "preset=attn-only"});
  LycorisStepDeltas deltas(*t.net, torch::kFloat32);
  deltas.start();
  torch::NoGradGuard noGrad;
  const torch::Tensor first = t.unet->forward(in.x, in.t, in.context, in.y);
  const torch::Tensor second = t.unet->forward(in.x, in.t, in.context, in.y);
  EXPECT_TRUE(torch::equal(first, second));
  deltas.refresh();  // the next step
  const torch::Tensor next = t.unet->forward(in.x, in.t, in.context, in.y);
  EXPECT_FALSE(torch::allclose(first, next, 1e-4, 1e-5));
  // A module whose rows were dropped this step: its step delta has whole zero rows.
  bool zeroRows = false;
  for (const LoraModule& m : t.net->modules())
    if (m.lycoris->stepDelta.defined()) zeroRows |= (m.lycoris->stepDelta.flatten(1).abs().sum(1) == 0).any().item<bool>();
  EXPECT_TRUE(zeroRows);
}

// Which modules build a full-size delta: LoHa, LoKr and DoRA; not LoCon's factor path, IA3's
// scaling, full's difference, or bypass mode.
TEST(LycorisStepDeltas, OnlyFullSizeDeltasAreBuiltPerStep) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"algo=locon"}, {"algo=ia3"}, {"algo=full"}, {"algo=loha", "bypass_mode=True"}}) {
    Trained t = make(args);
    EXPECT_EQ(LycorisStepDeltas(*t.net, torch::kFloat32).size(), 0u) << args.front();
  }
  Trained loha = make({"algo=loha"});
  EXPECT_EQ(LycorisStepDeltas(*loha.net, torch::kFloat32).size(), loha.net->modules().size());
}
