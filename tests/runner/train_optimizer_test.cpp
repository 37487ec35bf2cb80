// AdamW against a plainly written reference, optimizer_args parsing, clipping and the schedules.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "train/adamw.h"
#include "train/grad_clip.h"
#include "train/lr_schedule.h"
#include "train/optimizer_args.h"

using namespace sinter::train;

namespace {

// torch.optim.AdamW (amsgrad off), element by element in double.
struct ReferenceAdamW {
  std::vector<double> p, m, v;
  int step = 0;
  void update(const std::vector<double>& g, double lr, double b1, double b2, double eps, double wd) {
    ++step;
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * wd;
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double mhat = m[i] / (1 - std::pow(b1, step));
      const double vhat = v[i] / (1 - std::pow(b2, step));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

std::vector<double> toVec(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

TEST(AdamW, MatchesTheReferenceOverSeveralStepsWithAScheduledLr) {
  torch::manual_seed(3);
  torch::Tensor a = torch::randn({3, 4}).set_requires_grad(true);
  torch::Tensor b = torch::randn({5}).set_requires_grad(true);
  AdamWHyperparameters h = parseAdamWArgs({"weight_decay=0.1 betas=0.8,0.99", "eps=1e-6"}).hyper;
  AdamW opt({{"unet", 1e-2, {a}}, {"textencoder", 5e-3, {b}}}, h);
  LrSchedule sched({LrSchedulerType::Linear, 2, 6});
  ReferenceAdamW ra{toVec(a), std::vector<double>(12, 0), std::vector<double>(12, 0)};
  ReferenceAdamW rb{toVec(b), std::vector<double>(5, 0), std::vector<double>(5, 0)};
  for (int step = 0; step < 6; ++step) {
    const torch::Tensor ga = torch::randn({3, 4}), gb = torch::randn({5});
    a.mutable_grad() = ga.clone();
    b.mutable_grad() = gb.clone();
    sched.apply(opt);
    opt.step();
    ra.update(toVec(ga), 1e-2 * sched.factor(step), 0.8, 0.99, 1e-6, 0.1);
    rb.update(toVec(gb), 5e-3 * sched.factor(step), 0.8, 0.99, 1e-6, 0.1);
    const auto pa = toVec(a), pb = toVec(b);
    for (size_t i = 0; i < pa.size(); ++i) ASSERT_NEAR(pa[i], ra.p[i], 2e-6) << "step " << step;
    for (size_t i = 0; i < pb.size(); ++i) ASSERT_NEAR(pb[i], rb.p[i], 2e-6) << "step " << step;
  }
  EXPECT_EQ(opt.stepCount().item<float>(), 6.0f);
  // The gradient buffers persist (a captured step writes into them): zeroed in place.
  const void* buffer = a.grad().data_ptr();
  opt.zeroGrad();
  ASSERT_TRUE(a.grad().defined());
  EXPECT_EQ(a.grad().data_ptr(), buffer);
  EXPECT_EQ(a.grad().abs().sum().item<float>(), 0.0f);
}

TEST(AdamW, StateRoundTripContinuesIdentically) {
  torch::manual_seed(4);
  torch::Tensor p = torch::randn({6}).set_requires_grad(true);
  AdamW opt({{"unet", 1e-2, {p}}}, {});
  for (int i = 0; i < 3; ++i) {
    p.mutable_grad() = torch::randn({6});
    opt.step();
  }
  const auto state = opt.stateTensors();
  torch::Tensor q = p.detach().clone().set_requires_grad(true);
  AdamW resumed({{"unet", 1e-2, {q}}}, {});
  std::map<std::string, torch::Tensor> m(state.begin(), state.end());
  resumed.loadStateTensors(m);
  const torch::Tensor g = torch::randn({6});
  p.mutable_grad() = g.clone();
  q.mutable_grad() = g.clone();
  opt.step();
  resumed.step();
  EXPECT_TRUE(torch::equal(p, q));
  m.erase("exp_avg.0.0");
  EXPECT_THROW(resumed.loadStateTensors(m), std::invalid_argument);
}

TEST(OptimizerArgs, ParsesSdScriptsSpellingAndRejectsTheRest) {
  const auto parsed = parseAdamWArgs({"weight_decay=0.01", "betas=(0.9, 0.995)"});
  EXPECT_DOUBLE_EQ(parsed.hyper.weightDecay, 0.01);
  EXPECT_DOUBLE_EQ(parsed.hyper.beta2, 0.995);
  EXPECT_EQ(parsed.pythonText, "weight_decay=0.01,betas=(0.9, 0.995)");
  EXPECT_THROW(parseAdamWArgs({"momentum=0.9"}), std::invalid_argument);
  EXPECT_THROW(parseAdamWArgs({"betas=0.9"}), std::invalid_argument);
  EXPECT_EQ(resolveOptimizerType(""), "AdamW");
  EXPECT_EQ(resolveOptimizerType("adamw"), "AdamW");
  try {
    resolveOptimizerType("AdamW8bit");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("available: AdamW"), std::string::npos);
  }
}

TEST(GradClip, EqualsReferenceNormClipping) {
  torch::Tensor a = torch::zeros({2}).set_requires_grad(true);
  torch::Tensor b = torch::zeros({1}).set_requires_grad(true);
  a.mutable_grad() = torch::tensor({3.0f, 0.0f});
  b.mutable_grad() = torch::tensor({4.0f});
  const torch::Tensor norm = clipGradNorm({a, b}, 1.0);
  EXPECT_NEAR(norm.item<float>(), 5.0f, 1e-6);
  const double coef = 1.0 / (5.0 + 1e-6);
  EXPECT_NEAR(a.grad()[0].item<float>(), 3.0 * coef, 1e-6);
  EXPECT_NEAR(b.grad()[0].item<float>(), 4.0 * coef, 1e-6);
  // Below the limit: unchanged.
  clipGradNorm({a, b}, 10.0);
  EXPECT_NEAR(b.grad()[0].item<float>(), 4.0 * coef, 1e-6);
}

TEST(LrSchedule, MatchesHandComputedValues) {
  auto f = [](LrSchedulerType type, int64_t step, int64_t warmup = 10, int64_t cycles = 1, double power = 1.0) {
    LrScheduleOptions o{type, warmup, 100, cycles, power, 1e-7, 1e-3};
    return LrSchedule(o).factor(step);
  };
  EXPECT_DOUBLE_EQ(LrSchedule({LrSchedulerType::Constant, 0, 100}).factor(50), 1.0);
  EXPECT_DOUBLE_EQ(f(LrSchedulerType::ConstantWithWarmup, 0), 0.0);
  EXPECT_DOUBLE_EQ(f(LrSchedulerType::ConstantWithWarmup, 5), 0.5);
  EXPECT_DOUBLE_EQ(f(LrSchedulerType::ConstantWithWarmup, 10), 1.0);
  EXPECT_DOUBLE_EQ(f(LrSchedulerType::Linear, 55), 45.0 / 90.0);
  EXPECT_DOUBLE_EQ(f(LrSchedulerType::Linear, 100), 0.0);
  EXPECT_NEAR(f(LrSchedulerType::Cosine, 55), 0.5, 1e-12);  // half way: cos(pi/2)
  EXPECT_NEAR(f(LrSchedulerType::Cosine, 10), 1.0, 1e-12);
  // Two cycles over 100 steps after 10 of warmup: a quarter in, half way down the first cycle;
  // half way in, the second cycle restarts at 1.
  LrSchedule restarts({LrSchedulerType::CosineWithRestarts, 10, 110, 2});
  EXPECT_NEAR(restarts.factor(35), 0.5, 1e-12);
  EXPECT_NEAR(restarts.factor(60), 1.0, 1e-12);
  EXPECT_NEAR(restarts.factor(59), 0.5 * (1 + std::cos(M_PI * 0.98)), 1e-12);
  EXPECT_NEAR(f(LrSchedulerType::CosineWithRestarts, 100, 10, 2), 0.0, 1e-12);
  // polynomial, power 2: ((1e-3 - 1e-7) * (1 - 45/90)^2 + 1e-7) / 1e-3
  EXPECT_NEAR(f(LrSchedulerType::Polynomial, 55, 10, 1, 2.0), ((1e-3 - 1e-7) * 0.25 + 1e-7) / 1e-3, 1e-12);
  EXPECT_NEAR(f(LrSchedulerType::Polynomial, 150, 10, 1, 2.0), 1e-4, 1e-12);
  // The device formula agrees with the host one at every step.
  for (auto type : {LrSchedulerType::ConstantWithWarmup, LrSchedulerType::Linear, LrSchedulerType::Cosine,
                    LrSchedulerType::CosineWithRestarts, LrSchedulerType::Polynomial}) {
    LrSchedule s({type, 10, 100, 3, 1.5, 1e-7, 1e-3});
    for (int64_t step = 0; step <= 110; ++step)
      ASSERT_NEAR(s.factor(torch::full({}, static_cast<float>(step))).item<double>(), s.factor(step), 1e-9)
          << static_cast<int>(type) << " step " << step;
  }
  EXPECT_EQ(resolveWarmupSteps(0.1, 1600), 160);
  EXPECT_EQ(resolveWarmupSteps(50, 1600), 50);
  EXPECT_THROW(LrSchedule({LrSchedulerType::Constant, 5, 100}), std::invalid_argument);
  EXPECT_THROW(parseLrSchedulerType("adafactor"), std::invalid_argument);
}
