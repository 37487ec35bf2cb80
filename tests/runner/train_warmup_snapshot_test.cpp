// A capture's warm-up undone without copying what it can rebuild (issue 51, train/capture/
// state_snapshot.h): tensors that are all zero are zeroed again, and where the optimizer's step at
// learning rate 0 leaves the parameters as they are, the warm-up runs at lr 0 and the parameters are
// not copied. After StepExecutor::prepare every bit of the parameters, gradients, optimizer state,
// step count and learning rates is what it was, and training continues exactly as without it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/unet/sdxl_unet.h"
#include "network/lora_max_norm.h"
#include "network/lora_network.h"
#include "train/capture/state_snapshot.h"
#include "train/capture/step_executor.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_update.h"

using namespace sinter;
using namespace sinter::train;

namespace {

// `t`'s bits as integers of its element size, so that -0 and +0 differ and NaNs compare.
torch::Tensor bitsOf(const torch::Tensor& t) {
  switch (t.element_size()) {
    case 1: return t.view(torch::kUInt8);
    case 2: return t.view(torch::kInt16);
    case 4: return t.view(torch::kInt32);
    default: return t.view(torch::kInt64);
  }
}

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& live) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : live) out.push_back(t.detach().clone());
  return out;
}

void expectSameBits(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].scalar_type(), b[i].scalar_type()) << what << " tensor " << i;
    EXPECT_TRUE(torch::equal(bitsOf(a[i].detach()), bitsOf(b[i].detach()))) << what << " tensor " << i;
  }
}

int64_t bytesOf(const std::vector<torch::Tensor>& tensors) {
  int64_t n = 0;
  for (const torch::Tensor& t : tensors) n += static_cast<int64_t>(t.nbytes());
  return n;
}

// A tiny SDXL U-Net trained by the loop's own pieces: every weight (full weights), or a LoRA on the
// frozen U-Net (lora_up starting at zero, as training starts it). The loss draws its noise from the
// run's generator, as a diffusion step does.
struct TinyRun {
  models::SdxlUnet unet{nullptr};
  std::unique_ptr<network::LoraNetwork> lora;
  std::unique_ptr<Optimizer> optimizer;
  LrSchedule schedule{LrScheduleOptions{LrSchedulerType::ConstantWithWarmup, 2, 20}};
  std::unique_ptr<OptimizerUpdate> update;
  std::unique_ptr<network::LoraMaxNorm> maxNorm;
  at::Generator generator = at::detail::createCPUGenerator(7);
  torch::Tensor x, context, y;
  StagedLoss loss = [this] {
    const torch::Tensor noise = torch::randn(x.sizes(), generator);
    return (unet->forward(x + noise, torch::tensor({500}, torch::kLong), context, y) - noise).pow(2).mean();
  };

  TinyRun(bool withLora, const std::string& optimizerType, const std::vector<std::string>& optimizerArgs, double maxNormLimit = 0) {
    torch::manual_seed(3);
    unet = models::SdxlUnet(models::SdxlUnetConfig::tiny());
    const auto& c = unet->config();
    x = torch::randn({1, c.inChannels, 8, 8});
    context = torch::randn({1, 77, c.contextDim});
    y = torch::randn({1, c.admInChannels});
    std::vector<OptimizerGroup> groups;
    if (withLora) {
      for (torch::Tensor& p : unet->parameters()) p.requires_grad_(false);
      network::LoraNetworkOptions options;
      options.dim = 4;
      options.alpha = 2;
      lora = std::make_unique<network::LoraNetwork>(options);
      lora->attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
      for (auto& g : lora->parameterGroups(std::nullopt, std::nullopt, 1e-3)) groups.push_back(OptimizerGroup{g.label, g.lr, g.params});
    } else {
      groups.push_back(OptimizerGroup{"unet", 1e-4, unet->parameters()});
    }
    optimizer = makeOptimizer(parseOptimizerSettings(optimizerType, optimizerArgs), std::move(groups), false);
    update = std::make_unique<OptimizerUpdate>(*optimizer, schedule, 1.0, false, torch::kCPU);
    if (maxNormLimit > 0) {
      maxNorm = std::make_unique<network::LoraMaxNorm>(*lora, maxNormLimit);
      update->setAfterStep([this] { maxNorm->apply(); });
    }
  }

  // Everything a step changes: parameters, gradients, optimizer state, step count, learning rates.
  std::vector<torch::Tensor> state() const { return optimizer->mutableTensors(); }
  int64_t parameterBytes() const { return bytesOf(optimizer->parameters()); }
};

StepExecutorOptions capturing() {
  StepExecutorOptions options;
  options.captureSteps = true;  // on the CPU: the warm-up runs, undone, then the micro-batch eagerly
  return options;
}

const StepShape kShape{1, 8, 8, 77};

// `steps` eager steps of both runs, `adjust` on both, then `warmed` prepares the shape (warm-up and
// undo): every bit of its state is as before, and the next micro-step of both (ending a step where
// `last`) is the same. Returns the snapshot's bytes.
StepExecutor::SnapshotBytes expectPrepareChangesNothing(TinyRun& plain, TinyRun& warmed, int steps, bool last = true,
                                                        const std::function<void(TinyRun&)>& adjust = {}) {
  StepExecutor a(torch::kCPU, *plain.update, StepExecutorOptions{}, {plain.generator});
  StepExecutor b(torch::kCPU, *warmed.update, capturing(), {warmed.generator});
  for (int i = 0; i < steps; ++i) {
    a.runEager(plain.loss, true);
    b.runEager(warmed.loss, true);
  }
  if (adjust) {
    adjust(plain);
    adjust(warmed);
  }
  const std::vector<torch::Tensor> before = clones(warmed.state());
  const torch::Tensor generatorBefore = warmed.generator.get_state();
  EXPECT_TRUE(b.prepare(kShape, last, warmed.loss).has_value());
  expectSameBits(warmed.state(), before, "after prepare");
  EXPECT_TRUE(torch::equal(warmed.generator.get_state(), generatorBefore));
  const StepExecutor::SnapshotBytes bytes = b.lastSnapshotBytes();
  // The same step with and without the warm-up before it.
  const torch::Tensor la = a.runEager(plain.loss, last), lb = b.runEager(warmed.loss, last);
  EXPECT_TRUE(torch::equal(la, lb));
  expectSameBits(warmed.state(), plain.state(), "after the next step");
  return bytes;
}

}  // namespace

// A fresh full-weight run: the moments and gradients are zero (zeroed again, not copied), and
// AdamW's parameters at lr 0 stay as they are: the snapshot copies only the step count and rates.
TEST(WarmupSnapshot, FullWeightsCopyNeitherParametersNorZeroMoments) {
  TinyRun plain(false, "AdamW", {"weight_decay=0.01"}), warmed(false, "AdamW", {"weight_decay=0.01"});
  ASSERT_TRUE(warmed.optimizer->zeroLearningRateKeepsParameters());
  const int64_t everything = bytesOf(warmed.update->warmupUndo(true).copied) + bytesOf(warmed.update->warmupUndo(true).unchanged);
  const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 0);
  EXPECT_EQ(bytes.leftUnchanged, warmed.parameterBytes());
  EXPECT_GE(bytes.zeroed, 2 * warmed.parameterBytes());  // exp_avg and exp_avg_sq (and the step count, 0)
  EXPECT_GT(bytes.copied, 0);                            // the rate
  EXPECT_LT(bytes.copied, everything / 1000);
}

// Resumed-like: nonzero moments are copied and put back exactly; the parameters still are not.
TEST(WarmupSnapshot, FullWeightsWithMomentsRestoresThemExactly) {
  TinyRun plain(false, "AdamW", {}), warmed(false, "AdamW", {});
  const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 2);
  EXPECT_EQ(bytes.leftUnchanged, warmed.parameterBytes());
  EXPECT_GE(bytes.copied, 2 * warmed.parameterBytes());
}

// A fresh LoRA run: lora_up starts at zero, and so do the moments; then a resumed-like one whose
// parameters hold negative zeros, which a step by -0 turns into +0: where they are is kept in a
// mask and they are written again, the tensors still not copied.
TEST(WarmupSnapshot, LoraFreshAndResumedWithNegativeZeros) {
  {
    TinyRun plain(true, "AdamW", {}), warmed(true, "AdamW", {});
    const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 0);
    EXPECT_EQ(bytes.leftUnchanged, warmed.parameterBytes());
    EXPECT_GE(bytes.zeroed, 2 * warmed.parameterBytes());
  }
  // Three steps first: the warm-up schedule's first rate is 0, and lora_down's gradient is zero
  // until lora_up has moved.
  TinyRun plain(true, "AdamW", {}), warmed(true, "AdamW", {});
  const auto negativeZeros = [](TinyRun& run) {
    torch::NoGradGuard noGrad;
    run.optimizer->parameters()[0].fill_(-0.0);
  };
  const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 3, true, negativeZeros);
  EXPECT_EQ(bytes.leftUnchanged, warmed.parameterBytes());
}

// Each optimizer whose step at lr 0 keeps the parameters (weight decay on, resumed-like state,
// 8-bit states where it has them) leaves them bit-unchanged through the warm-up; the others
// copy them and restore them exactly.
TEST(WarmupSnapshot, EachOptimizerKeepsItsParametersOrHasThemCopied) {
  struct Case {
    std::string type;
    std::vector<std::string> args;
    bool keeps;
  };
  const std::vector<Case> cases{
      {"AdamW8bit", {"weight_decay=0.1", "min_8bit_size=256"}, true},
      {"Lion8bit", {"weight_decay=0.1", "min_8bit_size=256"}, true},
      {"SGDNesterov", {"weight_decay=0.1"}, true},
      {"SGDNesterov8bit", {"weight_decay=0.1", "min_8bit_size=256"}, true},
      {"Adafactor", {"relative_step=False", "weight_decay=0.1"}, true},
      {"Adafactor", {}, false},                                       // relative_step: its own rate
      {"Adafactor", {"relative_step=False", "beta1=0.9"}, false},     // the first moment moves them at lr 0
      {"Prodigy", {}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type + (c.args.empty() ? "" : " " + c.args.front()));
    TinyRun plain(true, c.type, c.args), warmed(true, c.type, c.args);
    EXPECT_EQ(warmed.optimizer->zeroLearningRateKeepsParameters(), c.keeps);
    const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 2);
    EXPECT_EQ(bytes.leftUnchanged, c.keeps ? warmed.parameterBytes() : 0);
  }
}

// What else writes the parameters during a step keeps them in the snapshot: scale_weight_norms
// after the optimizer step. A warm-up that runs no optimizer step (a micro-batch that does not end
// the step) leaves them unchanged whatever the optimizer.
TEST(WarmupSnapshot, MaxNormCopiesTheParametersAccumulationDoesNot) {
  {
    TinyRun plain(true, "AdamW", {}, 0.01), warmed(true, "AdamW", {}, 0.01);
    const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 2);
    EXPECT_EQ(bytes.leftUnchanged, 0);
    EXPECT_GE(bytes.copied, warmed.parameterBytes());
  }
  TinyRun plain(true, "Prodigy", {}), warmed(true, "Prodigy", {});
  const StepExecutor::SnapshotBytes bytes = expectPrepareChangesNothing(plain, warmed, 1, /*last=*/false);
  EXPECT_EQ(bytes.leftUnchanged, warmed.parameterBytes());
}

// The snapshot on its own: a tensor of negative zeros has bits set (zero_() would write +0), so it
// is copied; an all-zero one is zeroed again; an unchanged tensor is copied only where it holds a
// non-finite value, and where it holds negative zeros they are written again from a bit mask.
TEST(WarmupSnapshot, ZeroesAreFoundBitwise) {
  torch::Tensor negativeZeros = torch::full({4}, -0.0), zeros = torch::zeros({4}), counts = torch::zeros({3}, torch::kInt64);
  torch::Tensor kept = torch::tensor({1.0f, 2.0f}), keptInf = torch::tensor({1.0f, INFINITY}), keptNegZero = torch::tensor({-0.0f, 2.0f});
  const std::vector<torch::Tensor> before = clones({negativeZeros, zeros, counts, keptInf, keptNegZero, kept});
  StateSnapshot snapshot({negativeZeros, zeros, counts}, {}, {}, 0, {kept, keptInf, keptNegZero});
  EXPECT_EQ(snapshot.bytesZeroed(), 4 * 4 + 3 * 8);
  EXPECT_EQ(snapshot.bytes(), 4 * 4 + 2 * 4);
  EXPECT_EQ(snapshot.bytesLeftUnchanged(), 2 * 4 + 2 * 4);
  EXPECT_EQ(snapshot.bytesSignMasks(), 1);
  for (torch::Tensor* t : {&negativeZeros, &zeros, &counts, &keptInf}) t->fill_(5);
  keptNegZero.sub_(-0.0);  // what a step by -0 does: -0 - -0 is +0
  EXPECT_FALSE(torch::signbit(keptNegZero[0]).item<bool>());
  snapshot.restore();
  expectSameBits({negativeZeros, zeros, counts, keptInf, keptNegZero, kept}, before, "restored");
}

// The masks over tensors of every floating dtype and of sizes that are not a multiple of eight:
// after a step by -0 has turned every negative zero into +0, each one is back, and nothing else moved.
TEST(WarmupSnapshot, NegativeZerosComeBackWhereTheyWere) {
  torch::manual_seed(3);
  for (torch::ScalarType dtype : {torch::kFloat32, torch::kBFloat16, torch::kFloat16, torch::kFloat64}) {
    for (int64_t n : {1, 7, 8, 9, 1000}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " " + std::to_string(n));
      torch::Tensor t = torch::randn({n}).to(dtype);
      const torch::Tensor zeroHere = torch::rand({n}) < 0.3, negative = torch::rand({n}) < 0.5;
      t.masked_fill_(zeroHere, 0.0);
      t.masked_fill_(torch::logical_and(zeroHere, negative), -0.0);
      t = t.view({n, 1}).expand({n, 2}).contiguous();  // a 2-d parameter
      const std::vector<torch::Tensor> before = clones({t});
      StateSnapshot snapshot({}, {}, {}, 0, {t});
      EXPECT_EQ(snapshot.bytes(), 0);
      t.sub_(-0.0);
      EXPECT_FALSE(torch::signbit(t).logical_and(t == 0).any().item<bool>());
      snapshot.restore();
      expectSameBits({t}, before, "restored");
    }
  }
}
