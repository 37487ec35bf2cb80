// The pieces the training loop is made of, each on its own: the (family, method) table, the shape
// plan and its static buffers, the one-step-late loss read-back, the optimizer update and the step
// executor's warm-up.
#include <gtest/gtest.h>

#include "train/base/shape_plan.h"
#include "train/capture/step_executor.h"
#include "train/loop/loss_readback.h"
#include "train/loop/training_table.h"
#include "train/optim/adamw.h"
#include "train/optim/optimizer_update.h"

using namespace sinter;
using namespace sinter::train;

TEST(TrainingTable, EveryFamilyAndTabIsBuilt) {
  for (Family family : {Family::SDXL, Family::FLUX, Family::SD15, Family::SD2})
    for (Tab tab : {Tab::LoRA, Tab::DreamBooth, Tab::FineTune})
      EXPECT_FALSE(notBuiltReason(family, tab).has_value()) << toString(family) << " " << toString(tab) << ": "
                                                            << notBuiltReason(family, tab).value_or("");
}

TEST(ShapePlan, SharesAndBuffersMadeOncePerShape) {
  const std::vector<data::ShapeSignature> signatures{{1024, 1024, 4, 30}, {832, 1216, 4, 8}, {832, 1216, 2, 2}};
  EXPECT_DOUBLE_EQ(shareOfBatches(signatures, 0), 0.0);
  EXPECT_DOUBLE_EQ(shareOfBatches(signatures, 1), 0.75);
  EXPECT_DOUBLE_EQ(shareOfBatches(signatures, 3), 1.0);
  ShapePlan plan;
  int made = 0;
  auto make = [&] {
    ++made;
    return StaticBuffers{{"latents", torch::zeros({4, 4, 128, 128})}};
  };
  torch::Tensor& first = plan.buffers({4, 128, 128, 77}, make).at("latents");
  const void* memory = first.data_ptr();
  EXPECT_EQ(plan.buffers({4, 128, 128, 77}, make).at("latents").data_ptr(), memory);  // the same memory again
  plan.buffers({2, 104, 152, 77}, make);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(plan.shapesWithBuffers(), 2u);
}

TEST(LossReadback, ValuesComeBackInOrderTheNewestOnlyWhenAsked) {
  LossReadback readback;
  readback.push(1, torch::tensor(0.5f));
  readback.push(2, torch::tensor(0.25f));
  const auto early = readback.take(false);
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].first, 1);
  EXPECT_EQ(early[0].second, 0.5);
  readback.push(3, torch::tensor(0.125f));
  const auto rest = readback.take(true);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].first, 2);
  EXPECT_EQ(rest[1].second, 0.125);
  EXPECT_TRUE(readback.empty());
}

// Gradients accumulate into the optimizer's persistent buffers over micro-batches and are zeroed
// in place by the update: the same memory every step.
TEST(OptimizerUpdate, AccumulatesIntoPersistentGradientsAndZeroesThem) {
  torch::Tensor w = torch::ones({3}).set_requires_grad(true);
  AdamW optimizer({{"unet", 0.1, {w}}}, AdamWHyperparameters{0.9, 0.999, 1e-8, 0.0});
  LrSchedule schedule(LrScheduleOptions{});
  OptimizerUpdate update(optimizer, schedule, 0.0, false, torch::kCPU);
  ASSERT_TRUE(w.grad().defined());
  const void* buffer = w.grad().data_ptr();
  update.backward((w * 2).sum(), 2);
  update.backward((w * 4).sum(), 2);
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 3.0f)));  // (2 + 4) / 2
  EXPECT_EQ(w.grad().data_ptr(), buffer);
  update.apply();
  EXPECT_EQ(w.grad().data_ptr(), buffer);
  EXPECT_EQ(w.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_LT(w[0].item<float>(), 1.0f);  // AdamW moved against the gradient
}

namespace {

// A small real training setup: AdamW with a warm-up lr schedule and loss scaling off, and a
// loss that draws from its own generator (as the noise of a diffusion step does).
struct TinyTraining {
  torch::Tensor w = torch::linspace(-1, 1, 8).set_requires_grad(true);
  AdamW optimizer{{{"unet", 0.05, {w}}}, AdamWHyperparameters{}};
  LrSchedule schedule{LrScheduleOptions{LrSchedulerType::ConstantWithWarmup, 3, 20}};
  OptimizerUpdate update{optimizer, schedule, 1.0, false, torch::kCPU};
  at::Generator generator = at::detail::createCPUGenerator(5);
  StagedLoss loss = [this] { return ((w * torch::randn({8}, generator)).sum() - 1).pow(2); };
};

// Runs micro-batches 0..n-1 through both executors (every second one ends a step) and expects the
// same losses, then the same weights, gradients, step count and generator state.
void expectTheSameTraining(StepExecutor& a, TinyTraining& plain, StepExecutor& b, TinyTraining& warmed, int n,
                           const std::function<StepShape(int)>& shapeOf) {
  for (int i = 0; i < n; ++i) {
    const bool last = i % 2 == 1;  // accumulation over two micro-batches
    const torch::Tensor la = a.run(shapeOf(i), last, plain.loss).loss;
    const torch::Tensor lb = b.run(shapeOf(i), last, warmed.loss).loss;
    EXPECT_TRUE(torch::equal(la, lb)) << "micro-batch " << i;
  }
  EXPECT_TRUE(torch::equal(plain.w, warmed.w));
  EXPECT_TRUE(torch::equal(plain.w.grad(), warmed.w.grad()));
  EXPECT_TRUE(torch::equal(plain.optimizer.stepCount(), warmed.optimizer.stepCount()));
  EXPECT_TRUE(torch::equal(plain.generator.get_state(), warmed.generator.get_state()));
}

}  // namespace

// Warming up a shape runs real steps and then undoes them: parameters, gradients, optimizer state
// and the generator continue as if the warm-up never ran.
TEST(StepExecutor, WarmUpIsUndoneAndTrainingContinuesExactly) {
  TinyTraining plain, warmed;
  StepExecutorOptions options;
  options.cacheLimit = 2;
  StepExecutor a(torch::kCPU, plain.update, options, {plain.generator});
  StepExecutor b(torch::kCPU, warmed.update, options, {warmed.generator});
  const StepShape shape{1, 8, 8, 77};
  ASSERT_TRUE(b.prepare(shape, true, warmed.loss).has_value());
  EXPECT_FALSE(b.captures());  // planned without graphs (a CPU run): every step is eager
  expectTheSameTraining(a, plain, b, warmed, 5, [&](int) { return shape; });
  EXPECT_EQ(b.eagerMicroSteps(), 5);
  EXPECT_EQ(b.replayedMicroSteps(), 0);
}

// A shape first seen mid-step (its micro-batch after another's in the same accumulation) is warmed
// up from there: the gradients accumulated so far are kept through the warm-up, and training
// continues exactly; at a step boundary they are zero and are not copied.
TEST(StepExecutor, WarmUpMidStepKeepsTheAccumulatedGradients) {
  TinyTraining plain, warmed;
  StepExecutorOptions eager, capturing;
  capturing.captureSteps = true;  // on the CPU: warm-up runs, undone, then the micro-batch eagerly
  capturing.cacheLimit = 4;
  StepExecutor a(torch::kCPU, plain.update, eager, {plain.generator});
  StepExecutor b(torch::kCPU, warmed.update, capturing, {warmed.generator});
  const StepShape first{1, 8, 8, 77}, second{1, 8, 12, 77};
  // `second` first comes as a step's second micro-batch.
  expectTheSameTraining(a, plain, b, warmed, 6, [&](int i) { return i % 2 == 1 ? second : first; });
  // Between steps the gradients are no part of what a warm-up copies.
  EXPECT_EQ(warmed.update.warmupUndo(true).copied.size() + 1, warmed.update.warmupUndo(false).copied.size());
}

// The cache limit counts shapes, not graphs: a shape's graphs with and without the update count once.
TEST(StepExecutor, CacheLimitCountsShapes) {
  TinyTraining t;
  StepExecutorOptions options;
  options.cacheLimit = 2;
  options.warmups = 1;
  StepExecutor e(torch::kCPU, t.update, options, {t.generator});
  const StepShape first{1, 8, 8, 77}, second{1, 8, 12, 77}, third{2, 8, 8, 77};
  EXPECT_TRUE(e.prepare(first, true, t.loss).has_value());
  EXPECT_TRUE(e.prepare(first, false, t.loss).has_value());
  EXPECT_TRUE(e.prepare(second, true, t.loss).has_value());
  EXPECT_FALSE(e.prepare(third, true, t.loss).has_value());  // over the limit
  EXPECT_EQ(second.describe(), "batch 1, latents 8x12, 77 tokens");
}
