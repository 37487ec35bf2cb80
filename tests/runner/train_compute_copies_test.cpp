// Compute copies of fp32 LoRA weights (train/base/compute_copies.h): the masters move into one buffer
// without changing identity, and a bf16 model trained through the copies trains bit for bit like
// one that casts each weight where it is used.
#include <gtest/gtest.h>

#include "models/unet/sdxl_unet.h"
#include "network/lora_network.h"
#include "train/base/mixed_precision.h"
#include "train/capture/step_executor.h"
#include "train/methods/lora_method.h"
#include "train/optim/adamw.h"
#include "train/optim/optimizer_update.h"

using namespace sinter;
using namespace sinter::train;

TEST(ComputeCopies, MastersMoveIntoOneBufferAndKeepTheirIdentity) {
  torch::Tensor a = torch::linspace(-1, 1, 6).reshape({2, 3}).set_requires_grad(true);
  torch::Tensor b = torch::full({4}, 1.0f / 3.0f).set_requires_grad(true);
  const torch::Tensor heldA = a;  // another holder of the same tensor, as the optimizer is
  const torch::Tensor before = a.detach().clone();
  ComputeCopies copies({a, b}, torch::kBFloat16);
  EXPECT_TRUE(torch::equal(heldA, before));
  EXPECT_EQ(heldA.data_ptr(), a.data_ptr());
  EXPECT_EQ(static_cast<const char*>(b.data_ptr()) - static_cast<const char*>(a.data_ptr()), 6 * 4);  // one buffer
  EXPECT_TRUE(a.requires_grad() && a.is_leaf());
  EXPECT_TRUE(torch::equal(copies.copyOf(1), b.detach().to(torch::kBFloat16)));
  EXPECT_EQ(copies.copyOf(0).scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(copies.copyOf(0).requires_grad());

  {
    torch::NoGradGuard noGrad;
    a.mul_(2);  // the optimizer's in-place update
  }
  EXPECT_FALSE(torch::equal(copies.copyOf(0), a.detach().to(torch::kBFloat16)));
  copies.refresh();
  EXPECT_TRUE(torch::equal(copies.copyOf(0), a.detach().to(torch::kBFloat16)));

  (copies.copyOf(0).sum() * 3).backward();
  copies.collectGradients();
  EXPECT_TRUE(torch::equal(a.grad(), torch::full({2, 3}, 3.0f)));
  EXPECT_EQ(copies.copyOf(0).grad().abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(b.grad().abs().sum().item<float>(), 0.0f);

  EXPECT_THROW(ComputeCopies({a, a}, torch::kBFloat16), std::invalid_argument);
}

// Full-weight training under mixed precision: a model's float32 parameters become the bf16 copies
// it computes with (same tensors), their values float32 masters that gradients reach.
TEST(ComputeCopies, OfParametersTurnsAModelsWeightsIntoCopiesOfFloat32Masters) {
  torch::manual_seed(2);
  torch::nn::Linear linear(4, 3);
  const torch::Tensor weightHandle = linear->weight;  // the model's parameter, as the module holds it
  const torch::Tensor original = linear->weight.detach().clone();
  const std::unique_ptr<ComputeCopies> copies = ComputeCopies::ofParameters(linear->parameters(), torch::kBFloat16);
  EXPECT_EQ(weightHandle.unsafeGetTensorImpl(), linear->weight.unsafeGetTensorImpl());
  EXPECT_EQ(linear->weight.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(copies->masters()[0], original));  // float32, exact
  EXPECT_TRUE(torch::equal(linear->weight.detach(), original.to(torch::kBFloat16)));

  const torch::Tensor x = torch::randn({5, 4}).to(torch::kBFloat16);
  linear->forward(x).to(torch::kFloat32).pow(2).sum().backward();
  const torch::Tensor expected = linear->weight.grad().to(torch::kFloat32);  // backward wrote the flat buffer
  copies->collectGradients();
  EXPECT_TRUE(torch::equal(copies->masters()[0].grad(), expected));
  EXPECT_GT(expected.abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(linear->weight.grad().abs().sum().item<float>(), 0.0f);

  {
    torch::NoGradGuard noGrad;
    copies->masters()[0].add_(1e-4);  // below bf16's step near these values: the master keeps it
  }
  copies->refresh();
  copies->showMasters();
  EXPECT_EQ(linear->weight.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(linear->weight.detach(), original + 1e-4));
  copies->showCopies();
  EXPECT_EQ(linear->weight.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(linear->weight.detach(), (original + 1e-4).to(torch::kBFloat16)));
}

namespace {

// A tiny SDXL U-Net in bf16 with an fp32 LoRA, trained by the loop's own pieces.
struct Bf16LoraTraining {
  models::SdxlUnet unet{nullptr};
  std::unique_ptr<network::LoraNetwork> lora;
  std::unique_ptr<ComputeCopies> copies;
  std::unique_ptr<AdamW> optimizer;
  LrSchedule schedule{LrScheduleOptions{}};
  std::unique_ptr<OptimizerUpdate> update;

  explicit Bf16LoraTraining(bool withCopies) {
    torch::manual_seed(11);
    unet = models::SdxlUnet(models::SdxlUnetConfig::tiny());
    castFrozen(*unet, torch::kBFloat16);
    network::LoraNetworkOptions options;
    options.dim = 4;
    options.alpha = 2;
    lora = std::make_unique<network::LoraNetwork>(options);
    lora->attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
    torch::NoGradGuard noGrad;
    for (torch::Tensor& p : lora->parameters()) p.normal_(0.0, 0.05);  // lora_up starts at zero: give it values
    if (withCopies) copies = loraComputeCopies(*lora, torch::kBFloat16);
    std::vector<OptimizerGroup> groups;
    for (auto& g : lora->parameterGroups(std::nullopt, std::nullopt, 1e-3)) groups.push_back(OptimizerGroup{g.label, g.lr, g.params});
    optimizer = std::make_unique<AdamW>(groups, AdamWHyperparameters{});
    update = std::make_unique<OptimizerUpdate>(*optimizer, schedule, 1.0, false, torch::kCPU, copies.get());
  }

  torch::Tensor loss(int64_t seed) {
    torch::manual_seed(seed);
    const auto& c = unet->config();
    torch::Tensor x = torch::randn({1, c.inChannels, 8, 8}).to(torch::kBFloat16);
    torch::Tensor context = torch::randn({1, 77, c.contextDim}).to(torch::kBFloat16);
    torch::Tensor y = torch::randn({1, c.admInChannels}).to(torch::kBFloat16);
    torch::Tensor out = unet->forward(x, torch::tensor({500}, torch::kLong), context, y);
    return out.to(torch::kFloat32).pow(2).mean();
  }
};

}  // namespace

TEST(ComputeCopies, Bf16LoraTrainsBitForBitLikeCastingEachWeight) {
  Bf16LoraTraining cast(false), copied(true);
  ASSERT_EQ(copied.copies->size(), copied.lora->parameters().size());
  {
    // The forward pass uses the copies: backward reaches them, not the masters.
    Bf16LoraTraining probe(true);
    probe.loss(1).backward();
    for (const torch::Tensor& p : probe.lora->parameters()) ASSERT_EQ(p.grad().abs().sum().item<float>(), 0.0f);
    EXPECT_GT(probe.copies->copyOf(0).grad().abs().sum().item<float>(), 0.0f);
  }
  StepExecutorOptions options;
  options.lossDivisor = 2;
  StepExecutor a(torch::kCPU, *cast.update, options, {}), b(torch::kCPU, *copied.update, options, {});
  for (int i = 0; i < 4; ++i) {  // two steps of two accumulated micro-batches
    const bool last = i % 2 == 1;
    const torch::Tensor la = a.runEager([&] { return cast.loss(100 + i); }, last);
    const torch::Tensor lb = b.runEager([&] { return copied.loss(100 + i); }, last);
    EXPECT_TRUE(torch::equal(la, lb)) << "micro-step " << i;
  }
  const std::vector<torch::Tensor> pa = cast.lora->parameters(), pb = copied.lora->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  const std::vector<torch::Tensor> initial = Bf16LoraTraining(false).lora->parameters();
  bool moved = false;
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(torch::equal(pa[i], pb[i])) << "parameter " << i;
    moved = moved || !torch::equal(pa[i], initial[i]);
  }
  EXPECT_TRUE(moved);  // the steps trained
}
