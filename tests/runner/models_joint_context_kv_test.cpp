// Every cross-attention's k and v on the text context as one joint projection per U-Net pass
// (models/layers/joint_context_kv.h), and the batched form of the joint Linear with LoRA that it
// runs (adapters/frozen_joint_linear_lora.h): the same outputs and gradients (the context's, every
// LoRA down and up) as each attention's to_k and to_v, each attention projecting its own wherever
// the joint form would not compute what they do, and the weights still the checkpoint's keys.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/adapters/frozen_joint_linear_lora.h"
#include "models/adapters/lycoris_adapter.h"
#include "models/layers/joint_context_kv.h"
#include "models/unet/sdxl_unet.h"
#include "models/unet/sdxl_unet_blocks.h"

using namespace sinter::models;
using torch::Tensor;

namespace {

// The largest difference relative to the largest value of `want`.
double relativeError(const Tensor& got, const Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

// A LoRA adapter with random nonzero down and up (up is zero at a run's start; here it must not be,
// or its gradient paths would not be checked).
void attachLora(Linear& linear, int64_t rank, double alpha, double multiplier = 1.0) {
  auto lora = std::make_shared<LoraAdapter>();
  const auto options = torch::TensorOptions().dtype(linear->weight.scalar_type());
  lora->down = (torch::randn({rank, linear->inFeatures()}, options) * 0.3).requires_grad_(true);
  lora->up = (torch::randn({linear->outFeatures(), rank}, options) * 0.3).requires_grad_(true);
  lora->alpha = alpha;
  lora->multiplier = multiplier;
  linear->lora = lora;
}

// A tiny U-Net in float64 with frozen weights and its cross-attentions. float64: the random tiny
// SDXL U-Net's input gradient is ill-conditioned (models_joint_qkv_test says why), and this
// compares sums taken in another order.
struct TinyUnet {
  SdxlUnet unet{nullptr};
  std::vector<CrossAttention> crossAttentions;
};

TinyUnet tinyUnet(const SdxlUnetConfig& config, bool withLora) {
  torch::manual_seed(31);
  TinyUnet t{SdxlUnet(config), {}};
  t.unet->to(torch::kFloat64);
  for (auto& p : t.unet->parameters()) p.set_requires_grad(false);
  for (const auto& m : t.unet->modules(/*include_self=*/false))
    if (auto block = std::dynamic_pointer_cast<BasicTransformerBlockImpl>(m)) t.crossAttentions.push_back(block->attn2);
  if (withLora) {
    // One alpha, so that the parts of one width batch as runs; one module's multiplier differs, which
    // breaks its width's run (a factor of its own).
    for (CrossAttention& a : t.crossAttentions) {
      attachLora(a->to_k, 4, 2.0);
      attachLora(a->to_v, 4, 2.0);
    }
    t.crossAttentions[1]->to_k->lora->multiplier = 0.5;
  }
  return t;
}

// Whether the cross-attentions' to_k and to_v weights are the rows of one buffer.
bool joined(const TinyUnet& t) {
  const Tensor& first = t.crossAttentions.front()->to_k->weight;
  for (const CrossAttention& a : t.crossAttentions)
    for (const Tensor& w : {a->to_k->weight, a->to_v->weight})
      if (!w.storage().is_alias_of(first.storage())) return false;
  return true;
}

struct Pass {
  Tensor out;
  std::vector<Tensor> grads;  // the context's, then each to_k's down and up, each to_v's down and up
};

struct Inputs {
  Tensor x, t, context, y;
};

Inputs inputs(const SdxlUnetConfig& config) {
  torch::manual_seed(32);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  return {torch::randn({2, config.inChannels, 16, 8}, f64), torch::tensor({10.0, 900.0}),
          torch::randn({2, 7, config.contextDim}, f64),
          config.admInChannels > 0 ? torch::randn({2, config.admInChannels}, f64) : Tensor()};
}

// A forward and the backward of a fixed random projection of the output, the context requiring
// grad (text encoders that train). `clearGradients` false: the next pass adds into the LoRA's
// gradients (their kept buffers).
Pass run(TinyUnet& t, const Inputs& in, bool clearGradients = true) {
  const Tensor context = in.context.clone().requires_grad_(true);
  const Tensor out = t.unet(in.x, in.t, context, in.y);
  torch::manual_seed(33);
  (out * torch::randn_like(out)).sum().backward();
  Pass p{out.detach(), {context.grad()}};
  for (CrossAttention& a : t.crossAttentions)
    for (const Linear& l : {a->to_k, a->to_v})
      if (l->lora) {
        p.grads.push_back(l->lora->down.grad().clone()), p.grads.push_back(l->lora->up.grad().clone());
        if (clearGradients) l->lora->down.mutable_grad() = Tensor(), l->lora->up.mutable_grad() = Tensor();
      }
  return p;
}

void expectSame(const Pass& got, const Pass& want, double tolerance) {
  EXPECT_LE(relativeError(got.out, want.out), tolerance);
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i)
    EXPECT_LE(relativeError(got.grads[i], want.grads[i]), tolerance) << "gradient " << i;
}

void setJointContextKvEnv(bool off) {
  if (off) ::setenv("SINTER_JOINT_CONTEXT_KV", "0", 1);
  else ::unsetenv("SINTER_JOINT_CONTEXT_KV");
}

// The U-Net's pass with the fused-kernel switch on: with the environment's off switch (each
// attention projects its own), then joined; twice each, the second adding into kept gradients.
void expectJointMatchesSeparate(TinyUnet& t, const Inputs& in, double tolerance) {
  setJointContextKvEnv(true);
  t.unet->setFusedKernels(true);
  setJointContextKvEnv(false);
  const Pass separate = run(t, in, /*clearGradients=*/false);
  const Pass separateAgain = run(t, in);
  ASSERT_FALSE(joined(t));
  t.unet->setFusedKernels(true);
  const Pass joint = run(t, in, /*clearGradients=*/false);
  EXPECT_TRUE(joined(t));
  expectSame(joint, separate, tolerance);
  const Pass jointAgain = run(t, in);
  expectSame(jointAgain, separateAgain, tolerance);
}

const std::vector<std::pair<std::string, SdxlUnetConfig>>& tinyConfigs() {
  static const std::vector<std::pair<std::string, SdxlUnetConfig>> configs{
      {"SDXL", SdxlUnetConfig::tiny()}, {"SD 1.5", SdxlUnetConfig::tinySd15()}, {"SD 2", SdxlUnetConfig::tinySd2()}};
  return configs;
}

}  // namespace

TEST(JointContextKv, TinyUnetsWithLoraOnEveryCrossAttentionMatchTheSeparateProjections) {
  for (const auto& [name, config] : tinyConfigs()) {
    SCOPED_TRACE(name);
    TinyUnet t = tinyUnet(config, /*withLora=*/true);
    ASSERT_GE(t.crossAttentions.size(), 4u);
    expectJointMatchesSeparate(t, inputs(config), 1e-10);
  }
}

TEST(JointContextKv, TinyUnetsWithoutLoraMatchTheSeparateProjections) {
  for (const auto& [name, config] : tinyConfigs()) {
    SCOPED_TRACE(name);
    TinyUnet t = tinyUnet(config, /*withLora=*/false);
    expectJointMatchesSeparate(t, inputs(config), 1e-10);
  }
}

TEST(JointContextKv, OffWithoutTheFusedKernelSwitchOrByTheEnvironment) {
  TinyUnet t = tinyUnet(SdxlUnetConfig::tiny(), /*withLora=*/true);
  const Inputs in = inputs(SdxlUnetConfig::tiny());
  run(t, in);
  EXPECT_FALSE(joined(t));
  setJointContextKvEnv(true);
  t.unet->setFusedKernels(true);
  setJointContextKvEnv(false);
  run(t, in);
  EXPECT_FALSE(joined(t));
  t.unet->setFusedKernels(true);
  run(t, in);
  EXPECT_TRUE(joined(t));
}

TEST(JointContextKv, WhereTheJointFormDiffersEachAttentionProjectsItsOwn) {
  // Each case: a change from plain LoRA of one rank on every to_k and to_v, which makes the joint form not apply.
  const std::vector<std::pair<std::string, std::function<void(TinyUnet&)>>> cases{
      {"one module without LoRA", [](TinyUnet& t) { t.crossAttentions[2]->to_v->lora = nullptr; }},
      {"ranks differing", [](TinyUnet& t) { attachLora(t.crossAttentions[1]->to_k, 2, 1.0); }},
      {"network_dropout while training", [](TinyUnet& t) { t.crossAttentions[0]->to_k->lora->dropout = 0.25; }},
      {"a block runner (per-block graphs)",
       [](TinyUnet& t) {
         SdxlUnetImpl* unet = t.unet.get();
         t.unet->setBlockRunner([unet](const std::string&, SdxlUnetBlock& block, const Tensor& h, const Tensor& emb,
                                       const Tensor& context) { return unet->runBlockDefault(block, h, emb, context); });
       }},
      {"gradient checkpointing", [](TinyUnet& t) { t.unet->setGradientCheckpointing(true, /*preserveRngState=*/false); }},
  };
  const Inputs in = inputs(SdxlUnetConfig::tiny());
  // The fused-kernel switch on, the joint k/v off: what differs from it is only the k/v's path.
  TinyUnet reference = tinyUnet(SdxlUnetConfig::tiny(), /*withLora=*/true);
  setJointContextKvEnv(true);
  reference.unet->setFusedKernels(true);
  setJointContextKvEnv(false);
  for (const auto& [name, change] : cases) {
    SCOPED_TRACE(name);
    TinyUnet t = tinyUnet(SdxlUnetConfig::tiny(), /*withLora=*/true);
    change(t);
    t.unet->train(true);
    t.unet->setFusedKernels(true);
    torch::manual_seed(34);
    const Pass p = run(t, in);
    EXPECT_FALSE(joined(t));
    if (name == "a block runner (per-block graphs)" || name == "gradient checkpointing") {
      // Nothing else changed: the same values as the reference's separate projections.
      expectSame(p, run(reference, in), 1e-10);
    }
  }
}

TEST(JointContextKv, ALycorisAdapterKeepsTheSeparateProjections) {
  TinyUnet t = tinyUnet(SdxlUnetConfig::tiny(), /*withLora=*/false);
  JointContextKv joint;
  std::vector<std::shared_ptr<CrossAttentionImpl>> attentions;
  for (CrossAttention& a : t.crossAttentions) attentions.push_back(a.ptr());
  joint.set(attentions, true);
  const Tensor context = inputs(SdxlUnetConfig::tiny()).context;
  t.crossAttentions.back()->to_v->lycoris = std::make_shared<LycorisAdapter>();
  EXPECT_FALSE(joint.provide(context));
  EXPECT_FALSE(joined(t));
  t.crossAttentions.back()->to_v->lycoris = nullptr;
  EXPECT_TRUE(joint.provide(context));
  joint.release();
  EXPECT_TRUE(joined(t));
}

TEST(JointContextKv, TheWeightsStayTheCheckpointKeysAsRowsOfTheJointBuffer) {
  TinyUnet t = tinyUnet(SdxlUnetConfig::tiny(), /*withLora=*/false);
  std::map<std::string, Tensor> before;
  for (const auto& [key, value] : t.unet->checkpointTensors()) before[key] = value.clone();
  t.unet->setFusedKernels(true);
  const Inputs in = inputs(SdxlUnetConfig::tiny());
  torch::NoGradGuard noGrad;
  t.unet(in.x, in.t, in.context, in.y);
  ASSERT_TRUE(joined(t));
  size_t crossKeys = 0;
  for (const auto& [key, value] : t.unet->checkpointTensors()) {
    EXPECT_TRUE(torch::equal(value, before.at(key))) << key;
    crossKeys += key.find("attn2.to_k.weight") != std::string::npos || key.find("attn2.to_v.weight") != std::string::npos;
  }
  EXPECT_EQ(crossKeys, 2 * t.crossAttentions.size());
  // Written by key (as a checkpoint load copies into the parameters), the joint pass reads the new values.
  TinyUnet twin = tinyUnet(SdxlUnetConfig::tiny(), /*withLora=*/false);
  setJointContextKvEnv(true);
  twin.unet->setFusedKernels(true);
  setJointContextKvEnv(false);
  auto params = t.unet->named_parameters();
  auto twinParams = twin.unet->named_parameters();
  torch::manual_seed(35);
  for (const auto& p : params)
    if (p.key().find("attn2.to_k") != std::string::npos || p.key().find("attn2.to_v") != std::string::npos) {
      const Tensor fresh = torch::randn_like(p.value());
      p.value().copy_(fresh);
      twinParams[p.key()].copy_(fresh);
    }
  EXPECT_TRUE(joined(t));
  EXPECT_LE(relativeError(t.unet(in.x, in.t, in.context, in.y), twin.unet(in.x, in.t, in.context, in.y)), 1e-10);
}

// The joint function alone, in float32, with enough parts to batch: runs of equal width and factor
// (a factor that differs breaks a run), against each part's frozen Linear with LoRA by autograd.
TEST(JointContextKv, TheBatchedJointLinearWithLoraMatchesEachPart) {
  torch::manual_seed(36);
  const int64_t in = 24, rank = 3;
  const std::vector<int64_t> widths{8, 8, 8, 16, 16, 16, 16, 8, 8};
  const std::vector<double> alphas{0.5, 0.5, 0.5, 1.5, 1.5, 0.25, 0.25, 2.0, 2.0};
  const Tensor x0 = torch::randn({2, 5, in});
  std::vector<Tensor> weights, downs, ups;
  for (int64_t w : widths) {
    weights.push_back(torch::randn({w, in}) * 0.2);
    downs.push_back((torch::randn({rank, in}) * 0.3).requires_grad_(true));
    ups.push_back((torch::randn({w, rank}) * 0.3).requires_grad_(true));
  }
  const Tensor joint = torch::cat(weights, 0);
  const Tensor projection = torch::randn({2, 5, joint.size(0)});
  const auto pass = [&](bool jointForm) {
    const Tensor x = x0.clone().requires_grad_(true);
    Tensor y;
    if (jointForm) {
      std::vector<JointLoraPart> parts;
      for (size_t i = 0; i < widths.size(); ++i) parts.push_back({downs[i], ups[i], alphas[i]});
      y = frozenJointLinearWithLora(x, joint, parts);
    } else {
      std::vector<Tensor> outs;
      for (size_t i = 0; i < widths.size(); ++i)
        outs.push_back(torch::nn::functional::linear(x, weights[i]) +
                       alphas[i] * torch::nn::functional::linear(torch::nn::functional::linear(x, downs[i]), ups[i]));
      y = torch::cat(outs, -1);
    }
    (y * projection).sum().backward();
    Pass p{y.detach(), {x.grad()}};
    for (size_t i = 0; i < widths.size(); ++i) p.grads.push_back(downs[i].grad().clone()), p.grads.push_back(ups[i].grad().clone());
    return p;
  };
  const auto clear = [&] {
    for (size_t i = 0; i < widths.size(); ++i) downs[i].mutable_grad() = Tensor(), ups[i].mutable_grad() = Tensor();
  };
  // Twice each: the second pass adds into the gradients the first left (the kept buffers).
  const Pass separate = pass(false), separateAgain = pass(false);
  clear();
  const Pass first = pass(true), again = pass(true);
  expectSame(first, separate, 1e-5);
  expectSame(again, separateAgain, 1e-5);
}
