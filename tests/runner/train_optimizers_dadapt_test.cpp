// Prodigy, DAdaptAdam, DAdaptation (DAdaptAdamPreprint) and DAdaptLion against float64 references
// written here from the published algorithms (prodigyopt.Prodigy, dadaptation's classes): weights,
// every state tensor and d over a dozen steps of fixed gradients in two parameter groups, each
// argument's effect, the fp16 skipped step, resume, and optimizer_args as sd-scripts takes them.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include "train/optim/dadaptation_optimizer.h"
#include "train/optim/fused_backward.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"

using namespace sinter::train;

namespace {

using Vec = std::vector<double>;

// A parameter of a reference: its values and its state by the optimizer's names, in float64.
struct RefParam {
  Vec p;
  std::map<std::string, Vec> state;
};

// What every reference shares: parameters by [group][index], the optimizer-wide values by name.
struct Reference {
  DAdaptationHyperparameters h;
  std::vector<std::vector<RefParam>> params;
  std::map<std::string, double> globals;
  virtual ~Reference() = default;
  // One step with gradients [group][index] and the groups' current learning rates.
  virtual void step(const std::vector<std::vector<Vec>>& grads, const std::vector<double>& lrs) = 0;
};

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double l1(const Vec& a) {
  double s = 0;
  for (double x : a) s += std::abs(x);
  return s;
}

// prodigyopt.Prodigy.step.
struct ReferenceProdigy : Reference {
  void step(const std::vector<std::vector<Vec>>& gradsIn, const std::vector<double>& lrs) override {
    std::vector<std::vector<Vec>> grads = gradsIn;
    const double beta1 = h.beta1, beta2 = h.beta2, beta3 = h.beta3.value_or(std::sqrt(beta2));
    double& d = globals["d"];
    double& dMax = globals["d_max"];
    const double k = globals["k"];
    const double lr = *std::max_element(lrs.begin(), lrs.end());
    const double biasCorrection = h.useBiasCorrection ? std::sqrt(1 - std::pow(beta2, k + 1)) / (1 - std::pow(beta1, k + 1)) : 1.0;
    const double dlr = d * lr * biasCorrection;
    const double dNumerator = globals["d_numerator"] * beta3;
    double deltaNumerator = 0, dDenom = 0;
    for (size_t g = 0; g < params.size(); ++g)
      for (size_t i = 0; i < params[g].size(); ++i) {
        RefParam& rp = params[g][i];
        Vec& grad = grads[g][i];
        if (h.weightDecay != 0 && !h.decouple)
          for (size_t j = 0; j < grad.size(); ++j) grad[j] += h.weightDecay * rp.p[j];
        if (lrs[g] <= 0) continue;
        Vec &v = rp.state["exp_avg_sq"], &s = rp.state["s"], &p0 = rp.state["p0"];
        for (size_t j = 0, n = 0; j < grad.size(); j += h.sliceP, ++n) deltaNumerator += (d / h.d0) * dlr * grad[j] * (p0[n] - rp.p[j]);
        for (size_t j = 0; j < grad.size(); ++j) {
          if (beta1 > 0) rp.state["exp_avg"][j] = beta1 * rp.state["exp_avg"][j] + d * (1 - beta1) * grad[j];
          v[j] = beta2 * v[j] + d * d * (1 - beta2) * grad[j] * grad[j];
        }
        for (size_t j = 0, n = 0; j < grad.size(); j += h.sliceP, ++n)
          s[n] = beta3 * s[n] + (d / h.d0) * (h.safeguardWarmup ? d : dlr) * grad[j];
        dDenom += l1(s);
      }
    if (dDenom == 0) return;
    const double globalNumerator = dNumerator + deltaNumerator;
    if (lr > 0) {
      const double dHat = h.dCoef * globalNumerator / dDenom;
      if (d == h.d0) d = std::max(d, dHat);
      dMax = std::max(dMax, dHat);
      d = std::min(dMax, d * h.growthRate);
    }
    globals["d_numerator"] = globalNumerator;
    for (size_t g = 0; g < params.size(); ++g)
      for (size_t i = 0; i < params[g].size(); ++i) {
        RefParam& rp = params[g][i];
        for (size_t j = 0; j < rp.p.size(); ++j) {
          const double denom = std::sqrt(rp.state["exp_avg_sq"][j]) + d * h.eps;
          if (h.weightDecay != 0 && h.decouple) rp.p[j] += rp.p[j] * (-h.weightDecay * dlr);
          if (beta1 > 0) rp.p[j] -= dlr * rp.state["exp_avg"][j] / denom;
          else rp.p[j] -= dlr * d * grads[g][i][j] / denom;
        }
      }
    globals["k"] = k + 1;
  }
};

// dadaptation.DAdaptAdam.step (layer_scale 1).
struct ReferenceDAdaptAdam : Reference {
  void step(const std::vector<std::vector<Vec>>& gradsIn, const std::vector<double>& lrs) override {
    std::vector<std::vector<Vec>> grads = gradsIn;
    const double beta1 = h.beta1, beta2 = h.beta2, sqrtBeta2 = std::sqrt(beta2);
    double& d = globals["d"];
    const double k = globals["k"];
    const double lr = *std::max_element(lrs.begin(), lrs.end());
    const double biasCorrection = h.useBiasCorrection ? std::sqrt(1 - std::pow(beta2, k + 1)) / (1 - std::pow(beta1, k + 1)) : 1.0;
    const double dlr = d * lr * biasCorrection;
    double numeratorAcum = 0, skL1 = 0;
    for (size_t g = 0; g < params.size(); ++g)
      for (size_t i = 0; i < params[g].size(); ++i) {
        RefParam& rp = params[g][i];
        Vec& grad = grads[g][i];
        if (h.weightDecay != 0 && !h.decouple)
          for (size_t j = 0; j < grad.size(); ++j) grad[j] += h.weightDecay * rp.p[j];
        if (lrs[g] <= 0) continue;
        Vec &m = rp.state["exp_avg"], &v = rp.state["exp_avg_sq"], &s = rp.state["s"];
        for (size_t j = 0; j < grad.size(); ++j) numeratorAcum += dlr * grad[j] * s[j] / (std::sqrt(v[j]) + h.eps);
        for (size_t j = 0; j < grad.size(); ++j) {
          m[j] = beta1 * m[j] + dlr * (1 - beta1) * grad[j];
          v[j] = beta2 * v[j] + (1 - beta2) * grad[j] * grad[j];
          s[j] = sqrtBeta2 * s[j] + dlr * (1 - sqrtBeta2) * grad[j];
        }
        skL1 += l1(s);
      }
    if (skL1 == 0) return;
    const double globalNumerator = sqrtBeta2 * globals["numerator_weighted"] + (1 - sqrtBeta2) * numeratorAcum;
    if (lr > 0) {
      const double dHat = globalNumerator / ((1 - sqrtBeta2) * skL1);
      d = std::max(d, std::min(dHat, d * h.growthRate));
    }
    globals["numerator_weighted"] = globalNumerator;
    for (auto& group : params)
      for (RefParam& rp : group)
        for (size_t j = 0; j < rp.p.size(); ++j) {
          const double denom = std::sqrt(rp.state["exp_avg_sq"][j]) + h.eps;
          if (h.weightDecay != 0 && h.decouple) rp.p[j] += rp.p[j] * (-h.weightDecay * dlr);
          rp.p[j] -= rp.state["exp_avg"][j] / denom;
        }
    globals["k"] = k + 1;
  }
};

// dadaptation.experimental.DAdaptAdamPreprint.step.
struct ReferenceDAdaptAdamPreprint : Reference {
  void step(const std::vector<std::vector<Vec>>& gradsIn, const std::vector<double>& lrs) override {
    std::vector<std::vector<Vec>> grads = gradsIn;
    const double beta1 = h.beta1, beta2 = h.beta2;
    double& d = globals["d"];
    const double lr = *std::max_element(lrs.begin(), lrs.end());
    const double dlr = d * lr;
    double gSq = 0, sksqWeighted = 0, skL1 = 0;
    for (size_t g = 0; g < params.size(); ++g)
      for (size_t i = 0; i < params[g].size(); ++i) {
        RefParam& rp = params[g][i];
        Vec& grad = grads[g][i];
        if (h.weightDecay != 0 && !h.decouple)
          for (size_t j = 0; j < grad.size(); ++j) grad[j] += h.weightDecay * rp.p[j];
        if (lrs[g] <= 0) continue;
        Vec &m = rp.state["exp_avg"], &v = rp.state["exp_avg_sq"], &s = rp.state["s"];
        for (size_t j = 0; j < grad.size(); ++j) {
          m[j] = beta1 * m[j] + dlr * (1 - beta1) * grad[j];
          v[j] = beta2 * v[j] + (1 - beta2) * grad[j] * grad[j];
          const double denom = std::sqrt(v[j]) + h.eps;
          gSq += grad[j] * grad[j] / denom;
          s[j] = beta2 * s[j] + dlr * (1 - beta2) * grad[j];
          sksqWeighted += s[j] * s[j] / denom;
        }
        skL1 += l1(s);
      }
    const double gsqWeighted = beta2 * globals["gsq_weighted"] + gSq * dlr * dlr * (1 - beta2);
    if (skL1 == 0) return;
    if (lr > 0) {
      const double dHat = (sksqWeighted / (1 - beta2) - gsqWeighted) / skL1;
      d = std::max(d, std::min(dHat, d * h.growthRate));
    }
    globals["gsq_weighted"] = gsqWeighted;
    for (size_t g = 0; g < params.size(); ++g)
      for (RefParam& rp : params[g])
        for (size_t j = 0; j < rp.p.size(); ++j) {
          const double denom = std::sqrt(rp.state["exp_avg_sq"][j]) + h.eps;
          if (h.weightDecay != 0 && h.decouple && lrs[g] > 0) rp.p[j] += rp.p[j] * (-h.weightDecay * dlr);
          rp.p[j] -= rp.state["exp_avg"][j] / denom;
        }
  }
};

// dadaptation.DAdaptLion.step.
struct ReferenceDAdaptLion : Reference {
  void step(const std::vector<std::vector<Vec>>& grads, const std::vector<double>& lrs) override {
    const double beta1 = h.beta1, beta2 = h.beta2, sqrtBeta2 = std::sqrt(beta2);
    double& d = globals["d"];
    const double lr = *std::max_element(lrs.begin(), lrs.end());
    const double dlr = d * lr;
    double numeratorAcum = 0, skL1 = 0;
    for (size_t g = 0; g < params.size(); ++g)
      for (size_t i = 0; i < params[g].size(); ++i) {
        RefParam& rp = params[g][i];
        const Vec& grad = grads[g][i];
        Vec &m = rp.state["exp_avg"], &s = rp.state["s"];
        for (size_t j = 0; j < grad.size(); ++j) {
          rp.p[j] *= 1 - dlr * h.weightDecay;
          const double mixed = beta1 * m[j] + (1 - beta1) * grad[j];
          const double update = mixed > 0 ? 1.0 : (mixed < 0 ? -1.0 : 0.0);
          rp.p[j] -= dlr * update;
          m[j] = beta2 * m[j] + (1 - beta2) * dlr * grad[j];
          numeratorAcum += dlr * update * s[j];
          s[j] = sqrtBeta2 * s[j] + (1 - sqrtBeta2) * dlr * update;
        }
        skL1 += l1(s);
      }
    if (skL1 == 0) return;
    const double globalNumerator = sqrtBeta2 * globals["numerator_weighted"] + (1 - sqrtBeta2) * numeratorAcum;
    if (lr > 0) d = std::max(d, globalNumerator / ((1 - sqrtBeta2) * skL1));
    globals["numerator_weighted"] = globalNumerator;
  }
};

Vec toVec(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat64).contiguous().flatten();
  return Vec(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// Small weights, as a LoRA's are: Prodigy's estimate divides sums of p0 - p, which float32 holds to
// the weights' ulp, against first steps of d0 = 1e-6; weights of 1e-3 keep that far below the tolerance.
constexpr double kWeightScale = 1e-3;

// Two groups as sd-scripts makes them for a LoRA (text encoder, U-Net), with a weight that starts
// at zero as a LoRA's up matrix does.
struct Problem {
  std::vector<std::vector<std::vector<int64_t>>> shapes = {{{4, 3}, {5}}, {{2, 3, 2}, {7}}};
  std::vector<double> lrs = {1.0, 1.0};
  std::vector<torch::Tensor> initial;  // by flat index
  std::vector<torch::Tensor> directions;  // the gradients' steady part
  explicit Problem(uint64_t seed = 21) {
    torch::manual_seed(seed);
    for (const auto& group : shapes)
      for (const auto& shape : group) {
        initial.push_back(torch::randn(shape) * kWeightScale);
        directions.push_back(torch::randn(shape));
      }
    initial[1].zero_();  // all zero, like lora_up
  }
  // The gradient of parameter `flat` at step t: fixed values, the same for every run.
  torch::Tensor gradient(size_t flat, int t) const {
    torch::Generator gen = at::detail::createCPUGenerator(1000 + 17 * t + flat);
    return directions[flat] + 0.5 * torch::randn(directions[flat].sizes(), gen);
  }
};

std::vector<OptimizerGroup> makeGroups(const Problem& problem, torch::ScalarType dtype = torch::kFloat32) {
  std::vector<OptimizerGroup> groups;
  size_t flat = 0;
  for (size_t g = 0; g < problem.shapes.size(); ++g) {
    OptimizerGroup group{g == 0 ? "textencoder" : "unet", problem.lrs[g], {}};
    for (size_t i = 0; i < problem.shapes[g].size(); ++i)
      group.params.push_back(problem.initial[flat++].to(dtype).clone().set_requires_grad(true));
    groups.push_back(std::move(group));
  }
  return groups;
}

std::unique_ptr<Reference> makeReference(const OptimizerSettings& settings, const Problem& problem) {
  std::unique_ptr<Reference> ref;
  const std::string& t = settings.type;
  if (t == "Prodigy") ref = std::make_unique<ReferenceProdigy>();
  else if (t == "DAdaptAdam") ref = std::make_unique<ReferenceDAdaptAdam>();
  else if (t == "DAdaptLion") ref = std::make_unique<ReferenceDAdaptLion>();
  else ref = std::make_unique<ReferenceDAdaptAdamPreprint>();
  ref->h = settings.dadaptation;
  const DAdaptationHyperparameters& h = ref->h;
  ref->globals["d"] = h.d0;
  if (t == "Prodigy") ref->globals["d_max"] = h.d0, ref->globals["d_numerator"] = 0, ref->globals["k"] = 0;
  else if (t == "DAdaptAdam") ref->globals["numerator_weighted"] = 0, ref->globals["k"] = 0;
  else if (t == "DAdaptLion") ref->globals["numerator_weighted"] = 0;
  else ref->globals["gsq_weighted"] = 0;
  size_t flat = 0;
  for (const auto& group : problem.shapes) {
    ref->params.emplace_back();
    for (size_t i = 0; i < group.size(); ++i) {
      RefParam rp{toVec(problem.initial[flat++]), {}};
      const size_t n = rp.p.size();
      rp.state["exp_avg"] = Vec(n, 0.0);
      if (t != "DAdaptLion") rp.state["exp_avg_sq"] = Vec(n, 0.0);
      if (t == "Prodigy") {
        if (h.beta1 == 0) rp.state.erase("exp_avg");
        Vec p0;
        for (size_t j = 0; j < n; j += h.sliceP) p0.push_back(rp.p[j]);
        rp.state["s"] = Vec(p0.size(), 0.0);
        rp.state["p0"] = p0;
      } else {
        rp.state["s"] = Vec(n, 0.0);
      }
      ref->params.back().push_back(std::move(rp));
    }
  }
  return ref;
}

// |actual - expected| within `tol` of the largest expected magnitude (float32 arithmetic against float64).
// `floor` is an absolute allowance added.
::testing::AssertionResult near(const Vec& actual, const Vec& expected, double tol, double floor = 0) {
  if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "sizes " << actual.size() << " vs " << expected.size();
  double scale = 0;
  for (double e : expected) scale = std::max(scale, std::abs(e));
  scale += floor / tol;
  for (size_t j = 0; j < actual.size(); ++j)
    if (!(std::abs(actual[j] - expected[j]) <= tol * scale))
      return ::testing::AssertionFailure() << "entry " << j << ": " << actual[j] << " vs " << expected[j] << " (scale " << scale << ")";
  return ::testing::AssertionSuccess();
}

// The learning-rate factor of step t: 0 first (a warm-up's first step, when these optimizers do
// nothing), then half, then full.
double lrFactor(int t) { return t == 0 ? 0.0 : (t == 1 ? 0.5 : 1.0); }

constexpr int kSteps = 12;

Vec movement(const Vec& now, const Vec& start) {
  Vec out(now.size());
  for (size_t j = 0; j < now.size(); ++j) out[j] = now[j] - start[j];
  return out;
}

// What float32 weights' rounding adds over a run: 8 ulps of the largest weight (each step rounds
// the weights to float32 once; the reference keeps float64).
double weightRounding(const Vec& weights) {
  double m = 0;
  for (double x : weights) m = std::max(m, std::abs(x));
  return std::ldexp(m, -20);
}

int failures() { return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count(); }
// float32's 1.2e-7 per rounding over a dozen steps, each dozens of roundings deep, and Prodigy's d
// estimated from differences of nearby weights (within 1e-5 of the float64 one here).
constexpr double kTolerance = 1e-4;

// Runs `type` with `items` against its reference; returns every parameter's final values.
std::vector<Vec> expectMatchesReference(const std::string& type, const std::vector<std::string>& items, Problem problem = Problem()) {
  const OptimizerSettings settings = parseOptimizerSettings(type, items);
  std::unique_ptr<Optimizer> opt = makeOptimizer(settings, makeGroups(problem), /*fusedBackwardPass=*/false);
  std::unique_ptr<Reference> ref = makeReference(settings, problem);
  const int failuresBefore = failures();
  std::vector<std::vector<Vec>> start;
  for (const auto& group : ref->params) {
    start.emplace_back();
    for (const RefParam& rp : group) start.back().push_back(rp.p);
  }
  for (int t = 0; t < kSteps; ++t) {
    std::vector<std::vector<Vec>> grads;
    std::vector<double> lrs;
    size_t flat = 0;
    for (size_t g = 0; g < opt->groupCount(); ++g) {
      grads.emplace_back();
      for (torch::Tensor p : opt->group(g).params) {
        const torch::Tensor grad = problem.gradient(flat++, t);
        p.mutable_grad().copy_(grad);
        grads.back().push_back(toVec(grad));
      }
      lrs.push_back(problem.lrs[g] * lrFactor(t));
      opt->lr(g).fill_(lrs.back());
    }
    opt->step();
    ref->step(grads, lrs);
    std::map<std::string, torch::Tensor> state;
    for (const auto& [k, v] : opt->stateTensors()) state[k] = v;
    size_t checked = 0;
    for (const auto& [name, value] : ref->globals) {
      EXPECT_TRUE(state.count(name)) << type << ": no '" << name << "'";
      if (!state.count(name)) continue;
      const double actual = state[name].item<double>();
      EXPECT_NEAR(actual, value, kTolerance * std::abs(value) + 1e-300) << type << " " << name << ", step " << t;
      ++checked;
    }
    for (size_t g = 0; g < ref->params.size(); ++g)
      for (size_t i = 0; i < ref->params[g].size(); ++i) {
        const RefParam& rp = ref->params[g][i];
        EXPECT_TRUE(near(movement(toVec(opt->group(g).params[i]), start[g][i]), movement(rp.p, start[g][i]), kTolerance,
                         weightRounding(rp.p)))
            << type << " weights " << g << "." << i << ", step " << t;
        for (const auto& [name, values] : rp.state) {
          const std::string key = name + "." + std::to_string(g) + "." + std::to_string(i);
          EXPECT_TRUE(state.count(key)) << type << ": no '" << key << "'";
          if (!state.count(key)) continue;
          EXPECT_TRUE(near(toVec(state[key]), values, kTolerance)) << type << " " << key << ", step " << t;
          ++checked;
        }
      }
    // Nothing else is kept: the step count and learning rates besides what was compared.
    EXPECT_EQ(state.size(), checked + 1 + opt->groupCount()) << type;
    if (failures() > failuresBefore) break;  // one step's report is enough
  }
  EXPECT_EQ(opt->stepCount().item<float>(), static_cast<float>(kSteps));
  std::vector<Vec> weights;
  for (const torch::Tensor& p : opt->parameters()) weights.push_back(toVec(p));
  return weights;
}

// The largest difference between two runs' weights.
double difference(const std::vector<Vec>& a, const std::vector<Vec>& b) {
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[i].size(); ++j) diff = std::max(diff, std::abs(a[i][j] - b[i][j]));
  return diff;
}

std::vector<Vec> initialWeights(const Problem& problem) {
  std::vector<Vec> out;
  for (const torch::Tensor& t : problem.initial) out.push_back(toVec(t));
  return out;
}

double largestWeight(const std::vector<Vec>& w) {
  double m = 0;
  for (const Vec& v : w)
    for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// Each argument: the step follows the reference, and the weights differ from the defaults' by a
// good part of how far they moved, far beyond the comparison's tolerance (the argument is not ignored).
void expectEachArgumentMatters(const std::string& type, const std::vector<std::vector<std::string>>& variants) {
  const Problem problem;
  const std::vector<Vec> defaults = expectMatchesReference(type, {});
  const double moved = difference(defaults, initialWeights(problem));
  for (const auto& items : variants) {
    SCOPED_TRACE(type + " " + items.back());
    const std::vector<Vec> changed = expectMatchesReference(type, items);
    EXPECT_GT(difference(changed, defaults), 0.02 * moved);
    EXPECT_GT(difference(changed, defaults), 20 * (kTolerance * moved + std::ldexp(largestWeight(defaults), -20)));
  }
}

}  // namespace

TEST(Prodigy, MatchesTheReferenceInTwoGroups) {
  const std::vector<Vec> w = expectMatchesReference("Prodigy", {});
  // d has grown from d0: the weights moved by far more than a dozen steps of d0 * lr would.
  EXPECT_GT(difference(w, initialWeights(Problem())), 100 * kSteps * 1e-6);
}

TEST(Prodigy, EachArgumentChangesTheStepAsTheReferenceSays) {
  expectEachArgumentMatters("Prodigy", {{"d_coef=2"},
                                        {"growth_rate=1.02"},
                                        {"use_bias_correction=True"},
                                        {"safeguard_warmup=True"},
                                        {"weight_decay=20"},
                                        {"decouple=False", "weight_decay=20"},
                                        {"betas=0.8,0.99"},
                                        {"betas=(0.0, 0.999)"},
                                        {"beta3=0.9"},
                                        {"eps=1e-3"},
                                        {"d0=1e-4"},
                                        {"slice_p=3"}});
}

TEST(DAdaptAdam, MatchesTheReferenceAndEachArgumentMatters) {
  expectEachArgumentMatters("DAdaptAdam", {{"growth_rate=1.02"},
                                           {"use_bias_correction=True"},
                                           {"weight_decay=2"},
                                           {"decouple=True", "weight_decay=2"},
                                           {"betas=0.8,0.99"},
                                           {"eps=1e-3"},
                                           {"d0=1e-4"}});
}

TEST(DAdaptAdamPreprint, MatchesTheReferenceAndEachArgumentMatters) {
  expectEachArgumentMatters("DAdaptation", {{"growth_rate=1.02"},
                                            {"weight_decay=0.5"},
                                            {"decouple=True", "weight_decay=0.5"},
                                            {"betas=0.8,0.99"},
                                            {"eps=1e-3"},
                                            {"d0=1e-4"}});
  expectMatchesReference("DAdaptAdamPreprint", {"betas=0.9,0.99"});
}

TEST(DAdaptLion, MatchesTheReferenceAndEachArgumentMatters) {
  expectEachArgumentMatters("DAdaptLion", {{"betas=0.8,0.9"}, {"weight_decay=50"}, {"d0=1e-4"}});
}

// A group with lr 0 takes no part in the estimate nor the moments, as in the Python optimizers
// (which still step it with the shared d*lr).
TEST(DAdaptation, AGroupWithLrZeroFollowsThePythonOptimizers) {
  Problem problem;
  problem.lrs = {0.0, 1.0};
  for (const char* type : {"Prodigy", "DAdaptAdam", "DAdaptation", "DAdaptLion"}) {
    SCOPED_TRACE(type);
    expectMatchesReference(type, {"weight_decay=0.25"}, problem);
  }
  expectMatchesReference("Prodigy", {"betas=0,0.999"}, problem);
}

TEST(DAdaptation, GroupsMustShareTheirLearningRate) {
  Problem problem;
  problem.lrs = {0.5, 1.0};
  for (const char* type : {"Prodigy", "DAdaptAdam", "DAdaptation", "DAdaptLion"}) {
    try {
      makeOptimizer(parseOptimizerSettings(type, {}), makeGroups(problem), false);
      ADD_FAILURE() << type << " took two learning rates";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("textencoder 0.5, unet 1.0"), std::string::npos) << e.what();
    }
  }
  problem.lrs = {0.0, 0.0};
  EXPECT_THROW(makeOptimizer(parseOptimizerSettings("Prodigy", {}), makeGroups(problem), false), std::invalid_argument);
}

// bf16 weights: the state has the weights' dtype (as in the Python optimizers), the arithmetic is
// float32, and the weights move as the float32 run's do, to bf16's 8 bits (d is estimated from
// weights and sums held in bf16, so it drifts a little).
TEST(DAdaptation, Bf16WeightsKeepBf16StateAndFollowTheFloat32Run) {
  for (const char* type : {"Prodigy", "DAdaptAdam", "DAdaptation", "DAdaptLion"}) {
    SCOPED_TRACE(type);
    Problem problem;
    // DAdaptLion's d grows slowly: from d0 = 1e-6 its steps stay below bf16's resolution of these weights.
    const OptimizerSettings settings = parseOptimizerSettings(type, {std::string(type) == "DAdaptLion" ? "d0=1e-4" : ""});
    std::unique_ptr<Optimizer> full = makeOptimizer(settings, makeGroups(problem), false);
    std::unique_ptr<Optimizer> half = makeOptimizer(settings, makeGroups(problem, torch::kBFloat16), false);
    for (int t = 0; t < kSteps; ++t) {
      const std::vector<torch::Tensor> a = full->parameters(), b = half->parameters();
      for (size_t k = 0; k < a.size(); ++k) {
        a[k].mutable_grad().copy_(problem.gradient(k, t));
        b[k].mutable_grad().copy_(problem.gradient(k, t));
      }
      full->step();
      half->step();
    }
    std::map<std::string, torch::Tensor> state;
    for (const auto& [k, v] : half->stateTensors()) state[k] = v;
    EXPECT_EQ(state.at("exp_avg.1.0").scalar_type(), torch::kBFloat16);
    EXPECT_EQ(state.at("d").scalar_type(), torch::kFloat64);
    EXPECT_GT(state.at("d").item<double>(), 1e-6);
    const std::vector<torch::Tensor> a = full->parameters(), b = half->parameters();
    for (size_t k = 0; k < a.size(); ++k) {
      const torch::Tensor start = problem.initial[k];
      const torch::Tensor movedFull = a[k].detach() - start, movedHalf = b[k].detach().to(torch::kFloat32) - start;
      const double moved = movedFull.abs().max().item<double>();
      EXPECT_LT((movedHalf - movedFull).abs().max().item<double>(), 0.1 * moved + std::ldexp(a[k].abs().max().item<double>(), -8))
          << "weight " << k << " moved " << moved;
    }
  }
}

// fp16's overflowed step changes nothing (weights, every state, d, the step count); a step with
// found_inf 0 is the plain step, bit for bit.
TEST(DAdaptation, AnOverflowedStepChangesNothing) {
  for (const char* type : {"Prodigy", "DAdaptAdam", "DAdaptation", "DAdaptLion"}) {
    SCOPED_TRACE(type);
    Problem problem;
    const OptimizerSettings settings = parseOptimizerSettings(type, {"weight_decay=0.1"});
    std::unique_ptr<Optimizer> a = makeOptimizer(settings, makeGroups(problem), false);
    std::unique_ptr<Optimizer> b = makeOptimizer(settings, makeGroups(problem), false);
    auto feed = [&](Optimizer& opt, int t) {
      const std::vector<torch::Tensor> ps = opt.parameters();
      for (size_t k = 0; k < ps.size(); ++k) ps[k].mutable_grad().copy_(problem.gradient(k, t));
    };
    for (int t = 0; t < 4; ++t) {
      feed(*a, t), feed(*b, t);
      a->step();
      b->step(torch::zeros({1}));
    }
    const auto before = a->stateTensors();
    std::vector<torch::Tensor> weights;
    for (const torch::Tensor& p : a->parameters()) weights.push_back(p.detach().clone());
    for (torch::Tensor p : a->parameters()) p.mutable_grad().fill_(std::numeric_limits<float>::infinity());
    a->parameters()[2].mutable_grad()[0] = std::numeric_limits<float>::quiet_NaN();
    a->step(torch::ones({1}));
    const auto after = a->stateTensors();
    ASSERT_EQ(before.size(), after.size());
    for (size_t k = 0; k < before.size(); ++k) EXPECT_TRUE(torch::equal(before[k].second, after[k].second)) << before[k].first;
    for (size_t k = 0; k < weights.size(); ++k) EXPECT_TRUE(torch::equal(weights[k], a->parameters()[k])) << k;
    // Both go on alike.
    feed(*a, 4), feed(*b, 4);
    a->step();
    b->step(torch::zeros({1}));
    for (size_t k = 0; k < weights.size(); ++k) EXPECT_TRUE(torch::equal(a->parameters()[k], b->parameters()[k])) << k;
  }
}

// Resume: N/2 steps, the state through save and load into a fresh optimizer, N/2 more: the same
// weights and state as N straight, bit for bit.
TEST(DAdaptation, ResumeContinuesBitForBit) {
  for (const char* type : {"Prodigy", "DAdaptAdam", "DAdaptation", "DAdaptLion"}) {
    SCOPED_TRACE(type);
    Problem problem;
    const OptimizerSettings settings = parseOptimizerSettings(type, {"weight_decay=0.1", "d0=1e-5"});
    auto feed = [&](Optimizer& opt, int t) {
      const std::vector<torch::Tensor> ps = opt.parameters();
      for (size_t k = 0; k < ps.size(); ++k) ps[k].mutable_grad().copy_(problem.gradient(k, t));
    };
    std::unique_ptr<Optimizer> straight = makeOptimizer(settings, makeGroups(problem), false);
    for (int t = 0; t < 10; ++t) feed(*straight, t), straight->step();

    std::unique_ptr<Optimizer> first = makeOptimizer(settings, makeGroups(problem), false);
    for (int t = 0; t < 5; ++t) feed(*first, t), first->step();
    const auto saved = first->stateTensors();
    std::vector<OptimizerGroup> groups = makeGroups(problem);
    size_t flat = 0;
    for (OptimizerGroup& g : groups)
      for (torch::Tensor& p : g.params) p.detach().copy_(first->parameters()[flat++]);
    std::unique_ptr<Optimizer> resumed = makeOptimizer(settings, std::move(groups), false);
    resumed->loadStateTensors(std::map<std::string, torch::Tensor>(saved.begin(), saved.end()));
    for (int t = 5; t < 10; ++t) feed(*resumed, t), resumed->step();

    for (size_t k = 0; k < straight->parameters().size(); ++k)
      EXPECT_TRUE(torch::equal(straight->parameters()[k], resumed->parameters()[k])) << k;
    const auto a = straight->stateTensors(), b = resumed->stateTensors();
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(a[k].first == b[k].first && torch::equal(a[k].second, b[k].second)) << a[k].first;
  }
  // Another optimizer's state is refused.
  Problem problem;
  std::unique_ptr<Optimizer> prodigy = makeOptimizer(parseOptimizerSettings("Prodigy", {}), makeGroups(problem), false);
  std::unique_ptr<Optimizer> adam = makeOptimizer(parseOptimizerSettings("DAdaptAdam", {}), makeGroups(problem), false);
  const auto state = prodigy->stateTensors();
  EXPECT_THROW(adam->loadStateTensors(std::map<std::string, torch::Tensor>(state.begin(), state.end())), std::invalid_argument);
}

TEST(DAdaptation, NoPerParameterStepForTheFusedBackwardPass) {
  for (const char* type : {"Prodigy", "DAdaptAdam", "DAdaptation", "DAdaptLion"}) {
    const OptimizerSettings settings = parseOptimizerSettings(type, {});
    try {
      checkFusedBackwardPass(settings, 1);
      ADD_FAILURE() << type;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("Adafactor"), std::string::npos) << e.what();
    }
    std::unique_ptr<Optimizer> opt = makeOptimizer(settings, makeGroups(Problem()), false);
    try {
      opt->stepParameter(0, 0);
      ADD_FAILURE() << type;
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(settings.type + " has no per-parameter step"), std::string::npos) << e.what();
    }
  }
}

TEST(DAdaptationArgs, AsSdScriptsPassesAndNamesThem) {
  const OptimizerSettings prodigy =
      parseOptimizerSettings("prodigy", {"decouple=True", "weight_decay=0.01", "d_coef=2", "use_bias_correction=True",
                                         "safeguard_warmup=True betas=0.9,0.99", "growth_rate=1.02", "d0=1e-6", "slice_p=11"});
  EXPECT_EQ(prodigy.type, "Prodigy");
  EXPECT_EQ(prodigy.className() + "(" + prodigy.pythonText + ")",
            "prodigyopt.prodigy.Prodigy(decouple=True,weight_decay=0.01,d_coef=2,use_bias_correction=True,safeguard_warmup=True,"
            "betas=(0.9, 0.99),growth_rate=1.02,d0=1e-06,slice_p=11)");
  const DAdaptationHyperparameters& h = prodigy.dadaptation;
  EXPECT_TRUE(h.decouple && h.useBiasCorrection && h.safeguardWarmup);
  EXPECT_DOUBLE_EQ(h.weightDecay, 0.01);
  EXPECT_DOUBLE_EQ(h.dCoef, 2.0);
  EXPECT_DOUBLE_EQ(h.beta2, 0.99);
  EXPECT_DOUBLE_EQ(h.growthRate, 1.02);
  EXPECT_EQ(h.sliceP, 11);
  // Each class's defaults, and ss_optimizer's class.
  const DAdaptationHyperparameters p = parseOptimizerSettings("Prodigy", {}).dadaptation;
  EXPECT_TRUE(p.decouple);
  EXPECT_FALSE(p.beta3.has_value());
  EXPECT_DOUBLE_EQ(p.d0, 1e-6);
  EXPECT_TRUE(std::isinf(p.growthRate));
  EXPECT_FALSE(parseOptimizerSettings("DAdaptAdam", {}).dadaptation.decouple);
  EXPECT_DOUBLE_EQ(parseOptimizerSettings("DAdaptLion", {}).dadaptation.beta2, 0.99);
  EXPECT_EQ(parseOptimizerSettings("Prodigy", {}).pythonText, "");
  EXPECT_EQ(parseOptimizerSettings("DAdaptAdam", {"decouple=True"}).className(), "dadaptation.dadapt_adam.DAdaptAdam");
  EXPECT_EQ(parseOptimizerSettings("DAdaptation", {}).className(), "dadaptation.experimental.dadapt_adam_preprint.DAdaptAdamPreprint");
  EXPECT_EQ(parseOptimizerSettings("dadaptadampreprint", {}).className(), "dadaptation.experimental.dadapt_adam_preprint.DAdaptAdamPreprint");
  EXPECT_EQ(parseOptimizerSettings("DAdaptLion", {}).className(), "dadaptation.dadapt_lion.DAdaptLion");
  EXPECT_EQ(parseOptimizerSettings("DAdaptAdam", {"betas=[0.9, 0.99]", "log_every=10", "eps=1e-08"}).pythonText,
            "betas=[0.9, 0.99],log_every=10,eps=1e-08");
  EXPECT_EQ(parseOptimizerSettings("Prodigy", {"beta3=None", "weight_decay=0", "weight_decay=0.1"}).pythonText,
            "beta3=None,weight_decay=0.1");
  for (const char* type : {"Prodigy", "DAdaptation", "DAdaptAdam", "DAdaptAdamPreprint", "DAdaptLion"}) {
    const std::vector<std::string> available = sinter::optimizerNames();
    EXPECT_NE(std::find(available.begin(), available.end(), type), available.end()) << type;
  }
}

TEST(DAdaptationArgs, BadArgumentsAreRefusedNamingTheKey) {
  struct Case {
    std::string type, item, says;
  };
  const std::vector<Case> cases = {
      {"Prodigy", "d_coef=abc", "d_coef"},          {"Prodigy", "d_coef=0", "d_coef"},
      {"Prodigy", "growth_rate=inf", "growth_rate"}, {"Prodigy", "slice_p=0", "slice_p"},
      {"Prodigy", "slice_p=1.5", "slice_p"},         {"Prodigy", "betas=0.9", "betas"},
      {"Prodigy", "betas=1.0,0.9", "betas"},         {"Prodigy", "beta3=1.5", "beta3"},
      {"Prodigy", "eps=0", "eps"},                   {"Prodigy", "d0=-1", "d0"},
      {"Prodigy", "decouple=maybe", "decouple"},     {"Prodigy", "fsdp_in_use=True", "fsdp_in_use"},
      {"Prodigy", "log_every=10", "log_every"},      {"Prodigy", "lr=1.0", "'lr'"},
      {"DAdaptAdam", "d_coef=2", "d_coef"},          {"DAdaptAdam", "safeguard_warmup=True", "safeguard_warmup"},
      {"DAdaptAdam", "log_every=-1", "log_every"},   {"DAdaptation", "use_bias_correction=True", "use_bias_correction"},
      {"DAdaptLion", "eps=1e-8", "eps"},             {"DAdaptLion", "growth_rate=1.02", "growth_rate"},
      {"Prodigy", "weight_decay", "weight_decay"},
  };
  for (const Case& c : cases) {
    try {
      parseOptimizerSettings(c.type, {c.item});
      ADD_FAILURE() << c.type << " took " << c.item;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.type << " " << c.item << ": " << e.what();
    }
  }
  // sd-scripts' other D-Adaptation names are refused by name.
  for (const char* type : {"DAdaptSGD", "DAdaptAdaGrad", "DAdaptAdan", "dadaptadanip"}) {
    try {
      resolveOptimizerType(type);
      ADD_FAILURE() << type;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + type + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not built"), std::string::npos) << e.what();
    }
  }
}

TEST(DAdaptationArgs, WarnsAsSdScriptsDoes) {
  Problem problem;
  problem.lrs = {1e-4, 1e-4};
  const OptimizerSettings quiet = parseOptimizerSettings("Prodigy", {});
  auto warnings = dadaptationWarnings(quiet.dadaptation, makeGroups(problem));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("set learning rate around 1.0"), std::string::npos);
  EXPECT_NE(warnings[0].find("lr=0.0001"), std::string::npos) << warnings[0];
  EXPECT_TRUE(dadaptationWarnings(quiet.dadaptation, makeGroups(Problem())).empty());
  EXPECT_EQ(dadaptationWarnings(parseOptimizerSettings("DAdaptAdam", {"log_every=5"}).dadaptation, makeGroups(Problem())).size(), 1u);
}
