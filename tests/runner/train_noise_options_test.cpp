// sd-scripts' noise and loss options against float64 references written from its formulas
// (custom_train_functions.py, train_util.get_noise_noisy_latents_and_timesteps,
// flux_train_utils.get_noisy_model_input_and_timesteps): the random numbers are replayed from a
// copy of the generator in the order the implementation draws them, the arithmetic is redone in
// float64.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "train/objectives/diffusion_loss.h"
#include "train/objectives/flow_matching.h"
#include "train/objectives/micro_batch_draws.h"
#include "train/objectives/noise_schedule.h"

using namespace sinter::train;

namespace {

at::Generator generatorAt(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

torch::Tensor f64(const torch::Tensor& t) { return t.to(torch::kFloat64); }

// Largest difference relative to the reference's largest magnitude.
double relativeError(const torch::Tensor& got, const torch::Tensor& want) {
  return (f64(got) - want).abs().max().item<double>() / std::max(1e-30, want.abs().max().item<double>());
}

}  // namespace

TEST(NoiseOptions, AdaptiveNoiseScaleAndRandomStrengthFollowApplyNoiseOffset) {
  const DdpmNoiseSchedule schedule;
  const torch::Tensor latents = torch::randn({3, 4, 6, 5}, generatorAt(1)) + 0.3;
  NoiseSamplingOptions o;
  o.noiseOffset = 0.05;
  o.noiseOffsetRandomStrength = true;
  o.adaptiveNoiseScale = 0.01;
  at::Generator g = generatorAt(7);
  at::Generator replay = generatorAt(7);
  const NoisedBatch got = sampleNoisedBatch(schedule, latents, o, g);

  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const torch::Tensor noise = f64(torch::randn(latents.sizes(), replay, f32));
  const double strength = torch::rand({1}, replay, f32).item<double>() * 0.05;  // noise_offset_random_strength
  // apply_noise_offset: offset + adaptive * |mean over H, W|, clamped at 0, times a per-channel normal.
  const torch::Tensor offset = torch::clamp_min(strength + 0.01 * f64(latents).mean({2, 3}, true).abs(), 0.0);
  const torch::Tensor shift = f64(torch::randn({3, 4, 1, 1}, replay, f32));
  const torch::Tensor want = noise + offset * shift;
  EXPECT_LT(relativeError(got.noise, want), 1e-6);
  // Without the random strength, the full offset (and the adaptive part) applies.
  o.noiseOffsetRandomStrength = false;
  at::Generator g2 = generatorAt(9), replay2 = generatorAt(9);
  const NoisedBatch fixed = sampleNoisedBatch(schedule, latents, o, g2);
  const torch::Tensor n2 = f64(torch::randn(latents.sizes(), replay2, f32));
  const torch::Tensor s2 = f64(torch::randn({3, 4, 1, 1}, replay2, f32));
  EXPECT_LT(relativeError(fixed.noise, n2 + (0.05 + 0.01 * f64(latents).mean({2, 3}, true).abs()) * s2), 1e-6);
}

TEST(NoiseOptions, IpNoiseGammaRandomStrengthPerturbsOnlyTheInput) {
  const DdpmNoiseSchedule schedule;
  const torch::Tensor latents = torch::randn({2, 4, 4, 4}, generatorAt(2));
  NoiseSamplingOptions o;
  o.ipNoiseGamma = 0.1;
  o.ipNoiseGammaRandomStrength = true;
  at::Generator g = generatorAt(11), replay = generatorAt(11);
  const NoisedBatch got = sampleNoisedBatch(schedule, latents, o, g);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const torch::Tensor noise = f64(torch::randn(latents.sizes(), replay, f32));
  const torch::Tensor t = torch::randint(0, 1000, {2}, replay, torch::TensorOptions().dtype(torch::kLong));
  const double gamma = torch::rand({1}, replay, f32).item<double>() * 0.1;
  const torch::Tensor xi = f64(torch::randn(latents.sizes(), replay, f32));
  EXPECT_TRUE(torch::equal(got.timesteps, t));
  EXPECT_LT(relativeError(got.noise, noise), 1e-7);  // the target's noise is unperturbed
  const torch::Tensor ab = f64(schedule.alphasCumprod()).index_select(0, t).view({2, 1, 1, 1});
  const torch::Tensor want = ab.sqrt() * f64(latents) + (1 - ab).sqrt() * (noise + gamma * xi);
  EXPECT_LT(relativeError(got.noisyLatents, want), 1e-6);
}

// pyramid_noise_like: level i drawn at (H / r_i^i, W / r_i^i), r_i in [2, 4), upsampled
// bilinearly (align_corners false), weighted discount^i; stops after a 1-pixel side; divided by
// the standard deviation.
TEST(NoiseOptions, MultiresNoiseIsSdScriptsPyramid) {
  const DdpmNoiseSchedule schedule;
  const torch::Tensor latents = torch::zeros({2, 4, 32, 24});
  NoiseSamplingOptions o;
  o.multiresIterations = 6;
  o.multiresDiscount = 0.3;
  at::Generator g = generatorAt(21), replay = generatorAt(21);
  const NoisedBatch got = sampleNoisedBatch(schedule, latents, o, g);

  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor want = f64(torch::randn(latents.sizes(), replay, f32));
  const torch::Tensor r = torch::rand({6}, replay, torch::TensorOptions().dtype(torch::kFloat64)) * 2 + 2;
  int levels = 0;
  for (int i = 0; i < 6; ++i) {
    const double shrink = std::pow(r[i].item<double>(), i);
    const int64_t h = std::max<int64_t>(1, static_cast<int64_t>(32 / shrink));
    const int64_t w = std::max<int64_t>(1, static_cast<int64_t>(24 / shrink));
    const torch::Tensor level = f64(torch::randn({2, 4, h, w}, replay, f32));
    // Bilinear, half-pixel centres, written out: source coordinate (dst + 0.5) * in / out - 0.5, clamped at 0.
    auto axis = [](int64_t in, int64_t out) {
      std::vector<std::tuple<int64_t, int64_t, double>> taps;
      for (int64_t d = 0; d < out; ++d) {
        double src = std::max(0.0, (d + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5);
        const int64_t lo = std::min<int64_t>(static_cast<int64_t>(src), in - 1);
        const int64_t hi = std::min<int64_t>(lo + 1, in - 1);
        taps.emplace_back(lo, hi, src - static_cast<double>(lo));
      }
      return taps;
    };
    const auto ys = axis(h, 32), xs = axis(w, 24);
    torch::Tensor up = torch::zeros({2, 4, 32, 24}, torch::kFloat64);
    auto L = level.accessor<double, 4>();
    auto U = up.accessor<double, 4>();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 4; ++c)
        for (int64_t y = 0; y < 32; ++y)
          for (int64_t x = 0; x < 24; ++x) {
            const auto [y0, y1, fy] = ys[y];
            const auto [x0, x1, fx] = xs[x];
            U[b][c][y][x] = (1 - fy) * ((1 - fx) * L[b][c][y0][x0] + fx * L[b][c][y0][x1]) +
                            fy * ((1 - fx) * L[b][c][y1][x0] + fx * L[b][c][y1][x1]);
          }
    want = want + up * std::pow(0.3, i);
    ++levels;
    if (h == 1 || w == 1) break;
  }
  want = want / want.std();
  EXPECT_GE(levels, 3);
  EXPECT_LT(relativeError(got.noise, want), 1e-5);
  EXPECT_NEAR(got.noise.std().item<double>(), 1.0, 1e-5);
}

TEST(NoiseOptions, ZeroTerminalSnrRescalesSqrtAlphaBarLinearly) {
  const DdpmNoiseSchedule plain;
  const DdpmNoiseSchedule zero(NoiseScheduleOptions{1000, 0.00085, 0.012, true});
  // Reference: sqrt(alpha_bar) shifted so the last is 0 and scaled so the first is unchanged.
  const torch::Tensor s = f64(plain.alphasCumprod()).sqrt();
  const double s0 = s[0].item<double>(), sT = s[-1].item<double>();
  const torch::Tensor want = ((s - sT) * (s0 / (s0 - sT))).pow(2);
  EXPECT_LT((f64(zero.alphasCumprod()) - want).abs().max().item<double>(), 2e-6);
  EXPECT_EQ(zero.snr()[999].item<double>(), 0.0);
}

// The loss weightings after min-SNR, in sd-scripts' order: scale_v_pred_loss_like_noise_pred,
// v_pred_like_loss, debiased_estimation_loss; SNR capped at 1000 in each.
TEST(NoiseOptions, LossWeightingsFollowCustomTrainFunctions) {
  const DdpmNoiseSchedule schedule;
  const torch::Tensor t = torch::tensor({0, 3, 250, 999}, torch::kLong);
  const torch::Tensor pred = torch::randn({4, 4, 3, 3}, generatorAt(5));
  const torch::Tensor target = torch::randn({4, 4, 3, 3}, generatorAt(6));
  const torch::Tensor perSample = (f64(pred) - f64(target)).pow(2).mean({1, 2, 3});
  const torch::Tensor snr = torch::clamp_max(f64(schedule.snr()).index_select(0, t), 1000.0);
  for (bool vPred : {false, true}) {
    DiffusionLossOptions o;
    o.vPrediction = vPred;
    o.debiasedEstimation = true;
    const torch::Tensor debiased = perSample * (vPred ? 1.0 / (snr + 1) : 1.0 / snr.sqrt());
    EXPECT_NEAR(diffusionLoss(pred, target, t, {}, schedule, o).item<double>(), debiased.mean().item<double>(),
                1e-6 * debiased.mean().item<double>());
    o.debiasedEstimation = false;
    o.scaleVPredLossLikeNoisePred = vPred;
    o.vPredLikeLoss = 0.2;
    torch::Tensor l = perSample;
    if (vPred) l = l * (snr / (snr + 1));
    l = l + l / (snr / (snr + 1)) * 0.2;
    EXPECT_NEAR(diffusionLoss(pred, target, t, {}, schedule, o).item<double>(), l.mean().item<double>(), 1e-6 * l.mean().item<double>());
  }
}

TEST(NoiseOptions, FluxIpNoiseGammaPerturbsTheFlowInput) {
  const torch::Tensor noise = torch::randn({2, 16, 4, 4}, generatorAt(3));
  FlowMatchingOptions o;
  EXPECT_TRUE(flowInputNoise(o, noise, generatorAt(1)).is_same(noise));  // off: the noise itself
  o.ipNoiseGamma = 0.1;
  at::Generator g = generatorAt(4), replay = generatorAt(4);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor got = flowInputNoise(o, noise, g);
  torch::Tensor xi = f64(torch::randn(noise.sizes(), replay, f32));
  EXPECT_LT(relativeError(got, f64(noise) + 0.1 * xi), 1e-7);
  o.ipNoiseGammaRandomStrength = true;
  got = flowInputNoise(o, noise, g);
  xi = f64(torch::randn(noise.sizes(), replay, f32));
  const double gamma = torch::rand({1}, replay, f32).item<double>() * 0.1;
  EXPECT_LT(relativeError(got, f64(noise) + gamma * xi), 1e-6);
}

// A batch joining two micro-batches (batched gradient accumulation) draws as the two micro-batches
// one after another: the same values, bit for bit, with the per-batch draws (noise offset's
// strength, multires noise's levels and std, the input perturbation's strength) per micro-batch.
TEST(NoiseOptions, JoinedMicroBatchesDrawAsTheirOwnPasses) {
  const DdpmNoiseSchedule schedule;
  const torch::Tensor latents = torch::randn({4, 4, 16, 16}, generatorAt(2));
  NoiseSamplingOptions o;
  o.noiseOffset = 0.05;
  o.noiseOffsetRandomStrength = true;
  o.multiresIterations = 3;
  o.ipNoiseGamma = 0.1;
  o.ipNoiseGammaRandomStrength = true;
  at::Generator joined = generatorAt(9), apart = generatorAt(9);
  const std::vector<torch::Tensor> got = drawPerMicroBatch(2, {latents}, [&](const std::vector<torch::Tensor>& in) {
    const NoisedBatch n = sampleNoisedBatch(schedule, in[0], o, joined);
    return std::vector<torch::Tensor>{n.noise, n.noisyLatents, n.timesteps};
  });
  const NoisedBatch first = sampleNoisedBatch(schedule, latents.narrow(0, 0, 2), o, apart);
  const NoisedBatch second = sampleNoisedBatch(schedule, latents.narrow(0, 2, 2), o, apart);
  EXPECT_TRUE(torch::equal(got[0], torch::cat({first.noise, second.noise})));
  EXPECT_TRUE(torch::equal(got[1], torch::cat({first.noisyLatents, second.noisyLatents})));
  EXPECT_TRUE(torch::equal(got[2], torch::cat({first.timesteps, second.timesteps})));
  // One draw over the whole batch would not be the same (the test can tell).
  at::Generator whole = generatorAt(9);
  EXPECT_FALSE(torch::equal(got[0], sampleNoisedBatch(schedule, latents, o, whole).noise));
  // Micro-batches that do not divide the batch are refused.
  EXPECT_THROW(drawPerMicroBatch(3, {latents}, [](const std::vector<torch::Tensor>& in) { return in; }), std::invalid_argument);
}
