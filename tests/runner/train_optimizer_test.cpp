// AdamW and Adafactor against plainly written references, optimizer_args parsing, the fused
// backward pass, clipping and the schedules.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "core/registry.h"

#include "core/optimizer_table.h"
#include "train/optim/adafactor.h"
#include "train/optim/adamw.h"
#include "train/optim/adjacent_span.h"
#include "train/optim/fused_backward.h"
#include "train/optim/grad_clip.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"

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
  AdamWHyperparameters h = parseOptimizerSettings("", {"weight_decay=0.1 betas=0.8,0.99", "eps=1e-6"}).adamw;
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
  const auto parsed = parseOptimizerSettings("AdamW", {"weight_decay=0.01", "betas=(0.9, 0.995)"});
  EXPECT_DOUBLE_EQ(parsed.adamw.weightDecay, 0.01);
  EXPECT_DOUBLE_EQ(parsed.adamw.beta2, 0.995);
  EXPECT_EQ(parsed.pythonText, "weight_decay=0.01,betas=(0.9, 0.995)");
  EXPECT_EQ(parsed.className(), "torch.optim.adamw.AdamW");
  EXPECT_THROW(parseOptimizerSettings("AdamW", {"momentum=0.9"}), std::invalid_argument);
  EXPECT_THROW(parseOptimizerSettings("AdamW", {"betas=0.9"}), std::invalid_argument);
  EXPECT_THROW(parseOptimizerSettings("AdamW", {"relative_step=False"}), std::invalid_argument);
  EXPECT_EQ(resolveOptimizerType(""), "AdamW");
  EXPECT_EQ(resolveOptimizerType("adamw"), "AdamW");
  try {
    resolveOptimizerType("AdEMAMix8bit");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("available: AdamW"), std::string::npos);
  }
}

namespace {

// transformers.optimization.Adafactor, element by element in double, for a 2-d parameter (factored)
// or a 1-d one.
struct ReferenceAdafactor {
  AdafactorHyperparameters h;
  int64_t rows = 1, cols = 1;  // rows == 0: not factored
  std::vector<double> p, row, col, v, m;
  int step = 0;
  static double rms(const std::vector<double>& x) {
    double s = 0;
    for (double e : x) s += e * e;
    return std::sqrt(s / x.size());
  }
  void update(const std::vector<double>& g, double lr) {
    ++step;
    if (h.relativeStep) lr = std::min(h.warmupInit ? 1e-6 * step : 1e-2, 1.0 / std::sqrt(step));
    if (h.scaleParameter) lr *= std::max(h.eps2, rms(p));
    const double b2 = 1.0 - std::pow(step, h.decayRate);
    std::vector<double> u(p.size());
    if (rows) {
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0;
        for (int64_t c = 0; c < cols; ++c) mean += (g[r * cols + c] * g[r * cols + c] + h.eps1) / cols;
        row[r] = b2 * row[r] + (1 - b2) * mean;
      }
      for (int64_t c = 0; c < cols; ++c) {
        double mean = 0;
        for (int64_t r = 0; r < rows; ++r) mean += (g[r * cols + c] * g[r * cols + c] + h.eps1) / rows;
        col[c] = b2 * col[c] + (1 - b2) * mean;
      }
      double rowMean = 0;
      for (double x : row) rowMean += x / rows;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) u[r * cols + c] = g[r * cols + c] / std::sqrt(row[r] / rowMean) / std::sqrt(col[c]);
    } else {
      for (size_t i = 0; i < p.size(); ++i) {
        v[i] = b2 * v[i] + (1 - b2) * (g[i] * g[i] + h.eps1);
        u[i] = g[i] / std::sqrt(v[i]);
      }
    }
    const double clip = std::max(1.0, rms(u) / h.clipThreshold);
    for (size_t i = 0; i < p.size(); ++i) {
      double d = u[i] / clip * lr;
      if (h.beta1) d = m[i] = *h.beta1 * m[i] + (1 - *h.beta1) * d;
      p[i] += p[i] * (-h.weightDecay * lr);
      p[i] -= d;
    }
  }
};

void expectAdafactorMatchesTheReference(const AdafactorHyperparameters& h, double lr) {
  torch::manual_seed(11);
  torch::Tensor a = torch::randn({3, 4}).set_requires_grad(true);
  torch::Tensor b = torch::randn({5}).set_requires_grad(true);
  Adafactor opt({{"unet", lr, {a, b}}}, h);
  ReferenceAdafactor ra{h, 3, 4, toVec(a), std::vector<double>(3, 0), std::vector<double>(4, 0), {}, std::vector<double>(12, 0)};
  ReferenceAdafactor rb{h, 0, 0, toVec(b), {}, {}, std::vector<double>(5, 0), std::vector<double>(5, 0)};
  for (int step = 0; step < 5; ++step) {
    const torch::Tensor ga = torch::randn({3, 4}), gb = torch::randn({5}) * 0.1;
    a.mutable_grad() = ga.clone();
    b.mutable_grad() = gb.clone();
    opt.step();
    ra.update(toVec(ga), lr);
    rb.update(toVec(gb), lr);
    const auto pa = toVec(a), pb = toVec(b);
    for (size_t i = 0; i < pa.size(); ++i) ASSERT_NEAR(pa[i], ra.p[i], 1e-6 * (1 + std::abs(ra.p[i]))) << "step " << step;
    for (size_t i = 0; i < pb.size(); ++i) ASSERT_NEAR(pb[i], rb.p[i], 1e-6 * (1 + std::abs(rb.p[i]))) << "step " << step;
  }
}

}  // namespace

TEST(Adafactor, MatchesTheFormulaWithTheRelativeStep) {
  expectAdafactorMatchesTheReference(parseOptimizerSettings("Adafactor", {}).adafactor, 0.0);
  expectAdafactorMatchesTheReference(parseOptimizerSettings("Adafactor", {"warmup_init=True"}).adafactor, 0.0);
}

TEST(Adafactor, MatchesTheFormulaWithAGivenLrFirstMomentAndWeightDecay) {
  expectAdafactorMatchesTheReference(
      parseOptimizerSettings("Adafactor", {"scale_parameter=False relative_step=False warmup_init=False"}).adafactor, 1e-2);
  expectAdafactorMatchesTheReference(
      parseOptimizerSettings("adafactor", {"relative_step=False", "beta1=0.9", "weight_decay=0.01", "clip_threshold=0.5",
                                           "decay_rate=-0.5", "eps=(1e-30, 1e-2)"})
          .adafactor,
      3e-3);
}

TEST(Adafactor, ArgumentsAsSdScriptsPassesThem) {
  // relative_step is added when absent, and warmup_init turns it on, in place.
  EXPECT_EQ(parseOptimizerSettings("Adafactor", {}).pythonText, "relative_step=True");
  const OptimizerSettings usual = parseOptimizerSettings("Adafactor", {"scale_parameter=False", "relative_step=False", "warmup_init=False"});
  EXPECT_EQ(usual.pythonText, "scale_parameter=False,relative_step=False,warmup_init=False");
  EXPECT_EQ(usual.className(), "transformers.optimization.Adafactor");
  EXPECT_FALSE(usual.adafactor.relativeStep);
  const OptimizerSettings warm = parseOptimizerSettings("Adafactor", {"relative_step=False", "warmup_init=True"});
  EXPECT_TRUE(warm.adafactor.relativeStep);
  EXPECT_EQ(warm.pythonText, "relative_step=True,warmup_init=True");
  try {
    parseOptimizerSettings("Adafactor", {"betas=0.9,0.99"});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scale_parameter, relative_step"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseOptimizerSettings("Adafactor", {"relative_step=maybe"}), std::invalid_argument);

  // The schedule: the relative step is the adafactor schedule, which needs it.
  bool switched = false;
  EXPECT_EQ(resolveLrScheduler("cosine", parseOptimizerSettings("Adafactor", {}), &switched), LrSchedulerType::Adafactor);
  EXPECT_TRUE(switched);
  EXPECT_EQ(resolveLrScheduler("cosine", usual, &switched), LrSchedulerType::Cosine);
  EXPECT_FALSE(switched);
  EXPECT_THROW(resolveLrScheduler("adafactor", usual), std::invalid_argument);
  EXPECT_THROW(resolveLrScheduler("adafactor", parseOptimizerSettings("", {})), std::invalid_argument);
  LrScheduleOptions o;
  o.type = LrSchedulerType::Adafactor, o.warmupSteps = 2, o.totalSteps = 10;
  EXPECT_THROW(LrSchedule{o}, std::invalid_argument);
}

TEST(Adafactor, StateRoundTripContinuesIdentically) {
  torch::manual_seed(5);
  const AdafactorHyperparameters h = parseOptimizerSettings("Adafactor", {"beta1=0.9"}).adafactor;
  torch::Tensor w = torch::randn({4, 3}).set_requires_grad(true), bias = torch::randn({3}).set_requires_grad(true);
  Adafactor opt({{"unet", 0.0, {w, bias}}}, h);
  for (int i = 0; i < 3; ++i) {
    w.mutable_grad() = torch::randn({4, 3});
    bias.mutable_grad() = torch::randn({3});
    opt.step();
  }
  std::map<std::string, torch::Tensor> state;
  for (const auto& [k, t] : opt.stateTensors()) state[k] = t;
  EXPECT_TRUE(state.count("exp_avg_sq_row.0.0") && state.count("exp_avg_sq_col.0.0") && state.count("exp_avg_sq.0.1"));
  EXPECT_FALSE(state.count("exp_avg_sq.0.0") || state.count("exp_avg_sq_row.0.1"));
  torch::Tensor w2 = w.detach().clone().set_requires_grad(true), bias2 = bias.detach().clone().set_requires_grad(true);
  Adafactor resumed({{"unet", 0.0, {w2, bias2}}}, h);
  resumed.loadStateTensors(state);
  const torch::Tensor g = torch::randn({4, 3}), gb = torch::randn({3});
  w.mutable_grad() = g.clone(), bias.mutable_grad() = gb.clone();
  w2.mutable_grad() = g.clone(), bias2.mutable_grad() = gb.clone();
  opt.step();
  resumed.step();
  EXPECT_TRUE(torch::equal(w, w2));
  EXPECT_TRUE(torch::equal(bias, bias2));
  // An AdamW state is not Adafactor's.
  torch::Tensor p = torch::randn({4, 3}).set_requires_grad(true), q = torch::randn({3}).set_requires_grad(true);
  AdamW adamw({{"unet", 1e-3, {p, q}}}, {});
  std::map<std::string, torch::Tensor> other;
  for (const auto& [k, t] : adamw.stateTensors()) other[k] = t;
  EXPECT_THROW(resumed.loadStateTensors(other), std::invalid_argument);
}

// bf16 weights: an update far below bf16's resolution is lost when rounded to nearest and kept on
// average when rounded stochastically (sd-scripts' fused Adafactor).
TEST(Adafactor, StochasticRoundingKeepsSmallUpdatesOnAverage) {
  const AdafactorHyperparameters h =
      parseOptimizerSettings("Adafactor", {"scale_parameter=False", "relative_step=False", "warmup_init=False"}).adafactor;
  for (bool stochastic : {false, true}) {
    torch::manual_seed(6);
    torch::Tensor p = torch::ones({20000}, torch::kBFloat16).set_requires_grad(true);
    Adafactor opt({{"unet", 1e-4, {p}}}, h, /*persistentGradients=*/true, stochastic);
    p.mutable_grad() = torch::ones({20000}, torch::kBFloat16);  // first step: every update is exactly lr
    opt.step();
    const double moved = 1.0 - p.detach().to(torch::kFloat64).mean().item<double>();
    if (stochastic) EXPECT_NEAR(moved, 1e-4, 3e-5);
    else EXPECT_EQ(moved, 0.0);
  }
}

// The fused backward pass steps each parameter where autograd writes its gradient, then frees the
// gradient: the same weights as backward then step (max_grad_norm 0), and with clipping each
// parameter clipped by its own norm.
TEST(FusedBackwardPass, StepsAsThePlainStepAndFreesTheGradients) {
  const OptimizerSettings settings =
      parseOptimizerSettings("Adafactor", {"scale_parameter=False", "relative_step=False", "warmup_init=False"});
  checkFusedBackwardPass(settings, 1);
  EXPECT_THROW(checkFusedBackwardPass(parseOptimizerSettings("", {}), 1), std::invalid_argument);
  EXPECT_THROW(checkFusedBackwardPass(settings, 2), std::invalid_argument);
  for (double maxNorm : {0.0, 0.5}) {
    torch::manual_seed(8);
    const torch::Tensor w0 = torch::randn({6, 5}), b0 = torch::randn({6}), w20 = torch::randn({2, 6});
    auto model = [](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, const torch::Tensor& w2) {
      return torch::matmul(torch::tanh(torch::matmul(x, w.t()) + b), w2.t()).pow(2).mean();
    };
    torch::Tensor w = w0.clone().set_requires_grad(true), b = b0.clone().set_requires_grad(true), w2 = w20.clone().set_requires_grad(true);
    torch::Tensor fw = w0.clone().set_requires_grad(true), fb = b0.clone().set_requires_grad(true),
                  fw2 = w20.clone().set_requires_grad(true);
    Adafactor plain({{"unet", 1e-2, {w, b, w2}}}, settings.adafactor);
    Adafactor fusedOpt({{"unet", 1e-2, {fw, fb, fw2}}}, settings.adafactor, /*persistentGradients=*/false);
    {
      FusedBackwardPass fused(fusedOpt, maxNorm);
      for (int step = 0; step < 3; ++step) {
        const torch::Tensor x = torch::randn({4, 5});
        model(x, w, b, w2).backward();
        if (maxNorm > 0)
          for (const torch::Tensor& p : {w, b, w2}) clipGradNorm({p}, maxNorm);
        plain.step();
        plain.zeroGrad();
        fusedOpt.advanceStep();
        model(x, fw, fb, fw2).backward();
        for (const torch::Tensor& p : {fw, fb, fw2}) EXPECT_FALSE(p.grad().defined()) << "a gradient was kept";
        EXPECT_TRUE(torch::equal(w, fw) && torch::equal(b, fb) && torch::equal(w2, fw2)) << "step " << step << ", max norm " << maxNorm;
      }
    }
    // Without the hooks, backward only accumulates.
    model(torch::randn({4, 5}), fw, fb, fw2).backward();
    EXPECT_TRUE(fw.grad().defined());
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
    LrScheduleOptions o{type, 10, 100, 3, 1.5, 1e-7, 1e-3};
    o.lastStep = 110;  // the device table covers the steps past the total too
    LrSchedule s(o);
    for (int64_t step = 0; step <= 110; ++step)
      ASSERT_NEAR(s.factor(torch::full({}, static_cast<float>(step))).item<double>(), s.factor(step), 1e-9)
          << static_cast<int>(type) << " step " << step;
  }
  EXPECT_EQ(resolveWarmupSteps(0.1, 1600), 160);
  EXPECT_EQ(resolveWarmupSteps(50, 1600), 50);
  EXPECT_THROW(LrSchedule({LrSchedulerType::Constant, 5, 100}), std::invalid_argument);
  EXPECT_EQ(parseLrSchedulerType("adafactor"), LrSchedulerType::Adafactor);
  EXPECT_THROW(parseLrSchedulerType("reduce_lr_on_plateau"), std::invalid_argument);
}

// The app's Optimizer list is exactly what this runner can run: the optimizer table's rows, each
// of which the runner builds (and no other).
TEST(OptimizerArgs, TheAppsListIsWhatTheRunnerRuns) {
  const sinter::OptionSpec* spec = nullptr;
  for (const sinter::OptionSpec& s : sinter::optionRegistry())
    if (std::string(s.key) == "optimizer_type") spec = &s;
  ASSERT_NE(spec, nullptr);
  std::vector<std::string> suggested = spec->suggestions, built = sinter::train::builtOptimizerNames(),
                           rows = sinter::optimizerNames();
  for (auto* names : {&suggested, &built, &rows}) std::sort(names->begin(), names->end());
  EXPECT_EQ(suggested, rows);
  EXPECT_EQ(built, rows);
  // Each row resolves to itself and names its class.
  for (const sinter::OptimizerRow& row : sinter::optimizerTable()) {
    const sinter::train::OptimizerSettings settings = sinter::train::parseOptimizerSettings(row.name, {});
    EXPECT_EQ(settings.type, row.name);
    EXPECT_EQ(settings.className(), row.className);
    EXPECT_EQ(settings.eightBitFrom().has_value(), row.eightBit) << row.name;
  }
}

// Tensors one after another in one buffer as one span (train/optim/adjacent_span.h): found only where
// they are, written through to every tensor, and the optimizer's moments and zeroing built on it.
namespace {

// Views of `buffer` shaped as `shapes`, one after another from its start.
std::vector<torch::Tensor> viewsOf(const torch::Tensor& buffer, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<torch::Tensor> out;
  int64_t offset = 0;
  for (const auto& shape : shapes) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    out.push_back(buffer.narrow(0, offset, n).view(shape));
    offset += n;
  }
  return out;
}

}  // namespace

TEST(AdjacentSpan, ViewsInOrderAreOneSpanWrittenThrough) {
  const torch::Tensor buffer = torch::arange(2 + 12 + 6 + 1, torch::kFloat32);
  const std::vector<torch::Tensor> parts = viewsOf(buffer.narrow(0, 2, 19), {{3, 4}, {6}, {1}});
  const torch::Tensor span = adjacentSpan(parts);
  ASSERT_TRUE(span.defined());
  EXPECT_EQ(span.dim(), 1);
  EXPECT_EQ(span.numel(), 19);
  EXPECT_EQ(span[0].item<float>(), 2.0f);  // starts where the first part does, not at the buffer's start
  span.fill_(-1.0f);
  for (const torch::Tensor& p : parts) EXPECT_TRUE(torch::all(p == -1.0f).item<bool>());
  EXPECT_EQ(buffer[0].item<float>(), 0.0f);  // nothing outside the parts
  EXPECT_EQ(buffer[1].item<float>(), 1.0f);
  EXPECT_EQ(asOneSpanIfAdjacent(parts).size(), 1u);
}

TEST(AdjacentSpan, AnythingElseIsNoSpan) {
  const torch::Tensor buffer = torch::zeros({40});
  const std::vector<torch::Tensor> parts = viewsOf(buffer, {{3, 4}, {6}, {5}});
  EXPECT_FALSE(adjacentSpan({parts[1], parts[0]}).defined());                          // out of order
  EXPECT_FALSE(adjacentSpan({parts[0], parts[2]}).defined());                          // a gap
  EXPECT_FALSE(adjacentSpan({parts[0], torch::zeros({6})}).defined());                 // another buffer
  EXPECT_FALSE(adjacentSpan({buffer.narrow(0, 0, 12).view({3, 4}).t()}).defined());    // not contiguous
  EXPECT_FALSE(adjacentSpan({parts[0], buffer.narrow(0, 12, 6).to(torch::kFloat64)}).defined());  // another dtype
  EXPECT_FALSE(adjacentSpan({}).defined());
  EXPECT_EQ(asOneSpanIfAdjacent({parts[1], parts[0]}).size(), 2u);
}

TEST(AdjacentSpan, ZerosAdjacentLieOneAfterAnother) {
  const std::vector<torch::Tensor> like{torch::ones({2, 3}, torch::kFloat64), torch::ones({4}, torch::kFloat64)};
  const std::vector<torch::Tensor> zeros = zerosAdjacent(like);
  ASSERT_EQ(zeros.size(), 2u);
  EXPECT_EQ(zeros[0].sizes(), like[0].sizes());
  EXPECT_EQ(zeros[1].sizes(), like[1].sizes());
  EXPECT_EQ(zeros[0].scalar_type(), torch::kFloat64);
  EXPECT_TRUE(adjacentSpan(zeros).defined());
  EXPECT_EQ(torch::cat({zeros[0].flatten(), zeros[1]}).abs().sum().item<double>(), 0.0);
}

// AdamW over parameters in one buffer trains them exactly as over the same parameters apart, and
// zeroGrad clears gradients that lie in one buffer.
TEST(AdjacentSpan, AdamWOverAdjacentParametersMatchesApart) {
  torch::manual_seed(5);
  const std::vector<std::vector<int64_t>> shapes{{8, 3}, {5}, {2, 7}};
  const torch::Tensor buffer = torch::randn({24 + 5 + 14}), gradBuffer = torch::zeros({24 + 5 + 14});
  std::vector<torch::Tensor> adjacent, apart;
  const std::vector<torch::Tensor> views = viewsOf(buffer, shapes), gradViews = viewsOf(gradBuffer, shapes);
  for (size_t i = 0; i < views.size(); ++i) {
    adjacent.push_back(views[i].detach().set_requires_grad(true));
    adjacent.back().mutable_grad() = gradViews[i];
    apart.push_back(views[i].detach().clone().set_requires_grad(true));
  }
  ASSERT_TRUE(adjacentSpan(adjacent).defined());
  AdamWHyperparameters hyper;
  hyper.weightDecay = 0.01;
  AdamW a({{"all", 1e-2, adjacent}}, hyper), b({{"all", 1e-2, apart}}, hyper);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < apart.size(); ++i) {
      const torch::Tensor g = torch::randn(apart[i].sizes());
      adjacent[i].mutable_grad().copy_(g);
      apart[i].mutable_grad().copy_(g);
    }
    a.step();
    b.step();
  }
  for (size_t i = 0; i < apart.size(); ++i) EXPECT_TRUE(torch::allclose(adjacent[i], apart[i], 1e-6, 1e-7)) << i;
  a.zeroGrad();
  EXPECT_EQ(gradBuffer.abs().sum().item<double>(), 0.0);
}
