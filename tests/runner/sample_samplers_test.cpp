// SDXL's sample samplers (diffusion_samplers.h) against their formulas: the schedules diffusers
// builds for sd-scripts, one hand-computed update of each, the ideal denoiser of a one-point
// dataset landing on that point, v-prediction agreeing with epsilon, and the names.
#include <gtest/gtest.h>

#include <cmath>

#include "sample/diffusion_samplers.h"

using namespace sinter::sample;

namespace {

// scaled_linear betas 0.00085..0.012 over 1000 steps, as sd-scripts' sampling schedulers.
std::vector<double> alphasCumprod() {
  std::vector<double> a(1000);
  double prod = 1.0;
  for (int t = 0; t < 1000; ++t) {
    const double b = std::pow(std::sqrt(0.00085) + (std::sqrt(0.012) - std::sqrt(0.00085)) * t / 999.0, 2);
    prod *= 1.0 - b;
    a[t] = prod;
  }
  return a;
}

double sigmaAt(double t) {
  const auto a = alphasCumprod();
  const int lo = static_cast<int>(std::floor(t));
  const int hi = std::min(lo + 1, 999);
  auto s = [&](int i) { return std::sqrt((1 - a[i]) / a[i]); };
  return s(lo) + (s(hi) - s(lo)) * (t - lo);
}

// A fixed latent-shaped tensor (values in about [-0.5, 0.6]).
torch::Tensor sample(int shift) {
  return torch::arange(36, torch::kFloat32).reshape({1, 4, 3, 3}) / 36.0 - 0.5 + 0.1 * shift;
}

at::Generator generator(uint64_t seed) {
  at::Generator g = at::detail::createCPUGenerator(seed);
  return g;
}

}  // namespace

TEST(DiffusionSamplers, SchedulesAsDiffusersBuildsThem) {
  const auto a = alphasCumprod();
  DiffusionSampler ddim(DiffusionSamplerKind::Ddim, 30, a, false);
  ASSERT_EQ(ddim.steps(), 30);
  EXPECT_EQ(ddim.timestep(0), 957);  // "leading": 1000 // 30 = 33, 29 * 33
  EXPECT_EQ(ddim.timestep(29), 0);
  EXPECT_EQ(ddim.initNoiseSigma(), 1.0);

  DiffusionSampler euler(DiffusionSamplerKind::Euler, 30, a, false);
  EXPECT_DOUBLE_EQ(euler.timestep(0), 999.0);
  EXPECT_DOUBLE_EQ(euler.timestep(29), 0.0);
  EXPECT_NEAR(euler.timestep(1), 999.0 * 28 / 29, 1e-9);
  EXPECT_NEAR(euler.sigma(1), sigmaAt(999.0 * 28 / 29), 1e-9);
  EXPECT_NEAR(euler.sigma(0), 14.6146, 1e-3);  // SDXL's sigma_max
  EXPECT_EQ(euler.sigma(30), 0.0);
  EXPECT_DOUBLE_EQ(euler.initNoiseSigma(), euler.sigma(0));  // "linspace": sigma_max itself

  DiffusionSampler dpm(DiffusionSamplerKind::DpmSolverPlusPlus, 20, a, false);
  ASSERT_EQ(dpm.steps(), 20);
  EXPECT_EQ(dpm.timestep(0), 999);
  EXPECT_EQ(dpm.timestep(1), 949);  // round(999 * 19 / 20) = round(949.05)
  EXPECT_EQ(dpm.timestep(19), std::round(999.0 / 20));
  EXPECT_EQ(dpm.sigma(20), 0.0);
}

TEST(DiffusionSamplers, OneUpdateOfEachAsItsFormula) {
  const auto a = alphasCumprod();
  const torch::Tensor x = sample(0), eps = sample(1) * 0.3;
  {  // DDIM: x0 clipped to [-1, 1], then sqrt(a_prev) x0 + sqrt(1 - a_prev) eps.
    DiffusionSampler s(DiffusionSamplerKind::Ddim, 10, a, false);
    const double at = a[900], ap = a[800];
    const torch::Tensor x0 = ((x - std::sqrt(1 - at) * eps) / std::sqrt(at)).clamp(-1, 1);
    EXPECT_TRUE(torch::allclose(s.step(eps, 0, x, generator(0)), std::sqrt(ap) * x0 + std::sqrt(1 - ap) * eps, 1e-6, 1e-6));
    EXPECT_TRUE(torch::equal(s.scaleModelInput(x, 0), x));
  }
  {  // Euler: x + eps (sigma_next - sigma), the model seeing x / sqrt(sigma^2 + 1).
    DiffusionSampler s(DiffusionSamplerKind::Euler, 10, a, false);
    EXPECT_TRUE(torch::allclose(s.step(eps, 3, x, generator(0)), x + eps * (s.sigma(4) - s.sigma(3)), 1e-6, 1e-6));
    EXPECT_TRUE(torch::allclose(s.scaleModelInput(x, 3), x / std::sqrt(s.sigma(3) * s.sigma(3) + 1), 1e-7, 1e-7));
  }
  {  // Euler ancestral: down to sigma_down, then fresh noise of sigma_up.
    DiffusionSampler s(DiffusionSamplerKind::EulerAncestral, 10, a, false);
    const double from = s.sigma(2), to = s.sigma(3);
    const double up = std::sqrt(to * to * (from * from - to * to) / (from * from)), down = std::sqrt(to * to - up * up);
    at::Generator g = generator(5);
    const torch::Tensor noise = at::randn(x.sizes(), g, x.options());
    const torch::Tensor expected = x + eps * (down - from) + noise * up;
    EXPECT_TRUE(torch::allclose(s.step(eps, 2, x, generator(5)), expected, 1e-6, 1e-6));
  }
  {  // DPM-Solver++ 2M: first order, then the midpoint update with the previous x0.
    DiffusionSampler s(DiffusionSamplerKind::DpmSolverPlusPlus, 10, a, false);
    auto vp = [](double sigma) { return std::pair<double, double>{1 / std::sqrt(sigma * sigma + 1), sigma / std::sqrt(sigma * sigma + 1)}; };
    auto x0Of = [&](const torch::Tensor& xt, const torch::Tensor& e, double sigma) {
      const auto [alpha, sv] = vp(sigma);
      return (xt - sv * e) / alpha;
    };
    const double s0 = s.sigma(0), s1 = s.sigma(1), s2 = s.sigma(2);
    const torch::Tensor m0 = x0Of(x, eps, s0);
    const auto [a1, v1] = vp(s1);
    const auto [a0, v0] = vp(s0);
    const double h1 = std::log(s0 / s1);
    const torch::Tensor x1 = (v1 / v0) * x - a1 * (std::exp(-h1) - 1) * m0;
    const torch::Tensor got1 = s.step(eps, 0, x, generator(0));
    ASSERT_TRUE(torch::allclose(got1, x1, 1e-5, 1e-6));
    const torch::Tensor eps1 = eps * 0.5 + 0.1;
    const torch::Tensor m1 = x0Of(x1, eps1, s1);
    const auto [a2, v2] = vp(s2);
    const double h = std::log(s1 / s2), r0 = std::log(s0 / s1) / h;
    const torch::Tensor d1 = (m1 - m0) / r0;
    const torch::Tensor x2 = (v2 / v1) * x1 - a2 * (std::exp(-h) - 1) * m1 - 0.5 * a2 * (std::exp(-h) - 1) * d1;
    EXPECT_TRUE(torch::allclose(s.step(eps1, 1, x1, generator(0)), x2, 1e-5, 1e-6));
  }
}

// The ideal denoiser of a dataset holding one point x0 predicts eps = (x - sqrt(a) x0) / sqrt(1 - a)
// exactly; every deterministic sampler must then end on x0 (DDIM's clipping is moot inside [-1, 1]).
TEST(DiffusionSamplers, TheIdealDenoiserOfOnePointEndsOnIt) {
  const auto a = alphasCumprod();
  const torch::Tensor target = (torch::arange(16, torch::kFloat32).reshape({1, 4, 2, 2}) / 16.0 - 0.5) * 1.5;
  for (auto kind : {DiffusionSamplerKind::Ddim, DiffusionSamplerKind::Euler, DiffusionSamplerKind::DpmSolverPlusPlus}) {
    for (bool v : {false, true}) {
      DiffusionSampler s(kind, 12, a, v);
      at::Generator g = generator(1);
      torch::Tensor x = at::randn(target.sizes(), g, target.options()) * s.initNoiseSigma();
      for (int i = 0; i < s.steps(); ++i) {
        // In the sampler's own space: Euler's x = x0 + sigma eps; the others' x = sqrt(a) x0 + sqrt(1 - a) eps.
        torch::Tensor out;
        if (kind == DiffusionSamplerKind::Euler) {
          const double sigma = s.sigma(i);
          const torch::Tensor e = (x - target) / sigma;
          const double alpha = 1 / std::sqrt(sigma * sigma + 1), sv = sigma * alpha;  // x / sqrt(sigma^2+1) is VP
          out = v ? alpha * e - sv * target : e;
        } else {
          const double at = a[static_cast<size_t>(s.timestep(i))];
          const torch::Tensor e = (x - std::sqrt(at) * target) / std::sqrt(1 - at);
          out = v ? std::sqrt(at) * e - std::sqrt(1 - at) * target : e;
        }
        x = s.step(out, i, x, g);
      }
      EXPECT_TRUE(torch::allclose(x, target, 1e-4, 1e-4)) << static_cast<int>(kind) << " v=" << v << ": " << (x - target).abs().max().item<double>();
    }
  }
}

TEST(DiffusionSamplers, NamesAsSdScriptsSpellsThem) {
  EXPECT_EQ(parseDiffusionSampler("k_euler"), DiffusionSamplerKind::Euler);
  EXPECT_EQ(parseDiffusionSampler("euler_a"), DiffusionSamplerKind::EulerAncestral);
  EXPECT_EQ(parseDiffusionSampler("dpmsolver++"), DiffusionSamplerKind::DpmSolverPlusPlus);
  EXPECT_EQ(displayName(DiffusionSamplerKind::EulerAncestral), "Euler a");
  try {
    parseDiffusionSampler("pndm");
    FAIL() << "pndm is not rendered";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sampler 'pndm' is not in this build; it renders with ddim, euler"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DiffusionSampler(DiffusionSamplerKind::Ddim, 0, alphasCumprod(), false), std::invalid_argument);
}
