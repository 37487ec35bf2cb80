// Self-attention's q/k/v as one GEMM (models/layers/joint_linear.h, CrossAttentionImpl::setJointQkv):
// the same outputs and gradients (x, every LoRA down and up) as the three projections, the
// separate projections wherever the joint form would not compute what they do, and the weights
// still the checkpoint's keys (one buffer's rows; joined again after a move).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/adapters/lycoris_adapter.h"
#include "models/layers/attention.h"
#include "models/layers/joint_linear.h"
#include "models/unet/sdxl_unet.h"
#include "models/unet/sdxl_unet_blocks.h"
#include "models/weights/served_weight.h"

using namespace sinter::models;
using torch::Tensor;

namespace {

constexpr int64_t kDim = 32, kHeads = 2, kHeadDim = 16;

// The largest difference relative to the largest value of `want`.
double relativeError(const Tensor& got, const Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

// A CrossAttention whose weights are frozen, as in a LoRA run.
CrossAttention frozenAttention(int64_t seed, int64_t contextDim = kDim) {
  torch::manual_seed(seed);
  CrossAttention a(kDim, contextDim, kHeads, kHeadDim);
  for (auto& p : a->parameters()) p.set_requires_grad(false);
  return a;
}

// A LoRA adapter on `linear` with random nonzero down and up (up is zero at a run's start; here
// it must not be, or its gradient paths would not be checked).
void attachLora(Linear& linear, int64_t rank, double alpha) {
  auto lora = std::make_shared<LoraAdapter>();
  const auto options = torch::TensorOptions().dtype(linear->weight.scalar_type());
  lora->down = (torch::randn({rank, linear->inFeatures()}, options) * 0.3).requires_grad_(true);
  lora->up = (torch::randn({linear->outFeatures(), rank}, options) * 0.3).requires_grad_(true);
  lora->alpha = alpha;
  linear->lora = lora;
}

void attachQkvLoras(CrossAttention& a, std::vector<int64_t> ranks = {4, 4, 4}) {
  attachLora(a->to_q, ranks[0], 2.0);
  attachLora(a->to_k, ranks[1], 4.0);
  attachLora(a->to_v, ranks[2], 8.0);
}

std::vector<Linear> qkvOf(CrossAttention& a) { return {a->to_q, a->to_k, a->to_v}; }

bool joined(CrossAttention& a) {
  const Tensor &q = a->to_q->weight, &k = a->to_k->weight, &v = a->to_v->weight;
  return k.storage().is_alias_of(q.storage()) && v.storage().is_alias_of(q.storage()) &&
         k.storage_offset() == q.storage_offset() + q.numel() && v.storage_offset() == k.storage_offset() + k.numel();
}

struct Pass {
  Tensor out;
  std::vector<Tensor> grads;  // x's, then each adapter's down and up
};

// A forward pass and the backward pass of a fixed random projection of its output. Gradients
// accumulate across passes (the second pass adds into kept gradient buffers).
Pass run(CrossAttention& a, const Tensor& x, const Tensor& context = {}) {
  const Tensor in = x.detach().clone().requires_grad_(true);
  const Tensor out = a(in, context);
  torch::manual_seed(99);
  (out * torch::randn_like(out)).sum().backward();
  Pass p{out.detach(), {in.grad()}};
  for (Linear& l : qkvOf(a))
    if (l->lora) p.grads.push_back(l->lora->down.grad().clone()), p.grads.push_back(l->lora->up.grad().clone());
  return p;
}

// Within fp32's tolerance (1e-5 relative) by default.
void expectSame(const Pass& got, const Pass& want, double tolerance = 1e-5) {
  EXPECT_LE(relativeError(got.out, want.out), tolerance);
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i)
    EXPECT_LE(relativeError(got.grads[i], want.grads[i]), tolerance) << "gradient " << i;
}

void clearLoraGradients(CrossAttention& a) {
  for (Linear& l : qkvOf(a))
    if (l->lora) l->lora->down.mutable_grad() = Tensor(), l->lora->up.mutable_grad() = Tensor();
}

Tensor input(int64_t seed, int64_t dim = kDim) {
  torch::manual_seed(seed);
  return torch::randn({2, 6, dim});
}

// The separate projections' pass, then the joint one's, on the same module (joining changes no value).
void expectJointMatchesSeparate(CrossAttention& a, const Tensor& x) {
  a->setJointQkv(false);
  const Pass separate = run(a, x);
  const Pass separateAgain = run(a, x);  // gradients added into the kept buffers
  ASSERT_FALSE(joined(a));
  clearLoraGradients(a);
  a->setJointQkv(true);
  ASSERT_TRUE(a->jointQkv());
  const Pass joint = run(a, x);
  EXPECT_TRUE(joined(a));
  expectSame(joint, separate);
  const Pass jointAgain = run(a, x);
  expectSame(jointAgain, separateAgain);
}

}  // namespace

TEST(JointQkv, WithoutLoraMatchesTheThreeProjections) {
  CrossAttention a = frozenAttention(1);
  expectJointMatchesSeparate(a, input(2));
}

TEST(JointQkv, WithLoraOnQkvMatchesTheThreeProjections) {
  CrossAttention a = frozenAttention(3);
  attachQkvLoras(a);
  a->to_k->lora->multiplier = 0.5;
  expectJointMatchesSeparate(a, input(4));
}

TEST(JointQkv, WithoutGradientsMatchesTheThreeProjections) {
  CrossAttention a = frozenAttention(5);
  attachQkvLoras(a);
  const Tensor x = input(6);
  torch::NoGradGuard noGrad;
  const Tensor separate = a(x);
  a->setJointQkv(true);
  const Tensor joint = a(x);
  EXPECT_TRUE(joined(a));
  EXPECT_LE(relativeError(joint, separate), 1e-5);
}

TEST(JointQkv, WhereTheJointFormDiffersTheProjectionsRunSeparately) {
  // Each case: a change from frozen q/k/v with equal LoRA adapters, which makes the joint form not apply.
  const std::vector<std::pair<std::string, std::function<void(CrossAttention&)>>> cases{
      {"one projection without LoRA", [](CrossAttention& a) { a->to_v->lora = nullptr; }},
      {"ranks differing", [](CrossAttention& a) { attachLora(a->to_v, 2, 1.0); }},
      {"network_dropout while training", [](CrossAttention& a) { a->to_k->lora->dropout = 0.25; }},
      {"rank_dropout while training", [](CrossAttention& a) { a->to_q->lora->rankDropout = 0.25; }},
      {"module_dropout while training", [](CrossAttention& a) { a->to_v->lora->moduleDropout = 0.25; }},
      {"a trainable weight", [](CrossAttention& a) { a->to_q->weight.set_requires_grad(true); }},
      {"another adapter dtype",
       [](CrossAttention& a) { a->to_k->lora->up = a->to_k->lora->up.detach().to(torch::kFloat64).requires_grad_(true); }},
  };
  for (const auto& [name, change] : cases) {
    SCOPED_TRACE(name);
    CrossAttention a = frozenAttention(7);
    attachQkvLoras(a);
    change(a);
    a->train(true);
    a->setJointQkv(true);
    const Tensor x = input(8);
    EXPECT_FALSE(jointLinearApplies({a->to_q.get(), a->to_k.get(), a->to_v.get()}, x));
    torch::manual_seed(10);
    a(x.detach().clone().requires_grad_(true)).sum().backward();
    EXPECT_FALSE(joined(a));
  }
}

TEST(JointQkv, LoraDropoutOutsideTrainingDrawsNothingSoTheJointFormApplies) {
  CrossAttention a = frozenAttention(11);
  attachQkvLoras(a);
  a->to_k->lora->dropout = 0.25;
  a->train(false);
  expectJointMatchesSeparate(a, input(12));
}

TEST(JointQkv, CrossAttentionOnAContextRunsSeparately) {
  CrossAttention a = frozenAttention(13, /*contextDim=*/24);
  attachQkvLoras(a);
  a->setJointQkv(true);
  torch::manual_seed(14);
  const Tensor context = torch::randn({2, 5, 24});
  run(a, input(15), context);
  EXPECT_FALSE(joined(a));
}

TEST(JointQkv, ALycorisAdapterIsLeftToItsOwnPath) {
  CrossAttention a = frozenAttention(16);
  const Tensor x = input(17);
  const std::vector<LinearImpl*> linears{a->to_q.get(), a->to_k.get(), a->to_v.get()};
  EXPECT_TRUE(jointLinearApplies(linears, x));
  a->to_k->lycoris = std::make_shared<LycorisAdapter>();
  EXPECT_FALSE(jointLinearApplies(linears, x));
}

TEST(JointQkv, ServedWeightsAreLeftToTheirOwnPath) {
  if (!float8InBuild()) GTEST_SKIP() << "no float8 in this libtorch: fp8_base's served weights cannot be made";
  CrossAttention a = frozenAttention(18);
  const Tensor x = input(19);
  storeLinearsInFloat8(*a);
  EXPECT_FALSE(jointLinearApplies({a->to_q.get(), a->to_k.get(), a->to_v.get()}, x));
  a->setJointQkv(true);
  torch::NoGradGuard noGrad;
  a(x);
  EXPECT_FALSE(joined(a));
}

TEST(JointQkv, TheEnvironmentCanTurnItOff) {
  CrossAttention a = frozenAttention(18);
  ::setenv("SINTER_JOINT_QKV", "0", 1);
  a->setJointQkv(true);
  ::unsetenv("SINTER_JOINT_QKV");
  EXPECT_FALSE(a->jointQkv());
  run(a, input(19));
  EXPECT_FALSE(joined(a));
  a->setJointQkv(true);
  EXPECT_TRUE(a->jointQkv());
}

TEST(JointQkv, TheWeightsStayTheCheckpointKeysAsRowsOfTheJointBuffer) {
  CrossAttention a = frozenAttention(20);
  std::map<std::string, Tensor> before;
  for (const auto& p : a->named_parameters()) before[p.key()] = p.value().clone();
  a->setJointQkv(true);
  torch::NoGradGuard noGrad;
  const Tensor x = input(21);
  a(x);
  ASSERT_TRUE(joined(a));
  const auto params = a->named_parameters();
  for (const auto& [key, value] : before) EXPECT_TRUE(torch::equal(params[key], value)) << key;
  // The keys' tensors are the module's weights, and they share memory with one another in order.
  const int64_t rowBytes = kDim * static_cast<int64_t>(sizeof(float));
  EXPECT_EQ(params["to_q.weight"].data_ptr(), a->to_q->weight.data_ptr());
  EXPECT_EQ(static_cast<char*>(params["to_k.weight"].data_ptr()),
            static_cast<char*>(params["to_q.weight"].data_ptr()) + kHeads * kHeadDim * rowBytes);
  EXPECT_EQ(static_cast<char*>(params["to_v.weight"].data_ptr()),
            static_cast<char*>(params["to_k.weight"].data_ptr()) + kHeads * kHeadDim * rowBytes);
  // Written by key (as a checkpoint load copies into the parameters), the joint pass reads the new values.
  CrossAttention twin = frozenAttention(20);
  torch::manual_seed(22);
  for (const char* key : {"to_q.weight", "to_k.weight", "to_v.weight"}) {
    const Tensor fresh = torch::randn_like(params[key]);
    params[key].copy_(fresh);
    twin->named_parameters()[key].copy_(fresh);
  }
  EXPECT_TRUE(joined(a));
  EXPECT_LE(relativeError(a(x), twin(x)), 1e-5);
}

TEST(JointQkv, AMoveAfterJoiningIsJoinedAgainAndStaysExact) {
  CrossAttention a = frozenAttention(23);
  attachQkvLoras(a);
  a->setJointQkv(true);
  const Tensor x = input(24);
  run(a, x);
  ASSERT_TRUE(joined(a));
  a->to(torch::kFloat64);  // each parameter gets a buffer of its own
  EXPECT_FALSE(joined(a));
  for (Linear& l : qkvOf(a)) {
    l->lora->down = l->lora->down.detach().to(torch::kFloat64).requires_grad_(true);
    l->lora->up = l->lora->up.detach().to(torch::kFloat64).requires_grad_(true);
  }
  const Tensor x64 = x.to(torch::kFloat64);
  a->setJointQkv(false);
  const Pass separate = run(a, x64);
  clearLoraGradients(a);
  a->setJointQkv(true);
  const Pass joint = run(a, x64);
  EXPECT_TRUE(joined(a));
  EXPECT_EQ(a->to_v->weight.scalar_type(), torch::kFloat64);
  expectSame(joint, separate);
}

// The tiny SDXL and SD 1.5 U-Nets through their fused-kernel switch, LoRA on every attention's q/k/v
// (as kohya's networks.lora targets them): the same output and gradients, attn1's weights joined,
// attn2's not. In float64: the random tiny SDXL U-Net's input gradient is ill-conditioned (float32
// and float64 runs of the same projections differ in it by more than 100%), so float32 would test
// the model's rounding rather than the joint form.
TEST(JointQkv, TinyUnetsThroughTheFusedKernelSwitch) {
  for (const SdxlUnetConfig& config : {SdxlUnetConfig::tiny(), SdxlUnetConfig::tinySd15()}) {
    torch::manual_seed(25);
    SdxlUnet unet(config);
    unet->to(torch::kFloat64);
    for (auto& p : unet->parameters()) p.set_requires_grad(false);
    std::vector<CrossAttention> attentions;
    for (const auto& m : unet->modules(/*include_self=*/false))
      if (auto block = std::dynamic_pointer_cast<BasicTransformerBlockImpl>(m)) {
        for (CrossAttention a : {block->attn1, block->attn2}) {
          attachQkvLoras(a, {2, 2, 2});
          attentions.push_back(a);
        }
      }
    ASSERT_FALSE(attentions.empty());
    torch::manual_seed(26);
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    const Tensor x = torch::randn({2, config.inChannels, 16, 8}, f64), t = torch::tensor({10.0, 900.0});
    const Tensor context = torch::randn({2, 7, config.contextDim}, f64);
    const Tensor y = config.admInChannels > 0 ? torch::randn({2, config.admInChannels}, f64) : Tensor();
    const auto pass = [&] {
      const Tensor in = x.clone().requires_grad_(true);
      const Tensor out = unet(in, t, context, y);
      torch::manual_seed(27);
      (out * torch::randn_like(out)).sum().backward();
      Pass p{out.detach(), {in.grad()}};
      for (CrossAttention& a : attentions)
        for (Linear& l : qkvOf(a)) {
          p.grads.push_back(l->lora->down.grad().clone()), p.grads.push_back(l->lora->up.grad().clone());
          l->lora->down.mutable_grad() = Tensor(), l->lora->up.mutable_grad() = Tensor();
        }
      return p;
    };
    unet->setFusedKernels(false);
    const Pass separate = pass();
    unet->setFusedKernels(true);
    const Pass joint = pass();
    expectSame(joint, separate, 1e-10);
    for (size_t i = 0; i < attentions.size(); ++i) EXPECT_EQ(joined(attentions[i]), i % 2 == 0) << "attention " << i;
  }
}
