// The DDPM schedule numbers, device sampling, and the loss weighting sd-scripts applies.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "train/objectives/diffusion_loss.h"
#include "train/objectives/noise_schedule.h"

using namespace sinter::train;

TEST(NoiseSchedule, ScaledLinearAlphasCumprodMatchesSdxl) {
  DdpmNoiseSchedule s;
  ASSERT_EQ(s.alphasCumprod().size(0), 1000);
  // Known SD/SDXL values: alpha_bar_0 = 1 - 0.00085, alpha_bar_999 ~ 0.0046800.
  EXPECT_NEAR(s.alphasCumprod()[0].item<double>(), 0.99915, 1e-7);
  EXPECT_NEAR(s.alphasCumprod()[999].item<double>(), 0.00468, 2e-5);
  EXPECT_NEAR(s.betas()[999].item<double>(), 0.012, 1e-7);
  // Independent double-precision recomputation.
  double ac = 1.0;
  const double a = std::sqrt(0.00085), b = std::sqrt(0.012);
  for (int i = 0; i < 1000; ++i) {
    const double beta = std::pow(a + (b - a) * i / 999.0, 2);
    ac *= 1.0 - beta;
    if (i == 499) EXPECT_NEAR(s.alphasCumprod()[i].item<double>(), ac, 1e-5);
  }
  EXPECT_NEAR(s.alphasCumprod()[999].item<double>(), ac, 1e-6);
  EXPECT_NEAR(s.snr()[999].item<double>(), ac / (1 - ac), 1e-6);
  DdpmNoiseSchedule zero(NoiseScheduleOptions{1000, 0.00085, 0.012, true});
  EXPECT_NEAR(zero.alphasCumprod()[999].item<double>(), 0.0, 1e-7);
  EXPECT_NEAR(zero.alphasCumprod()[0].item<double>(), 0.99915, 1e-5);
}

TEST(NoiseSchedule, AddNoiseAndVelocity) {
  DdpmNoiseSchedule s;
  const torch::Tensor x = torch::randn({2, 4, 3, 3});
  const torch::Tensor n = torch::randn({2, 4, 3, 3});
  const torch::Tensor t = torch::tensor({10, 900}, torch::kLong);
  const torch::Tensor noisy = s.addNoise(x, n, t);
  const double a1 = s.alphasCumprod()[900].item<double>();
  EXPECT_TRUE(torch::allclose(noisy[1], std::sqrt(a1) * x[1] + std::sqrt(1 - a1) * n[1], 1e-5, 1e-5));
  const torch::Tensor v = s.velocity(x, n, t);
  const double a0 = s.alphasCumprod()[10].item<double>();
  EXPECT_TRUE(torch::allclose(v[0], std::sqrt(a0) * n[0] - std::sqrt(1 - a0) * x[0], 1e-5, 1e-5));
}

TEST(NoiseSchedule, SamplingIsSeededAndRespectsTheTimestepRange) {
  DdpmNoiseSchedule s;
  const torch::Tensor x = torch::randn({64, 4, 2, 2});
  NoiseSamplingOptions o;
  o.minTimestep = 100;
  o.maxTimestep = 200;
  o.noiseOffset = 0.1;
  auto g1 = at::detail::createCPUGenerator(42);
  auto g2 = at::detail::createCPUGenerator(42);
  const NoisedBatch a = sampleNoisedBatch(s, x, o, g1);
  const NoisedBatch b = sampleNoisedBatch(s, x, o, g2);
  EXPECT_TRUE(torch::equal(a.noise, b.noise));
  EXPECT_TRUE(torch::equal(a.timesteps, b.timesteps));
  EXPECT_GE(a.timesteps.min().item<int64_t>(), 100);
  EXPECT_LT(a.timesteps.max().item<int64_t>(), 200);
  EXPECT_TRUE(torch::allclose(a.noisyLatents, s.addNoise(x, a.noise, a.timesteps)));
  o.minTimestep = 500;
  o.maxTimestep = 500;
  EXPECT_EQ(sampleNoisedBatch(s, x, o, g1).timesteps.min().item<int64_t>(), 500);
}

TEST(DiffusionLoss, MinSnrWeightsAsSdScripts) {
  DdpmNoiseSchedule s;
  const torch::Tensor t = torch::tensor({0, 500, 999}, torch::kLong);
  const torch::Tensor eps = minSnrWeight(t, s, 5.0, false);
  const torch::Tensor v = minSnrWeight(t, s, 5.0, true);
  for (int i = 0; i < 3; ++i) {
    const double snr = s.snr()[t[i].item<int64_t>()].item<double>();
    EXPECT_NEAR(eps[i].item<double>(), std::min(snr, 5.0) / snr, 1e-6);
    EXPECT_NEAR(v[i].item<double>(), std::min(snr, 5.0) / (snr + 1), 1e-6);
  }
  EXPECT_NEAR(eps[2].item<double>(), 1.0, 1e-6);  // low SNR: unweighted
}

TEST(DiffusionLoss, LossMatchesAPlainComputation) {
  DdpmNoiseSchedule s;
  const torch::Tensor pred = torch::randn({2, 4, 3, 3});
  const torch::Tensor target = torch::randn({2, 4, 3, 3});
  const torch::Tensor t = torch::tensor({20, 700}, torch::kLong);
  const torch::Tensor w = torch::tensor({1.0f, 0.5f});
  DiffusionLossOptions o;
  o.minSnrGamma = 5.0;
  const torch::Tensor loss = diffusionLoss(pred, target, t, w, s, o);
  double expected = 0.0;
  for (int b = 0; b < 2; ++b) {
    const double mse = (pred[b] - target[b]).pow(2).mean().item<double>();
    const double snr = s.snr()[t[b].item<int64_t>()].item<double>();
    expected += mse * w[b].item<double>() * std::min(snr, 5.0) / snr;
  }
  EXPECT_NEAR(loss.item<double>(), expected / 2, 1e-5);

  o = DiffusionLossOptions{};
  o.lossType = LossType::Huber;
  o.huberSchedule = HuberSchedule::Constant;
  o.huberC = 0.5;
  const torch::Tensor d = pred - target;
  const torch::Tensor huber = (2 * 0.5 * (torch::sqrt(d.pow(2) + 0.25) - 0.5)).mean();
  EXPECT_NEAR(diffusionLoss(pred, target, t, {}, s, o).item<double>(), huber.item<double>(), 1e-5);
  o.lossType = LossType::L1;
  EXPECT_NEAR(diffusionLoss(pred, target, t, {}, s, o).item<double>(), d.abs().mean().item<double>(), 1e-6);
  EXPECT_THROW(parseLossType("l3"), std::invalid_argument);
}
