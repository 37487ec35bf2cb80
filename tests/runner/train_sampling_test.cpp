// The families' sampling loops on tiny models: SDXL's UNet through a diffusion sampler with
// classifier-free guidance, and FLUX's flow-matching Euler steps with BFL's shifted schedule, each
// against the update computed here by hand from the model's own outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "models/flux/flux_latents.h"
#include "train/flux/flux_sampling.h"
#include "train/objectives/flow_matching.h"
#include "train/objectives/noise_schedule.h"
#include "sample/unet_denoise.h"

using namespace sinter;

namespace {

// Every weight random (the models' zero-initialised outputs would make the test trivial).
void randomize(torch::nn::Module& m, double seed) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  torch::NoGradGuard noGrad;
  for (auto& p : m.parameters()) p.normal_(0.0, 0.05);
}

std::vector<double> trainingAlphas() {
  const torch::Tensor a = train::DdpmNoiseSchedule().alphasCumprod().to(torch::kFloat64).contiguous();
  return std::vector<double>(a.data_ptr<double>(), a.data_ptr<double>() + a.numel());
}

}  // namespace

TEST(SdxlSampling, GuidedStepsAreTheSamplersUpdatesOfTheGuidedOutput) {
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  randomize(*unet, 1);
  unet->eval();
  torch::NoGradGuard noGrad;
  const auto& c = unet->config();
  torch::manual_seed(2);
  const sample::UnetSampleConditioning cond{torch::randn({2, 5, c.contextDim}), torch::randn({2, c.admInChannels})};
  const torch::Tensor start = torch::randn({1, c.inChannels, 8, 8});
  const double scale = 4.0;
  for (const char* name : {"ddim", "euler", "euler_a", "dpmsolver++"}) {
    sample::DiffusionSampler sampler(sample::parseDiffusionSampler(name), 3, trainingAlphas(), false);
    sample::DiffusionSampler reference(sample::parseDiffusionSampler(name), 3, trainingAlphas(), false);
    at::Generator g1 = at::detail::createCPUGenerator(9), g2 = at::detail::createCPUGenerator(9);
    const torch::Tensor got = sample::unetDenoise(*unet, sampler, start * sampler.initNoiseSigma(), cond, scale, torch::kFloat32, g1);
    torch::Tensor x = start * reference.initNoiseSigma();
    for (int i = 0; i < 3; ++i) {
      const torch::Tensor in = reference.scaleModelInput(x, i);
      const torch::Tensor t = torch::full({1}, reference.timestep(i));
      const torch::Tensor uncond = unet->forward(in, t, cond.context.slice(0, 0, 1), cond.admVector.slice(0, 0, 1));
      const torch::Tensor text = unet->forward(in, t, cond.context.slice(0, 1, 2), cond.admVector.slice(0, 1, 2));
      x = reference.step(uncond + scale * (text - uncond), i, x, g2);
    }
    EXPECT_TRUE(torch::allclose(got, x, 1e-4, 1e-5)) << name << ": " << (got - x).abs().max().item<double>();
    EXPECT_GT((got - start).abs().max().item<double>(), 1e-3) << name;
  }
}

TEST(FluxSampling, ScheduleIsBflsShiftedLinspace) {
  const std::vector<double> t = train::fluxSampleTimesteps(4, 128, 128);  // 64 x 64 = 4096 tokens: mu = 1.15
  ASSERT_EQ(t.size(), 5u);
  EXPECT_DOUBLE_EQ(t.front(), 1.0);
  EXPECT_DOUBLE_EQ(t.back(), 0.0);
  for (int i = 1; i < 4; ++i) {
    const double u = 1.0 - i / 4.0;
    EXPECT_NEAR(t[i], std::exp(1.15) / (std::exp(1.15) + (1.0 / u - 1.0)), 1e-9) << i;
  }
  EXPECT_NEAR(train::fluxSampleTimesteps(2, 32, 32)[1], std::exp(0.5) / (std::exp(0.5) + 1.0), 1e-9);  // 256 tokens: mu = 0.5
}

TEST(FluxSampling, EulerStepsOfTheFlowWithAndWithoutGuidance) {
  models::FluxTransformer transformer(models::FluxConfig::tiny());
  randomize(*transformer, 3);
  transformer->eval();
  torch::NoGradGuard noGrad;
  const auto& c = transformer->config();
  torch::manual_seed(4);
  const int64_t h = 4, w = 6, tokens = (h / 2) * (w / 2);
  const torch::Tensor t5 = torch::randn({2, 5, c.contextInDim}), pooled = torch::randn({2, c.vecInDim});
  const torch::Tensor noise = torch::randn({1, tokens, c.inChannels});
  const std::vector<double> times{1.0, 0.6, 0.0};
  auto model = [&](const torch::Tensor& x, int64_t which, double t) {
    return transformer->forward(x, models::fluxImageIds(1, h / 2, w / 2), t5.slice(0, which, which + 1), models::fluxTextIds(1, 5),
                                torch::full({1}, t), pooled.slice(0, which, which + 1), torch::full({1}, 3.5));
  };
  {  // CFG 1: the prompt alone.
    const train::FluxSampleConditioning cond{t5.slice(0, 1, 2), {}, pooled.slice(0, 1, 2), torch::full({1}, 3.5)};
    const torch::Tensor got = train::fluxDenoise(*transformer, noise, h, w, cond, times, 1.0, torch::kFloat32);
    torch::Tensor x = noise;
    for (size_t i = 0; i + 1 < times.size(); ++i) x = x + (times[i + 1] - times[i]) * model(x, 1, times[i]);
    EXPECT_TRUE(torch::allclose(got, x, 1e-4, 1e-5)) << (got - x).abs().max().item<double>();
  }
  {  // CFG 2.5 over [negative, prompt].
    const train::FluxSampleConditioning cond{t5, {}, pooled, torch::full({2}, 3.5)};
    const torch::Tensor got = train::fluxDenoise(*transformer, noise, h, w, cond, times, 2.5, torch::kFloat32);
    torch::Tensor x = noise;
    for (size_t i = 0; i + 1 < times.size(); ++i) {
      const torch::Tensor neg = model(x, 0, times[i]), pos = model(x, 1, times[i]);
      x = x + (times[i + 1] - times[i]) * (neg + (pos - neg) * 2.5);
    }
    EXPECT_TRUE(torch::allclose(got, x, 1e-4, 1e-5)) << (got - x).abs().max().item<double>();
  }
}
