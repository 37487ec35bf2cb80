// The EMA of the trained weights (optim/weight_ema.h), without a run: its averages against a float64
// computation of the decay rule over the same weights, beside the weights and in host memory, with
// and without the warm-up, for weights of the EMA's dtype and of another; the exchange of values
// that sample images and EMA files use, undone exactly; the state and its refusals; the EMA file's
// name. tests/runner/train_ema_run_test.cpp runs it through the real runner.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/config.h"
#include "train/base/run_errors.h"
#include "train/loop/run_ema.h"
#include "train/optim/weight_ema.h"

using sinter::train::EmaOptions;
using sinter::train::NamedTensors;
using sinter::train::WeightEma;

namespace {

// Trained weights of two dtypes: float32 as masters are, bfloat16 as full_bf16's.
std::vector<torch::Tensor> makeWeights() {
  torch::manual_seed(5);
  return {torch::randn({4, 3}).set_requires_grad(true), torch::randn({7}).to(torch::kBFloat16).set_requires_grad(true),
          torch::randn({2, 2, 3}).set_requires_grad(true)};
}

// What an optimizer step does to the weights: an in-place change under no_grad.
void step(std::vector<torch::Tensor>& weights) {
  torch::NoGradGuard noGrad;
  for (torch::Tensor& w : weights) w.add_(torch::randn(w.sizes()).to(w.scalar_type()) * 0.1);
}

std::vector<torch::Tensor> float64Copies(const std::vector<torch::Tensor>& weights) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& w : weights) out.push_back(w.detach().to(torch::kFloat64));
  return out;
}

double maxDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// The rule in float64: from the starting weights, after every `every`-th step
// ema = beta ema + (1 - beta) w, beta = min(decay, (1 + k) / (10 + k)) with the warm-up.
void checkAgainstFloat64(const EmaOptions& options) {
  std::vector<torch::Tensor> weights = makeWeights();
  WeightEma ema(weights, options);
  std::vector<torch::Tensor> reference = float64Copies(weights);
  long long k = 0;
  for (long long s = 1; s <= 12; ++s) {
    step(weights);
    const bool updates = s % options.updateEvery == 0;
    EXPECT_EQ(ema.afterStep(s), updates) << s;
    if (!updates) continue;
    const double beta = options.warmup ? std::min(options.decay, (1.0 + k) / (10.0 + k)) : options.decay;
    ++k;
    for (size_t i = 0; i < weights.size(); ++i)
      reference[i] = beta * reference[i] + (1.0 - beta) * weights[i].detach().to(torch::kFloat64);
  }
  EXPECT_EQ(ema.updates(), k);
  const NamedTensors state = ema.stateTensors();
  ASSERT_EQ(state.size(), weights.size() + 1);
  for (size_t i = 0; i < weights.size(); ++i) {
    EXPECT_EQ(state[i].first, "ema." + std::to_string(i));
    EXPECT_EQ(state[i].second.scalar_type(), torch::kFloat32);
    EXPECT_LE(maxDifference(state[i].second, reference[i]), 1e-5) << i;
  }
  EXPECT_EQ(state.back().first, "ema.updates");
  EXPECT_EQ(state.back().second.item<int64_t>(), k);
}

}  // namespace

TEST(WeightEma, BesideTheWeightsAveragesAsTheFloat64Rule) {
  EmaOptions o;
  o.decay = 0.3;  // the warm-up's (1 + k) / (10 + k) passes it at the fourth update
  o.updateEvery = 2;
  checkAgainstFloat64(o);
  o.warmup = false;
  o.updateEvery = 1;
  checkAgainstFloat64(o);
}

TEST(WeightEma, InHostMemoryAveragesAsTheFloat64Rule) {
  EmaOptions o;
  o.decay = 0.25;
  o.updateEvery = 3;
  o.inHostMemory = true;
  checkAgainstFloat64(o);
  o.warmup = false;
  o.decay = 0.9;
  o.updateEvery = 1;
  checkAgainstFloat64(o);
}

TEST(WeightEma, TheWarmUpIsOneTrainersDecayCountedInUpdates) {
  EmaOptions o;
  o.decay = 0.999;
  EXPECT_DOUBLE_EQ(sinter::train::emaDecayOfUpdate(o, 0), 0.1);
  EXPECT_DOUBLE_EQ(sinter::train::emaDecayOfUpdate(o, 10), 11.0 / 20.0);
  EXPECT_DOUBLE_EQ(sinter::train::emaDecayOfUpdate(o, 100000), 0.999);
  o.warmup = false;
  EXPECT_DOUBLE_EQ(sinter::train::emaDecayOfUpdate(o, 0), 0.999);
}

// Sample images and EMA files put the EMA's values into the weights and the trained ones back: the
// trained weights come back bit for bit, and the EMA is unchanged by the round trip.
TEST(WeightEma, SwappingInAndOutLeavesBothAsTheyWere) {
  for (bool inHost : {false, true}) {
    std::vector<torch::Tensor> weights = makeWeights();
    EmaOptions o;
    o.decay = 0.5;
    o.updateEvery = 1;
    o.inHostMemory = inHost;
    WeightEma ema(weights, o);
    step(weights);
    ema.afterStep(1);
    step(weights);
    std::vector<torch::Tensor> trained;
    for (const torch::Tensor& w : weights) trained.push_back(w.detach().clone());
    const NamedTensors before = ema.stateTensors();
    ema.swapIn();
    EXPECT_TRUE(ema.swappedIn());
    for (size_t i = 0; i < weights.size(); ++i) {
      // The weights hold the EMA, rounded to their own dtype.
      EXPECT_TRUE(weights[i].detach().equal(before[i].second.to(weights[i].scalar_type()))) << i;
      EXPECT_TRUE(weights[i].requires_grad());
    }
    EXPECT_THROW(ema.afterStep(2), std::logic_error);  // nothing trains while the EMA is in the models
    ema.swapOut();
    for (size_t i = 0; i < weights.size(); ++i) EXPECT_TRUE(weights[i].detach().equal(trained[i])) << i;
    const NamedTensors after = ema.stateTensors();
    for (size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(after[i].second.equal(before[i].second)) << after[i].first;
  }
}

TEST(WeightEma, AStateLoadsBackAndAWrongOneIsRefusedByName) {
  std::vector<torch::Tensor> weights = makeWeights();
  EmaOptions o;
  o.decay = 0.5;
  o.updateEvery = 1;
  WeightEma saved(weights, o);
  step(weights);
  saved.afterStep(1);
  const NamedTensors state = saved.stateTensors();

  step(weights);
  WeightEma resumed(weights, o);  // starts from other weights; the state replaces them
  resumed.loadStateTensors(state, "s/ema.safetensors");
  EXPECT_EQ(resumed.updates(), 1);
  const NamedTensors again = resumed.stateTensors();
  for (size_t i = 0; i < state.size(); ++i) EXPECT_TRUE(again[i].second.equal(state[i].second)) << state[i].first;

  auto refused = [&](NamedTensors bad, const std::string& says) {
    try {
      resumed.loadStateTensors(bad, "s/ema.safetensors");
      ADD_FAILURE() << "accepted: " << says;
    } catch (const sinter::train::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("s/ema.safetensors"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  NamedTensors reshaped = state;
  reshaped[0].second = torch::zeros({3, 4});
  refused(reshaped, "ema.0 is [3, 4]");
  NamedTensors fewer(state.begin() + 1, state.end());
  refused(fewer, "averages 2 tensors, this run trains 3");
  NamedTensors negative = state;
  negative.back().second = torch::scalar_tensor(-1, torch::kInt64);
  refused(negative, "ema.updates");
  NamedTensors relabelled = state;
  relabelled.back().second = torch::scalar_tensor(1.5);
  refused(relabelled, "ema.updates");
}

TEST(WeightEma, OptionsAndRefusals) {
  sinter::Config config;
  EXPECT_FALSE(EmaOptions::fromConfig(config).enabled());  // unset: off
  EXPECT_FALSE(sinter::train::emaRefusal(config));
  config.set("ema_decay", 0.999);
  config.set("ema_device", std::string("cpu"));
  const EmaOptions o = EmaOptions::fromConfig(config);
  EXPECT_TRUE(o.enabled());
  EXPECT_TRUE(o.inHostMemory);
  EXPECT_EQ(o.updateEvery, 5);  // OneTrainer's interval by default
  EXPECT_TRUE(o.warmup);
  EXPECT_TRUE(o.forSamples);
  EXPECT_FALSE(sinter::train::emaRefusal(config));
  config.set("ema_decay", 1.0);
  const auto refusal = sinter::train::emaRefusal(config);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->key, "ema_decay");
  EXPECT_NE(refusal->message.find("below 1"), std::string::npos);
}

TEST(WeightEma, TheFileBesideAModelCarriesEmaBeforeItsExtension) {
  EXPECT_EQ(sinter::train::emaFilePath("/out/name-000004.safetensors"), "/out/name-000004-ema.safetensors");
  EXPECT_EQ(sinter::train::emaFilePath("out/t-best-step00000012-loss0.084213.safetensors"),
            "out/t-best-step00000012-loss0.084213-ema.safetensors");
}
