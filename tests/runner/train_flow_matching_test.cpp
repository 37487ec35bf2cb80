// FLUX's flow-matching objective against sd-scripts' formulas (flux_train_utils.py,
// sd3_train_utils.FlowMatchEulerDiscreteScheduler), with values worked out by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "core/config.h"
#include "train/objectives/flow_matching.h"

using namespace sinter;
using namespace sinter::train;

namespace {

at::Generator seeded(uint64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(seed);
  return g;
}

double at1(const torch::Tensor& t, int64_t i) { return t[i].item<double>(); }

}  // namespace

TEST(FlowMatching, ShiftedSigmaTableIsTheSchedulersSigmas) {
  // shift 1: t / 1000 for t = 1000 .. 1.
  const torch::Tensor plain = shiftedSigmaTable(1.0);
  ASSERT_EQ(plain.size(0), 1000);
  EXPECT_NEAR(at1(plain, 0), 1.0, 1e-7);
  EXPECT_NEAR(at1(plain, 999), 0.001, 1e-7);
  // shift 3 at s = 0.5 (t = 500, index 500): 3 * 0.5 / (1 + 2 * 0.5) = 0.75; at s = 1: 1; at
  // s = 0.001: 0.003 / 1.002.
  const torch::Tensor shifted = shiftedSigmaTable(3.0);
  EXPECT_NEAR(at1(shifted, 500), 0.75, 1e-6);
  EXPECT_NEAR(at1(shifted, 0), 1.0, 1e-6);
  EXPECT_NEAR(at1(shifted, 999), 0.003 / 1.002, 1e-7);
  EXPECT_TRUE((shifted.slice(0, 1) < shifted.slice(0, 0, 999)).all().item<bool>());  // descending
}

TEST(FlowMatching, FluxShiftMuFollowsThePackedTokenCount) {
  EXPECT_NEAR(fluxShiftMu(128, 128), 1.15, 1e-12);  // 1024 px: 64 x 64 = 4096 tokens
  EXPECT_NEAR(fluxShiftMu(32, 32), 0.5, 1e-12);     // 256 px: 16 x 16 = 256 tokens
  EXPECT_NEAR(fluxShiftMu(64, 64), 0.5 + 0.65 * (1024.0 - 256.0) / 3840.0, 1e-12);
  // time_shift(mu, 1, t) = e^mu / (e^mu + 1/t - 1): mu = ln 3 at t = 0.5 gives 3 / 4.
  EXPECT_NEAR(timeShift(std::log(3.0), torch::tensor({0.5}))[0].item<double>(), 0.75, 1e-6);
  EXPECT_NEAR(timeShift(0.0, torch::tensor({0.25}))[0].item<double>(), 0.25, 1e-6);
}

TEST(FlowMatching, EachTimestepSamplingDrawsItsFormula) {
  const int64_t b = 64;
  FlowMatchingOptions o;
  o.sigmoidScale = 1.7;
  o.discreteFlowShift = 3.1;
  auto draw = [&](TimestepSampling sampling) {
    o.timestepSampling = sampling;
    at::Generator g = seeded(11);
    return sampleFlowSigmas(o, b, 96, 64, g, torch::kCPU);
  };
  {
    at::Generator g = seeded(11);
    EXPECT_TRUE(torch::equal(draw(TimestepSampling::Uniform), at::rand({b}, g)));
  }
  {
    at::Generator g = seeded(11);
    EXPECT_TRUE(torch::allclose(draw(TimestepSampling::Sigmoid), torch::sigmoid(1.7 * at::randn({b}, g))));
  }
  {
    at::Generator g = seeded(11);
    const torch::Tensor s = torch::sigmoid(1.7 * at::randn({b}, g));
    EXPECT_TRUE(torch::allclose(draw(TimestepSampling::Shift), s * 3.1 / (1 + 2.1 * s)));
  }
  {
    at::Generator g = seeded(11);
    const torch::Tensor s = torch::sigmoid(1.7 * at::randn({b}, g));
    const double mu = fluxShiftMu(96, 64);  // 48 x 32 tokens
    EXPECT_TRUE(torch::allclose(draw(TimestepSampling::FluxShift), std::exp(mu) / (std::exp(mu) + 1 / s - 1)));
  }
  {
    // sigma: u uniform, index floor(u * 1000) into the shifted table.
    at::Generator g = seeded(11);
    const torch::Tensor u = at::rand({b}, g);
    const torch::Tensor expected = shiftedSigmaTable(3.1).index_select(0, (u * 1000).to(torch::kLong));
    EXPECT_TRUE(torch::equal(draw(TimestepSampling::Sigma), expected));
  }
  for (TimestepSampling s : {TimestepSampling::Sigma, TimestepSampling::Uniform, TimestepSampling::Sigmoid,
                             TimestepSampling::Shift, TimestepSampling::FluxShift}) {
    const torch::Tensor sigmas = draw(s);
    EXPECT_TRUE((sigmas >= 0).all().item<bool>() && (sigmas <= 1).all().item<bool>());
  }
}

TEST(FlowMatching, DensityOfTheWeightingSchemes) {
  FlowMatchingOptions o;
  o.logitMean = 0.3;
  o.logitStd = 0.8;
  o.modeScale = 1.29;
  o.weightingScheme = WeightingScheme::LogitNormal;
  at::Generator g1 = seeded(5), g2 = seeded(5);
  EXPECT_TRUE(torch::allclose(sampleTimestepDensity(o, 32, g1, torch::kCPU), torch::sigmoid(at::normal(0.3, 0.8, {32}, g2))));
  o.weightingScheme = WeightingScheme::Mode;
  g1 = seeded(6);
  g2 = seeded(6);
  const torch::Tensor u = at::rand({32}, g2);
  EXPECT_TRUE(torch::allclose(sampleTimestepDensity(o, 32, g1, torch::kCPU),
                              1 - u - 1.29 * (torch::cos(M_PI * u / 2).pow(2) - 1 + u)));
}

TEST(FlowMatching, NoisyLatentsTimestepsAndWeighting) {
  const torch::Tensor x0 = torch::full({2, 1, 1, 2}, 2.0), noise = torch::full({2, 1, 1, 2}, -1.0);
  const torch::Tensor sigmas = torch::tensor({0.25, 1.0});
  const torch::Tensor xt = flowNoisyLatents(x0, noise, sigmas, torch::kFloat32);
  EXPECT_NEAR(xt[0][0][0][0].item<double>(), 0.75 * 2 - 0.25, 1e-7);
  EXPECT_NEAR(xt[1][0][0][1].item<double>(), -1.0, 1e-7);
  // sigma 0.7345: 734.5 in bfloat16 is 736 (steps of 4 there); 736 / 1000 in bfloat16 is
  // 188 * 2^-8 = 0.734375 (steps of 2^-8 in [0.5, 1)).
  EXPECT_EQ(flowModelTimesteps(torch::tensor({0.7345}), torch::kBFloat16)[0].item<float>(), 0.734375f);
  EXPECT_NEAR(flowModelTimesteps(torch::tensor({0.7345}), torch::kFloat32)[0].item<double>(), 0.7345, 1e-6);
  EXPECT_NEAR(flowLossWeighting(WeightingScheme::SigmaSqrt, torch::tensor({0.5}))[0].item<double>(), 4.0, 1e-6);
  EXPECT_NEAR(flowLossWeighting(WeightingScheme::Cosmap, torch::tensor({0.5}))[0].item<double>(), 4.0 / M_PI, 1e-6);
  EXPECT_NEAR(flowLossWeighting(WeightingScheme::LogitNormal, torch::tensor({0.5}))[0].item<double>(), 1.0, 0.0);
}

TEST(FlowMatching, PredictionTypesAndTheLoss) {
  const torch::Tensor out = torch::tensor({1.0, 2.0}).view({2, 1, 1, 1}), xt = torch::tensor({0.5, -0.5}).view({2, 1, 1, 1});
  const torch::Tensor sigmas = torch::tensor({0.5, 0.25});
  FlowMatchingOptions o;
  o.modelPredictionType = ModelPredictionType::Raw;
  EXPECT_TRUE(torch::equal(applyModelPredictionType(o, out, xt, sigmas).prediction, out));
  EXPECT_FALSE(applyModelPredictionType(o, out, xt, sigmas).weighting.defined());
  o.modelPredictionType = ModelPredictionType::Additive;
  EXPECT_TRUE(torch::allclose(applyModelPredictionType(o, out, xt, sigmas).prediction, out + xt));
  o.modelPredictionType = ModelPredictionType::SigmaScaled;
  o.weightingScheme = WeightingScheme::SigmaSqrt;
  const FlowPrediction p = applyModelPredictionType(o, out, xt, sigmas);
  // x_t - sigma * out: 0.5 - 0.5 = 0, -0.5 - 0.5 = -1; weights 1 / sigma^2 = 4, 16.
  EXPECT_NEAR(p.prediction[0].item<double>(), 0.0, 1e-7);
  EXPECT_NEAR(p.prediction[1].item<double>(), -1.0, 1e-7);
  // Against target (1, 1): squared errors 1 and 4, weighted 4 and 64, per-sample loss weights
  // 1 and 0.5: (4 + 32) / 2 = 18.
  const torch::Tensor target = torch::ones({2, 1, 1, 1});
  EXPECT_NEAR(flowMatchingLoss(o, p, target, sigmas, torch::tensor({1.0, 0.5})).item<double>(), 18.0, 1e-5);
  // l1 without weighting: (1 + 2) / 2.
  o.lossType = LossType::L1;
  o.weightingScheme = WeightingScheme::Uniform;
  EXPECT_NEAR(flowMatchingLoss(o, applyModelPredictionType(o, out, xt, sigmas), target, sigmas, {}).item<double>(), 1.5, 1e-6);
  // Huber, constant c = 0.1: 2c (sqrt(d^2 + c^2) - c) per element, d = 1 and 2.
  o.lossType = LossType::Huber;
  o.huberSchedule = HuberSchedule::Constant;
  o.huberC = 0.1;
  const double h1 = 0.2 * (std::sqrt(1.01) - 0.1), h2 = 0.2 * (std::sqrt(4.01) - 0.1);
  EXPECT_NEAR(flowMatchingLoss(o, applyModelPredictionType(o, out, xt, sigmas), target, sigmas, {}).item<double>(),
              (h1 + h2) / 2, 1e-6);
}

TEST(FlowMatching, OptionsFromTheConfigAndTheirErrors) {
  Config config;
  FlowMatchingOptions o = FlowMatchingOptions::fromConfig(config);  // sd-scripts' defaults
  EXPECT_EQ(o.timestepSampling, TimestepSampling::Sigma);
  EXPECT_EQ(o.modelPredictionType, ModelPredictionType::SigmaScaled);
  EXPECT_EQ(o.weightingScheme, WeightingScheme::Uniform);
  EXPECT_DOUBLE_EQ(o.discreteFlowShift, 3.0);
  EXPECT_DOUBLE_EQ(o.modeScale, 1.29);
  config.set("timestep_sampling", std::string("flux_shift"));
  config.set("weighting_scheme", std::string("none"));
  o = FlowMatchingOptions::fromConfig(config);
  EXPECT_EQ(o.timestepSampling, TimestepSampling::FluxShift);
  EXPECT_EQ(o.weightingScheme, WeightingScheme::Uniform);
  config.set("loss_type", std::string("huber"));  // with huber_schedule's default, snr
  try {
    FlowMatchingOptions::fromConfig(config);
    FAIL() << "huber_schedule snr accepted for FLUX";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("huber_schedule 'snr'"), std::string::npos) << e.what();
  }
  config.set("huber_schedule", std::string("exponential"));
  EXPECT_EQ(FlowMatchingOptions::fromConfig(config).huberSchedule, HuberSchedule::Exponential);
  EXPECT_THROW(parseTimestepSampling("logit"), std::invalid_argument);
  EXPECT_THROW(parseModelPredictionType("eps"), std::invalid_argument);
}
