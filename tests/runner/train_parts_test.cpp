// The pieces the training loop is made of, each on its own: the (family, method) table, the shape
// plan and its static buffers, the one-step-late loss read-back and the optimizer update.
#include <gtest/gtest.h>

#include "train/loss_readback.h"
#include "train/optimizer_update.h"
#include "train/shape_plan.h"
#include "train/training_table.h"

using namespace sinter;
using namespace sinter::train;

TEST(TrainingTable, SaysWhatIsBuiltAndWhatIsNot) {
  EXPECT_FALSE(notBuiltReason(Family::SDXL, Tab::LoRA).has_value());
  const std::optional<std::string> flux = notBuiltReason(Family::FLUX, Tab::LoRA);
  ASSERT_TRUE(flux.has_value());
  EXPECT_NE(flux->find("training flux is not in this build yet"), std::string::npos) << *flux;
  EXPECT_NE(flux->find("sdxl lora"), std::string::npos) << *flux;  // and what is
  const std::optional<std::string> dreambooth = notBuiltReason(Family::SDXL, Tab::DreamBooth);
  ASSERT_TRUE(dreambooth.has_value());
  EXPECT_NE(dreambooth->find("dreambooth training of sdxl is not in this build yet"), std::string::npos) << *dreambooth;
}

TEST(ShapePlan, SharesAndBuffersMadeOncePerShape) {
  ShapePlan plan({{1024, 1024, 4, 30}, {832, 1216, 4, 8}, {832, 1216, 2, 2}});
  EXPECT_DOUBLE_EQ(plan.shareOfBatches(0), 0.0);
  EXPECT_DOUBLE_EQ(plan.shareOfBatches(1), 0.75);
  EXPECT_DOUBLE_EQ(plan.shareOfBatches(3), 1.0);
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
