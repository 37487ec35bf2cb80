// save_state / resume folders, generator states, precision plans and fp16 loss scaling.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "train/base/mixed_precision.h"
#include "train/base/train_state.h"
#include "train/optim/adamw.h"

namespace fs = std::filesystem;
using namespace sinter::train;

namespace {
fs::path tempDir() {
  fs::path dir = fs::temp_directory_path() / ("sinter_state_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}
}  // namespace

TEST(TrainState, FolderNamesAsSdScripts) {
  EXPECT_EQ(lastStateFolderName("my"), "my-state");
  EXPECT_EQ(stepStateFolderName("my", 100), "my-step00000100-state");
  EXPECT_EQ(epochStateFolderName("my", 3), "my-000003-state");
}

TEST(TrainState, RoundTripRestoresOptimizerRngAndProgress) {
  const fs::path dir = tempDir();
  const std::string folder = (dir / stepStateFolderName("run", 7)).string();
  torch::manual_seed(5);
  torch::Tensor p = torch::randn({4}).set_requires_grad(true);
  AdamW opt({{"unet", 1e-3, {p}}}, {});
  p.mutable_grad() = torch::randn({4});
  opt.step();
  at::Generator gen = at::detail::createCPUGenerator(123);
  torch::randn({3}, gen);  // advance it

  TrainState state;
  state.network = {{"lora_unet_x.lora_down.weight", p.detach().clone()}};
  state.optimizer = opt.stateTensors();
  state.rng = {{"device", generatorState(gen)}};
  state.progress = {{"global_step", 7}, {"epoch", 1}, {"data", {{"order", {3, 1, 2}}, {"position", 2}}}};
  saveTrainState(folder, state);
  EXPECT_FALSE(fs::exists(folder + ".tmp-" + std::to_string(::getpid())));
  // Saving again over it replaces it in place.
  saveTrainState(folder, state);

  const torch::Tensor expectedNext = torch::randn({3}, gen);
  const TrainState loaded = loadTrainState(folder);
  EXPECT_EQ(loaded.progress["global_step"], 7);
  EXPECT_EQ(loaded.progress["data"]["order"][0], 3);
  EXPECT_TRUE(torch::equal(requireTensor(loaded.network, "lora_unet_x.lora_down.weight", "network"), p.detach()));
  at::Generator restored = at::detail::createCPUGenerator(0);
  setGeneratorState(restored, requireTensor(loaded.rng, "device", "rng"));
  EXPECT_TRUE(torch::equal(torch::randn({3}, restored), expectedNext));
  AdamW again({{"unet", 1e-3, {p.detach().clone().set_requires_grad(true)}}}, {});
  again.loadStateTensors(std::map<std::string, torch::Tensor>(loaded.optimizer.begin(), loaded.optimizer.end()));
  EXPECT_EQ(again.stepCount().item<float>(), 1.0f);
  EXPECT_THROW(requireTensor(loaded.rng, "cpu", "rng"), TrainStateError);
  fs::remove_all(dir);
}

TEST(TrainState, MissingOrCorruptStatesAreClearErrors) {
  const fs::path dir = tempDir();
  EXPECT_THROW(loadTrainState((dir / "nothing-state").string()), TrainStateError);
  const fs::path folder = dir / "bad-state";
  TrainState state;
  state.network = {{"a", torch::zeros({1})}};
  state.optimizer = {{"step", torch::zeros({})}};
  state.rng = {{"cpu", torch::zeros({1}, torch::kUInt8)}};
  saveTrainState(folder.string(), state);
  std::ofstream(folder / "train_state.json") << "{not json";
  try {
    loadTrainState(folder.string());
    FAIL();
  } catch (const TrainStateError& e) {
    EXPECT_NE(std::string(e.what()).find("train_state.json"), std::string::npos);
  }
  saveTrainState(folder.string(), state);
  std::ofstream(folder / "optimizer.safetensors", std::ios::trunc) << "junk";
  EXPECT_THROW(loadTrainState(folder.string()), TrainStateError);
  fs::remove(folder / "rng.safetensors");
  EXPECT_THROW(loadTrainState(folder.string()), TrainStateError);
  fs::remove_all(dir);
}

TEST(MixedPrecision, PlansFollowSdScripts) {
  PrecisionPlan bf16 = planPrecision(MixedPrecision::Bf16, false, false);
  EXPECT_EQ(bf16.weightDtype, torch::kBFloat16);
  EXPECT_EQ(bf16.loraDtype, torch::kFloat32);
  EXPECT_FALSE(bf16.lossScaling);
  PrecisionPlan full = planPrecision(MixedPrecision::Bf16, false, true);
  EXPECT_EQ(full.loraDtype, torch::kBFloat16);
  EXPECT_TRUE(planPrecision(MixedPrecision::Fp16, false, false).lossScaling);
  EXPECT_THROW(planPrecision(MixedPrecision::No, false, true), std::invalid_argument);
  EXPECT_THROW(parseMixedPrecision("fp8"), std::invalid_argument);
  // Full-weight runs: float32 masters under mixed precision unless full_bf16/full_fp16, as sdxl_train.py.
  EXPECT_FALSE(bf16.float32Masters);
  const PrecisionPlan masters = planPrecision(MixedPrecision::Bf16, false, false, /*fullWeights=*/true);
  EXPECT_TRUE(masters.float32Masters);
  EXPECT_EQ(masters.trainableModelDtype(), torch::kFloat32);
  EXPECT_EQ(masters.weightDtype, torch::kBFloat16);
  EXPECT_FALSE(planPrecision(MixedPrecision::Bf16, false, true, true).float32Masters);
  EXPECT_FALSE(planPrecision(MixedPrecision::No, false, false, true).float32Masters);
  torch::nn::Linear lin(3, 2);
  castFrozen(*lin, torch::kBFloat16);
  EXPECT_EQ(lin->weight.scalar_type(), torch::kBFloat16);
  EXPECT_FALSE(lin->weight.requires_grad());
}

TEST(MixedPrecision, LossScalerUnscalesAndSkipsOverflowOnTheDevice) {
  LossScaler scaler(torch::kCPU, 1024.0);
  torch::Tensor p = torch::ones({2}).set_requires_grad(true);
  AdamW opt({{"unet", 0.1, {p}}}, {});
  scaler.scale((p * 3).sum()).backward();
  torch::Tensor found = scaler.unscale({p});
  EXPECT_EQ(found.item<float>(), 0.0f);
  EXPECT_TRUE(torch::allclose(p.grad(), torch::full({2}, 3.0f)));
  opt.step(found);
  scaler.update(found);
  EXPECT_EQ(opt.stepCount().item<float>(), 1.0f);
  EXPECT_EQ(scaler.currentScale().item<float>(), 1024.0f);
  const torch::Tensor before = p.detach().clone();
  p.mutable_grad() = torch::tensor({std::numeric_limits<float>::infinity(), 1.0f});
  found = scaler.unscale({p});
  EXPECT_EQ(found.item<float>(), 1.0f);
  opt.step(found);
  scaler.update(found);
  EXPECT_TRUE(torch::equal(p.detach(), before));  // skipped
  EXPECT_EQ(opt.stepCount().item<float>(), 1.0f);
  EXPECT_EQ(scaler.currentScale().item<float>(), 512.0f);
}
