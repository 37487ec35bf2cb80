// lr_scheduler_type's torch.optim.lr_scheduler classes, checked in float64 against PyTorch's own
// way of stepping them (the recursive "chainable" forms its docs give, applied step by step), the
// schedules sd-scripts takes from transformers/diffusers (inverse_sqrt, cosine_with_min_lr,
// warmup_stable_decay, piecewise_constant) against their documented formulas, lr_scheduler_args,
// and the device table against the host values.
#include <gtest/gtest.h>

#include <cmath>

#include "train/optim/lr_schedule.h"
#include "train/optim/lr_scheduler_args.h"
#include "train/optim/torch_lr_schedulers.h"

using namespace sinter::train;

namespace {

TorchLrScheduler torchScheduler(const std::string& type, const std::vector<std::string>& args) {
  return parseTorchLrScheduler(type, parseLrSchedulerArgs(args));
}

double lrAt(const TorchLrScheduler& s, double base, long long step) {
  const LrValue v = s.at(step);
  return base * v.scale + v.offset;
}

// Runs `next(t, lr)` for t = 1..steps from lr0 (PyTorch's get_lr after each step()) and compares
// each with the closed form.
template <class Next>
void expectSteps(const TorchLrScheduler& s, double base, long long steps, Next next) {
  double lr = lrAt(s, base, 0);
  for (long long t = 1; t <= steps; ++t) {
    lr = next(t, lr);
    ASSERT_NEAR(lrAt(s, base, t), lr, 1e-12 * std::max(1.0, std::abs(lr))) << s.name << " step " << t;
  }
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const double kPi = std::acos(-1.0);

}  // namespace

TEST(TorchLrSchedulers, StepMultiStepExponentialAsPyTorchStepsThem) {
  const double base = 2e-4;
  const TorchLrScheduler step = torchScheduler("StepLR", {"step_size=30", "gamma=0.5"});
  EXPECT_DOUBLE_EQ(lrAt(step, base, 0), base);
  expectSteps(step, base, 200, [](long long t, double lr) { return t % 30 == 0 ? lr * 0.5 : lr; });
  const TorchLrScheduler multi = torchScheduler("torch.optim.lr_scheduler.MultiStepLR", {"milestones=[80, 30, 80]"});
  EXPECT_EQ(multi.gamma, 0.1);  // PyTorch's default
  expectSteps(multi, base, 150, [](long long t, double lr) { return lr * std::pow(0.1, (t == 30) + 2 * (t == 80)); });
  const TorchLrScheduler expo = torchScheduler("ExponentialLR", {"gamma=0.99"});
  expectSteps(expo, base, 300, [](long long, double lr) { return lr * 0.99; });
}

TEST(TorchLrSchedulers, ConstantLinearPolynomialAsPyTorchStepsThem) {
  const double base = 1e-3;
  const TorchLrScheduler constant = torchScheduler("ConstantLR", {});
  EXPECT_DOUBLE_EQ(lrAt(constant, base, 0), base / 3);  // factor 1/3 for total_iters 5
  expectSteps(constant, base, 20, [](long long t, double lr) { return t == 5 ? lr / (1.0 / 3.0) : lr; });
  const TorchLrScheduler linear = torchScheduler("LinearLR", {"start_factor=0.05", "total_iters=40"});
  EXPECT_NEAR(lrAt(linear, 0.05, 0), 0.0025, 1e-15);
  EXPECT_NEAR(lrAt(linear, 0.05, 1), 0.05 * (0.05 + 0.95 / 40), 1e-15);  // PyTorch's example: 0.003687
  expectSteps(linear, base, 60, [](long long t, double lr) {
    if (t > 40) return lr;
    return lr * (1.0 + 0.95 / (40 * 0.05 + (t - 1) * 0.95));
  });
  const TorchLrScheduler poly = torchScheduler("PolynomialLR", {"total_iters=8", "power=2.0"});
  expectSteps(poly, base, 20, [](long long t, double lr) {
    if (t > 8) return lr;
    return lr * std::pow((1.0 - t / 8.0) / (1.0 - (t - 1) / 8.0), 2.0);
  });
}

TEST(TorchLrSchedulers, CosineAnnealingAsPyTorchStepsIt) {
  const double base = 1e-3, etaMin = 1e-5;
  const TorchLrScheduler cos = torchScheduler("CosineAnnealingLR", {"T_max=50", "eta_min=1e-5"});
  EXPECT_DOUBLE_EQ(lrAt(cos, base, 0), base);
  EXPECT_NEAR(lrAt(cos, base, 50), etaMin, 1e-15);
  // PyTorch's recursive get_lr, past T_max too (the cosine goes on, back up).
  expectSteps(cos, base, 180, [&](long long t, double lr) {
    if ((t - 1 - 50) % 100 == 0) return lr + (base - etaMin) * (1 - std::cos(kPi / 50)) / 2;
    return (1 + std::cos(kPi * t / 50)) / (1 + std::cos(kPi * (t - 1) / 50)) * (lr - etaMin) + etaMin;
  });
  // CosineAnnealingWarmRestarts: T_cur += 1; a restart when it reaches T_i, which grows by T_mult.
  for (long long mult : {1LL, 2LL, 3LL}) {
    const TorchLrScheduler warm = torchScheduler("CosineAnnealingWarmRestarts", {"T_0=7", "T_mult=" + std::to_string(mult), "eta_min=1e-5"});
    double tCur = 0, tI = 7;
    for (long long t = 1; t <= 400; ++t) {
      tCur += 1;
      if (tCur >= tI) tCur -= tI, tI *= static_cast<double>(mult);
      const double want = etaMin + (base - etaMin) * (1 + std::cos(kPi * tCur / tI)) / 2;
      ASSERT_NEAR(lrAt(warm, base, t), want, 1e-15) << "T_mult " << mult << " step " << t;
    }
  }
}

TEST(TorchLrSchedulers, OneCycleFollowsItsPhases) {
  const TorchLrScheduler one = torchScheduler("OneCycleLR", {"max_lr=1e-3", "total_steps=100", "cycle_momentum=False"});
  const double initial = 1e-3 / 25, minimum = initial / 1e4;
  EXPECT_NEAR(lrAt(one, 123.0, 0), initial, 1e-18);  // the optimizer's own rate plays no part
  EXPECT_NEAR(lrAt(one, 0, 29), 1e-3, 1e-18);         // pct_start 0.3: the peak at step 29
  EXPECT_NEAR(lrAt(one, 0, 99), minimum, 1e-18);
  // Half way up: the cosine between the initial and the peak rate.
  EXPECT_NEAR(lrAt(one, 0, 14), 1e-3 + (initial - 1e-3) / 2 * (std::cos(kPi * 14 / 29) + 1), 1e-18);
  const TorchLrScheduler lin = torchScheduler("OneCycleLR", {"max_lr=0.01", "epochs=2", "steps_per_epoch=50", "anneal_strategy='linear'",
                                                            "three_phase=True", "cycle_momentum=False"});
  EXPECT_EQ(lin.totalSteps, 100);
  EXPECT_NEAR(lrAt(lin, 0, 58), 0.01 / 25, 1e-15);  // back to the initial rate at 2 * 30 - 2
  EXPECT_NEAR(lrAt(lin, 0, 44), 0.01 + (0.01 / 25 - 0.01) * (44.0 - 29) / 29, 1e-15);
  // accelerate stops stepping it at total_steps: the rate holds from there.
  EXPECT_EQ(lrAt(lin, 0, 100), lrAt(lin, 0, 150));
}

TEST(TorchLrSchedulers, BadNamesAndArgumentsAreRefusedNamingThem) {
  EXPECT_NE(errorOf([] { torchScheduler("CosineAnnealing", {}); }).find("CosineAnnealingWarmRestarts"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("transformers.optimization.AdafactorSchedule", {}); }).find("runs no Python"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("LambdaLR", {}); }).find("Python function"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("StepLR", {}); }).find("step_size"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("StepLR", {"step_size=10", "gama=0.5"}); }).find("'gama' is not an argument of StepLR"),
            std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("StepLR", {"step_size=10.5"}); }).find("is an int"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("StepLR", {"step_size=10", "last_epoch=5"}); }).find("resume"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("LinearLR", {"start_factor=0"}); }).find("Starting multiplicative factor"), std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("OneCycleLR", {"max_lr=1e-3", "total_steps=100"}); }).find("cycle_momentum=False"),
            std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("OneCycleLR", {"max_lr=[1e-3, 1e-4]", "total_steps=10", "cycle_momentum=False"}); })
                .find("one number"),
            std::string::npos);
  EXPECT_NE(errorOf([] { torchScheduler("OneCycleLR", {"max_lr=1e-3", "total_steps=100", "cycle_momentum=False",
                                                        "anneal_strategy=linear"}); })
                .find("Python literal"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parseLrSchedulerArgs({"T_max"}); }).find("not key=value"), std::string::npos);
  // Items as one space-separated string, a list with spaces glued back.
  const auto args = parseLrSchedulerArgs({"milestones=[10, 20] gamma=0.5"});
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].list, (std::vector<double>{10, 20}));
}

TEST(TorchLrSchedulers, ReplaceLrSchedulerAndRefuseWarmup) {
  LrScheduleOptions o;
  o.totalSteps = 100;
  o.torchScheduler = torchScheduler("CosineAnnealingLR", {"T_max=100", "eta_min=1e-6"});
  const LrSchedule s(o);
  EXPECT_NEAR(s.learningRate(1e-4, 100), 1e-6, 1e-18);
  EXPECT_NEAR(s.learningRate(2e-4, 50), 1e-6 + (2e-4 - 1e-6) / 2, 1e-18);  // eta_min is absolute, per group
  o.warmupSteps = 10;
  EXPECT_NE(errorOf([&] { LrSchedule{o}; }).find("lr_warmup_steps"), std::string::npos);
}

// The schedules sd-scripts takes from transformers and diffusers, at hand-computed points.
TEST(LrSchedule, TransformersAndDiffusersSchedules) {
  LrScheduleOptions o;
  o.totalSteps = 110;
  o.warmupSteps = 10;
  o.initialLr = 1e-3;
  // inverse_sqrt: after warmup 1 / sqrt((step + timescale - warmup) / timescale); timescale = warmup.
  o.type = LrSchedulerType::InverseSqrt;
  EXPECT_NEAR(LrSchedule(o).factor(5), 0.5, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(10), 1.0, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(40), 0.5, 1e-15);  // sqrt(40 / 10)
  o.timescale = 90;
  EXPECT_NEAR(LrSchedule(o).factor(100), 1 / std::sqrt(180.0 / 90), 1e-15);
  // cosine_with_min_lr: num_cycles 1 -> half a wave, from 1 down to the ratio.
  o.type = LrSchedulerType::CosineWithMinLr;
  EXPECT_THROW(LrSchedule{o}, std::invalid_argument);  // neither a ratio nor min_lr
  o.minLrRatio = 0.1;
  EXPECT_NEAR(LrSchedule(o).factor(60), 0.55, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(110), 0.1, 1e-15);
  o.minLr = 2e-4;
  EXPECT_THROW(LrSchedule{o}, std::invalid_argument);  // both
  o.minLrRatio.reset();
  EXPECT_NEAR(LrSchedule(o).factor(110), 0.2, 1e-15);  // min_lr / learning_rate
  // warmup_stable_decay: warmup 10 (from the ratio up), stable 60, decay 40 (cosine), then the ratio.
  o = LrScheduleOptions{};
  o.type = LrSchedulerType::WarmupStableDecay;
  o.totalSteps = 110, o.warmupSteps = 10, o.decaySteps = 40, o.minLrRatio = 0.2;
  EXPECT_NEAR(LrSchedule(o).factor(0), 0.2, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(5), 0.5 * 0.8 + 0.2, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(69), 1.0, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(90), 0.5 * 0.8 + 0.2, 1e-15);  // half way down the cosine
  EXPECT_NEAR(LrSchedule(o).factor(110), 0.2, 1e-15);
  applyLrSchedulerArgs(o, parseLrSchedulerArgs({"warmup_type='1-sqrt'", "decay_type='linear'"}));
  EXPECT_NEAR(LrSchedule(o).factor(5), (1 - std::sqrt(0.5)) * 0.8 + 0.2, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(80), 0.75 * 0.8 + 0.2, 1e-15);
  EXPECT_EQ(resolveWarmupSteps(0.25, 200, "lr_decay_steps"), 50);
  // piecewise_constant: diffusers' thresholds.
  o = LrScheduleOptions{};
  o.type = LrSchedulerType::PiecewiseConstant;
  o.totalSteps = 100;
  EXPECT_THROW(LrSchedule{o}, std::invalid_argument);  // no step_rules
  applyLrSchedulerArgs(o, parseLrSchedulerArgs({"step_rules='1:10,0.1:20,0.01:30,0.005'"}));
  const LrSchedule piecewise(o);
  EXPECT_EQ(piecewise.factor(9), 1.0);
  EXPECT_EQ(piecewise.factor(10), 0.1);
  EXPECT_EQ(piecewise.factor(29), 0.01);
  EXPECT_EQ(piecewise.factor(30), 0.005);
  o.stepRules = "1:ten,0.1";
  EXPECT_NE(errorOf([&] { LrSchedule{o}; }).find("step_rules"), std::string::npos);
}

TEST(LrSchedule, ArgumentsOfTheNamedSchedules) {
  LrScheduleOptions o;
  o.type = LrSchedulerType::Cosine;
  o.totalSteps = 100;
  applyLrSchedulerArgs(o, parseLrSchedulerArgs({"num_cycles=1"}));  // a whole wave: back to 1 at the end
  EXPECT_NEAR(LrSchedule(o).factor(100), 1.0, 1e-15);
  EXPECT_NEAR(LrSchedule(o).factor(50), 0.0, 1e-15);
  o.type = LrSchedulerType::Polynomial;
  o.initialLr = 1e-3;
  applyLrSchedulerArgs(o, parseLrSchedulerArgs({"lr_end=1e-4"}));
  EXPECT_NEAR(LrSchedule(o).factor(100), 0.1, 1e-15);
  o.type = LrSchedulerType::CosineWithRestarts;
  EXPECT_NE(errorOf([&] { applyLrSchedulerArgs(o, parseLrSchedulerArgs({"num_cycles=3"})); }).find("not an argument"), std::string::npos);
  o.type = LrSchedulerType::Linear;
  EXPECT_NE(errorOf([&] { applyLrSchedulerArgs(o, parseLrSchedulerArgs({"last_epoch=3"})); }).find("resume"), std::string::npos);
  EXPECT_NE(errorOf([] { parseLrSchedulerType("reduce_lr_on_plateau"); }).find("metric"), std::string::npos);
  EXPECT_NE(errorOf([] { parseLrSchedulerType("cosine_warmup_with_min_lr"); }).find("cosine_with_min_lr"), std::string::npos);
  EXPECT_EQ(parseLrSchedulerType("warmup_stable_decay"), LrSchedulerType::WarmupStableDecay);
}

// The device reads a table of the host's values at the optimizer's step count.
TEST(LrSchedule, TheDeviceTableHoldsTheHostValues) {
  LrScheduleOptions o;
  o.totalSteps = 40;
  o.lastStep = 45;
  o.torchScheduler = torchScheduler("CosineAnnealingWarmRestarts", {"T_0=6", "T_mult=2", "eta_min=1e-6"});
  const LrSchedule s(o);
  for (long long step = 0; step <= 50; ++step)
    ASSERT_EQ(s.factor(torch::full({}, static_cast<float>(step))).item<double>(), s.factor(std::min(step, 45LL))) << step;
}
