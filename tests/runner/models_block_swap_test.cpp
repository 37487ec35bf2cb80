// fp8_base and blocks_to_swap: Linear weights served from elsewhere than the Linear's own parameter
// (models/weights/served_weight.h, models/layers/block_swap.h). On the CPU the ring's copies are plain copies, so
// the schedule (which block is where, when each is loaded) and the numerics run through the same
// code as on CUDA, where they also overlap on a side stream (tests/gpu/fused_kernels_check.cpp).
#include <gtest/gtest.h>

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/layers/block_swap.h"
#include "models/flux/flux_latents.h"
#include "models/flux/flux_rope.h"
#include "models/flux/flux_transformer.h"
#include "models/layers/conv2d.h"
#include "models/adapters/frozen_linear_lora.h"
#include "models/weights/served_weight.h"
#include "models/layers/linear.h"
#include "models/sd3/sd3_mmdit.h"
#include "models/unet/sdxl_unet.h"

using namespace sinter::models;
using torch::Tensor;

namespace {

// A fixed weight that counts how often the Linear asks for it.
class CountedWeight : public ServedWeight {
 public:
  explicit CountedWeight(Tensor w) : w_(std::move(w)) {}
  Tensor get(torch::ScalarType dtype) override {
    ++calls;
    return w_.to(dtype);
  }
  int calls = 0;

 private:
  Tensor w_;
};

// Tiny widths, more blocks than FluxConfig::tiny so that some can stream: 4 double, 6 single.
FluxConfig swappableConfig() {
  FluxConfig c = FluxConfig::tiny();
  c.depth = 4;
  c.depthSingleBlocks = 6;
  return c;
}

std::vector<std::shared_ptr<LinearImpl>> linearsOf(torch::nn::Module& root) {
  std::vector<std::shared_ptr<LinearImpl>> out;
  for (const auto& m : root.modules(false))
    if (auto l = std::dynamic_pointer_cast<LinearImpl>(m)) out.push_back(l);
  return out;
}

// Two models with the same random weights and the same LoRA adapters (rank 2, nonzero up so that
// the down projections get gradients too) on every Linear of the blocks.
template <typename Model>
void makeTwins(Model& a, Model& b) {
  torch::NoGradGuard noGrad;
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    pa[i].copy_(torch::randn_like(pa[i]) * 0.2 + (pa[i].dim() == 1 ? 1.0 : 0.0));
    pb[i].copy_(pa[i]);
    pa[i].set_requires_grad(false);
    pb[i].set_requires_grad(false);
  }
  auto la = linearsOf(*a), lb = linearsOf(*b);
  for (size_t i = 0; i < la.size(); ++i) {
    auto adapter = std::make_shared<LoraAdapter>();
    adapter->down = (torch::randn({2, la[i]->inFeatures()}) * 0.1).requires_grad_(true);
    adapter->up = (torch::randn({la[i]->outFeatures(), 2}) * 0.1).requires_grad_(true);
    auto copy = std::make_shared<LoraAdapter>(*adapter);
    copy->down = adapter->down.detach().clone().requires_grad_(true);
    copy->up = adapter->up.detach().clone().requires_grad_(true);
    la[i]->lora = adapter;
    lb[i]->lora = copy;
  }
}

std::pair<FluxTransformer, FluxTransformer> twins(const FluxConfig& c) {
  torch::manual_seed(5);
  FluxTransformer a(c), b(c);
  makeTwins(a, b);
  return {a, b};
}

struct StepResult {
  double loss;
  std::vector<Tensor> grads;  // every adapter's down and up, then the image input's
};

// The loss of `out` backpropagated: every adapter's gradients and the input's.
StepResult backward(torch::nn::Module& m, const Tensor& out, const Tensor& input) {
  const Tensor loss = out.pow(2).mean();
  for (const auto& l : linearsOf(m)) l->lora->down.mutable_grad() = Tensor(), l->lora->up.mutable_grad() = Tensor();
  loss.backward();
  StepResult r{loss.item<double>(), {}};
  for (const auto& l : linearsOf(m)) r.grads.push_back(l->lora->down.grad()), r.grads.push_back(l->lora->up.grad());
  r.grads.push_back(input.grad());
  return r;
}

StepResult step(FluxTransformer& m, int64_t seed) {
  torch::manual_seed(seed);
  const FluxConfig& c = m->config();
  const Tensor img = packFluxLatents(torch::randn({1, 16, 4, 6})).requires_grad_(true);
  const Tensor out = m(img, fluxImageIds(1, 2, 3), torch::randn({1, 5, c.contextInDim}), fluxTextIds(1, 5), torch::tensor({0.7f}),
                       torch::randn({1, c.vecInDim}), torch::tensor({3.5f}));
  return backward(*m, out, img);
}

StepResult step(Sd3Mmdit& m, int64_t seed) {
  torch::manual_seed(seed);
  const Sd3MmditConfig& c = m->config();
  const Tensor x = torch::randn({1, 16, 4, 6}).requires_grad_(true);
  const Tensor out = m(x, torch::tensor({700.0f}), torch::randn({1, c.admInChannels}), torch::randn({1, 5, c.contextInFeatures}));
  return backward(*m, out, x);
}

void expectSame(const StepResult& plain, const StepResult& other, const std::string& what) {
  EXPECT_NEAR(plain.loss, other.loss, 1e-6 * std::abs(plain.loss)) << what;  // float32 rounding, as below
  ASSERT_EQ(plain.grads.size(), other.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    ASSERT_TRUE(other.grads[i].defined()) << what << " " << i;
    // Float32 rounding at most (a Linear without an adapter computes dx = dy W in the served
    // Linear's own node instead of linear's), over three optimizer steps. A block loaded wrong
    // differs at the scale of the values.
    const double scale = plain.grads[i].abs().max().item<double>();
    EXPECT_LE((plain.grads[i] - other.grads[i]).abs().max().item<double>(), 1e-5 * (1.0 + scale)) << what << " gradient " << i;
  }
}

}  // namespace

TEST(FrozenLinear, GradientReachesTheInputOnlyAndTheWeightIsFetchedForEachPass) {
  torch::manual_seed(1);
  const Tensor w = torch::randn({5, 3}), bias = torch::randn({5});
  auto weight = std::make_shared<CountedWeight>(w);
  const Tensor x = torch::randn({2, 4, 3}).requires_grad_(true);
  const Tensor y = frozenLinear(x, weight, bias);
  EXPECT_EQ(weight->calls, 1);
  const Tensor dy = torch::randn({2, 4, 5});
  y.backward(dy);
  EXPECT_EQ(weight->calls, 2);  // nothing of the weight kept between the passes: fetched again
  EXPECT_TRUE(torch::allclose(y, torch::nn::functional::linear(x, w, bias), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(x.grad(), torch::matmul(dy, w), 1e-6, 1e-6));

  // Without gradients nothing is recorded.
  torch::NoGradGuard noGrad;
  EXPECT_FALSE(frozenLinear(x, weight, bias).requires_grad());
}

TEST(FrozenLinear, WithAnAdapterAServedWeightIsFetchedForEachPassAndGivesTheResidentResults) {
  torch::manual_seed(2);
  const Tensor w = torch::randn({6, 4}), bias = torch::randn({6});
  auto weight = std::make_shared<CountedWeight>(w);
  const Tensor dy = torch::randn({2, 3, 6});
  struct Run {
    Tensor x, down, up, y;
  };
  auto run = [&](bool served) {
    torch::manual_seed(3);
    Run r{torch::randn({2, 3, 4}).requires_grad_(true), (torch::randn({2, 4}) * 0.3).requires_grad_(true),
          (torch::randn({6, 2}) * 0.3).requires_grad_(true), {}};
    // Served: the module's stored weight is another tensor (float8 or host memory in a real run).
    r.y = served ? frozenLinearWithLora(r.x, torch::zeros({6, 4}), bias, r.down, r.up, 0.5, weight)
                 : frozenLinearWithLora(r.x, w, bias, r.down, r.up, 0.5);
    if (served) EXPECT_EQ(weight->calls, 1);
    r.y.backward(dy);
    if (served) EXPECT_EQ(weight->calls, 2);  // asked for again in backward: nothing of it kept between the passes
    return r;
  };
  const Run resident = run(false), served = run(true);
  EXPECT_TRUE(torch::equal(resident.y, served.y));
  EXPECT_TRUE(torch::equal(resident.x.grad(), served.x.grad()));
  EXPECT_TRUE(torch::equal(resident.down.grad(), served.down.grad()));
  EXPECT_TRUE(torch::equal(resident.up.grad(), served.up.grad()));
}

TEST(BlockSwap, CountsSplitAsSdScriptsSplitsThem) {
  const FluxBlockSwapSplit eight = fluxBlockSwapSplit(FluxConfig::dev(), 8);
  EXPECT_EQ(eight.doubles, 4);
  EXPECT_EQ(eight.singles, 8);
  const FluxBlockSwapSplit most = fluxBlockSwapSplit(FluxConfig::dev(), 35);
  EXPECT_EQ(most.doubles, 17);
  EXPECT_EQ(most.singles, 36);
  try {
    fluxBlockSwapSplit(FluxConfig::dev(), 36);
    FAIL() << "36 blocks accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("blocks_to_swap up to 35"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fluxBlockSwapSplit(FluxConfig::tiny(), 1), std::invalid_argument);  // 2 + 2 blocks: nothing to swap
  EXPECT_EQ(fluxBlockSwapSplit(swappableConfig(), 2).singles, 2);
}

// Streamed blocks compute what the resident ones would, forward and backward, with and without
// gradient checkpointing, over several steps; the ring loads each block as the schedule says.
TEST(BlockSwap, TrainsLikeTheResidentModelAndLoadsOneBlockAhead) {
  for (const bool checkpointing : {false, true}) {
    auto [plain, swapped] = twins(swappableConfig());
    // 2: 1 double and 2 single blocks swapped, so 3 doubles and 4 singles stream through the rings.
    swapped->enableBlockSwap(2, torch::kCPU, torch::kFloat32);
    moveToDevice(*swapped, torch::kCPU);
    EXPECT_EQ(swapped->streamedBlocks(), "double_blocks.1-3, single_blocks.2-5");
    EXPECT_FALSE(swapped->streamsWeights("double_blocks.0"));
    EXPECT_TRUE(swapped->streamsWeights("double_blocks.1"));
    EXPECT_TRUE(swapped->streamsWeights("single_blocks.5"));
    for (const auto& l : linearsOf(*swapped->double_blocks[0])) EXPECT_FALSE(l->served);
    for (const auto& l : linearsOf(*swapped->double_blocks[1])) EXPECT_TRUE(l->served && l->served->streamed());
    // Two blocks' weights on the device at once, whatever the count streamed.
    EXPECT_EQ(swapped->doubleSwap()->ringBytes() * 3, swapped->doubleSwap()->hostBytes() * 2);
    for (FluxTransformer* m : {&plain, &swapped}) {
      (*m)->train();
      (*m)->setGradientCheckpointing(checkpointing, false);
    }
    const std::string what = checkpointing ? "checkpointed" : "plain";
    expectSame(step(plain, 21), step(swapped, 21), what + " step 1");
    // m streamed blocks: m loaded in the first forward pass (one ahead of the compute), m - 2 in
    // its backward pass (the last two are still there); from then on m - 2 each way.
    EXPECT_EQ(swapped->doubleSwap()->loads(), 3 + 1) << what;
    EXPECT_EQ(swapped->singleSwap()->loads(), 4 + 2) << what;
    expectSame(step(plain, 22), step(swapped, 22), what + " step 2");
    expectSame(step(plain, 23), step(swapped, 23), what + " step 3");
    EXPECT_EQ(swapped->doubleSwap()->loads(), 4 + 2 * 2) << what;
    EXPECT_EQ(swapped->singleSwap()->loads(), 6 + 2 * 4) << what;
  }
}

TEST(BlockSwap, RefusesWhatItCannotStream) {
  auto [plain, other] = twins(swappableConfig());
  EXPECT_THROW(plain->enableBlockSwap(9, torch::kCPU, torch::kFloat32), std::invalid_argument);
  std::vector<std::shared_ptr<torch::nn::Module>> blocks{plain->double_blocks[2], plain->double_blocks[3]};
  BlockSwap::install(blocks, 2, torch::kCPU, torch::kFloat32);
  try {
    BlockSwap::install(blocks, 2, torch::kCPU, torch::kFloat32);
    FAIL() << "a streamed Linear installed twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("already served"), std::string::npos) << e.what();
  }
}

// SD 3.5 Medium's joint blocks differ in their Linears (the MMDiT-X blocks' second attention, the
// last block's context side without its attention output and MLP): streamed through one ring, each
// computes what the resident block does, forward and backward, checkpointed or not.
TEST(BlockSwap, Sd3BlocksThatDifferInTheirLinearsStreamThroughOneRing) {
  Sd3MmditConfig c = Sd3MmditConfig::tiny();
  c.depth = 4;
  c.xBlockSelfAttnLayers = {0, 1};
  try {
    checkSd3BlocksToSwap(c, 3);
    FAIL() << "3 of 4 blocks accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("blocks_to_swap up to 2"), std::string::npos) << e.what();
  }
  for (const bool checkpointing : {false, true}) {
    torch::manual_seed(5);
    Sd3Mmdit plain(c), swapped(c);
    makeTwins(plain, swapped);
    swapped->enableBlockSwap(2, torch::kCPU, torch::kFloat32);  // all four stream
    EXPECT_EQ(swapped->streamedBlocks(), "joint_blocks.0-3");
    int64_t largest = 0;
    for (int64_t i = 0; i < c.depth; ++i) {
      int64_t elements = 0;
      for (const auto& l : linearsOf(*swapped->joint_blocks[static_cast<size_t>(i)])) {
        EXPECT_TRUE(l->served && l->served->streamed());
        elements += l->weight.numel();
      }
      largest = std::max(largest, elements);
    }
    // Two slots, each the largest block (block 0: attn2), its Linears 256-byte aligned.
    EXPECT_GE(swapped->blockSwap()->ringBytes(), 2 * largest * 4);
    EXPECT_LT(swapped->blockSwap()->ringBytes(), 2 * (largest * 4 + 256 * 24));
    for (Sd3Mmdit* m : {&plain, &swapped}) {
      (*m)->train();
      (*m)->setGradientCheckpointing(checkpointing, false);
    }
    const std::string what = checkpointing ? "checkpointed" : "plain";
    expectSame(step(plain, 31), step(swapped, 31), what + " step 1");
    expectSame(step(plain, 32), step(swapped, 32), what + " step 2");
    EXPECT_EQ(swapped->blockSwap()->loads(), 4 + 2 + 2 * 2) << what;
  }
}

// fp8_base: with float8 in this libtorch, each Linear computes with its weight rounded to e4m3;
// without it (Debian's libtorch 1.13), a clear error naming the option and the libtorch.
TEST(Float8Base, StoresLinearWeightsInFloat8OrSaysWhyNot) {
  auto [plain, fp8] = twins(FluxConfig::tiny());
  if (!float8InBuild()) {
    try {
      storeLinearsInFloat8(*fp8);
      FAIL() << "float8 claimed by a libtorch without it";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("fp8_base"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(TORCH_VERSION), std::string::npos) << e.what();
    }
    return;
  }
  const int count = storeLinearsInFloat8(*fp8);
  EXPECT_EQ(count, static_cast<int>(linearsOf(*fp8).size()));
  {
    torch::NoGradGuard noGrad;  // the reference: the same weights rounded through e4m3
    for (const auto& l : linearsOf(*plain)) l->weight.copy_(l->weight.to(float8Dtype()).to(torch::kFloat32));
  }
  for (const auto& l : linearsOf(*fp8)) EXPECT_EQ(l->weight.scalar_type(), float8Dtype());
  expectSame(step(plain, 31), step(fp8, 31), "fp8");
}

// SDXL's fp8_base serves the U-Net's Conv2d kernels as it serves Linear weights: the convolution
// with a served kernel is the convolution (output and input gradient, float64 so the check is of
// the formula, with strides that drop a row and kernels of 1 and 3), an adapter on it trains the
// same, and the kernel is asked for once in the forward pass and once more in the backward pass
// (none kept between them).
TEST(ServedConv2d, IsTheConvolutionAndFetchesTheKernelInEachPass) {
  struct Case {
    int64_t kernel, stride, padding, size;
  };
  for (const Case c : {Case{3, 1, 1, 9}, Case{3, 2, 1, 9}, Case{3, 2, 1, 8}, Case{1, 1, 0, 7}}) {
    const std::string what = "kernel " + std::to_string(c.kernel) + " stride " + std::to_string(c.stride) + " size " + std::to_string(c.size);
    torch::manual_seed(9);
    Conv2d plain(3, 5, c.kernel, c.stride, c.padding), served(3, 5, c.kernel, c.stride, c.padding);
    plain->to(torch::kFloat64);
    served->to(torch::kFloat64);
    {
      torch::NoGradGuard noGrad;
      served->weight.copy_(plain->weight);
      served->bias.copy_(plain->bias);
    }
    for (Conv2d m : {plain, served})
      for (auto& p : m->parameters()) p.set_requires_grad(false);
    auto counted = std::make_shared<CountedWeight>(plain->weight.detach().clone());
    served->served = counted;
    for (Conv2d m : {plain, served}) {
      auto adapter = std::make_shared<LoraAdapter>();
      torch::manual_seed(10);
      adapter->down = (torch::randn({2, 3, c.kernel, c.kernel}, torch::kFloat64) * 0.1).requires_grad_(true);
      adapter->up = (torch::randn({5, 2, 1, 1}, torch::kFloat64) * 0.1).requires_grad_(true);
      adapter->alpha = 2.0;
      m->lora = adapter;
    }
    const Tensor x = torch::randn({2, 3, c.size, c.size}, torch::kFloat64);
    const Tensor xa = x.clone().requires_grad_(true), xb = x.clone().requires_grad_(true);
    const Tensor ya = plain(xa), yb = served(xb);
    EXPECT_EQ(counted->calls, 1) << what;
    ASSERT_EQ(ya.sizes(), yb.sizes()) << what;
    EXPECT_LT((ya - yb).abs().max().item<double>(), 1e-12) << what;
    const Tensor dy = torch::randn_like(ya);
    ya.backward(dy);
    yb.backward(dy);
    EXPECT_EQ(counted->calls, 2) << what;
    ASSERT_EQ(xa.grad().sizes(), xb.grad().sizes()) << what;
    EXPECT_LT((xa.grad() - xb.grad()).abs().max().item<double>(), 1e-12) << what;
    EXPECT_LT((plain->lora->down.grad() - served->lora->down.grad()).abs().max().item<double>(), 1e-12) << what;
    EXPECT_LT((plain->lora->up.grad() - served->lora->up.grad()).abs().max().item<double>(), 1e-12) << what;
  }
}

// fp8_base on the SDXL U-Net: every Linear and Conv2d weight stored in float8 where this libtorch
// has it, and the U-Net computes with its weights rounded to e4m3 (forward and input gradient);
// without it (Debian's libtorch 1.13), the option and the libtorch are named.
TEST(Float8Base, StoresTheSdxlUnetsLinearAndConvWeightsOrSaysWhyNot) {
  torch::manual_seed(12);
  SdxlUnet plain(SdxlUnetConfig::tiny()), fp8(SdxlUnetConfig::tiny());
  {
    torch::NoGradGuard noGrad;
    auto a = plain->parameters(), b = fp8->parameters();
    for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
    for (auto& p : a) p.set_requires_grad(false);
    for (auto& p : b) p.set_requires_grad(false);
  }
  if (!float8InBuild()) {
    for (const auto& store : {storeLinearsInFloat8, storeConvolutionsInFloat8}) {
      try {
        store(*fp8);
        FAIL() << "float8 claimed by a libtorch without it";
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("fp8_base"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(TORCH_VERSION), std::string::npos) << e.what();
      }
    }
    return;
  }
  int linears = 0, convs = 0;
  {
    torch::NoGradGuard noGrad;  // the reference: the same weights rounded through e4m3
    for (const auto& m : plain->modules(false)) {
      if (auto l = std::dynamic_pointer_cast<LinearImpl>(m)) {
        l->weight.copy_(l->weight.to(float8Dtype()).to(torch::kFloat32));
        ++linears;
      }
      if (auto c = std::dynamic_pointer_cast<Conv2dImpl>(m)) {
        c->weight.copy_(c->weight.to(float8Dtype()).to(torch::kFloat32));
        ++convs;
      }
    }
  }
  EXPECT_EQ(storeLinearsInFloat8(*fp8), linears);
  EXPECT_EQ(storeConvolutionsInFloat8(*fp8), convs);
  for (const auto& m : fp8->modules(false))
    if (auto c = std::dynamic_pointer_cast<Conv2dImpl>(m)) EXPECT_EQ(c->weight.scalar_type(), float8Dtype());
  const SdxlUnetConfig& config = plain->config();
  torch::manual_seed(13);
  const Tensor x = torch::randn({1, config.inChannels, 16, 16}), t = torch::full({1}, 400, torch::kLong);
  const Tensor context = torch::randn({1, 8, config.contextDim}), y = torch::randn({1, config.admInChannels});
  const Tensor xa = x.clone().requires_grad_(true), xb = x.clone().requires_grad_(true);
  const Tensor outA = plain(xa, t, context, y), outB = fp8(xb, t, context, y);
  outA.pow(2).mean().backward();
  outB.pow(2).mean().backward();
  // float32 through different kernels for the input gradient (conv_transpose2d against conv2d's
  // backward): within float32 rounding over the network's depth.
  EXPECT_LT(((outA - outB).norm() / outA.norm()).item<double>(), 1e-5);
  EXPECT_LT(((xa.grad() - xb.grad()).norm() / xa.grad().norm()).item<double>(), 1e-4);
}
