// bitsandbytes' AdamW family (8-bit and 32-bit states), Lion and Lion8bit, SGDNesterov and
// SGDNesterov8bit against references written here in double from the published algorithms
// (bitsandbytes' kernels and create_dynamic_map, lion_pytorch, torch.optim.SGD): weights, every
// state, and for 8-bit states the codes and absmax of a blockwise quantizer written here from
// bitsandbytes' method. Also resume, fp16's skipped step, the arguments and sd-scripts' switches.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/ascii_text.h"
#include "core/config.h"
#include "train/optim/blockwise_quantizer.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"
#include "train/optim/optimizer_choice.h"

using namespace sinter;
using namespace sinter::train;

namespace {

// One float32 rounding (2^-24 relative). Tolerances below allow 8 of them (2^-21) per operation
// chain on the magnitudes that enter it, which covers float32 arithmetic against the double
// reference whatever the order or fusing of the operations on a given CPU.
constexpr double kFloat32Rounding = 1.0 / (1 << 24);
constexpr double kChainTolerance = 8 * kFloat32Rounding;

std::vector<double> toVec(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous().cpu();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// bitsandbytes' create_dynamic_map(signed, max_exponent_bits=7, total_bits=8) in double: exponent
// i (scale 10^(i - 6)) holds the midpoints of 2^i (signed, with both signs) or 2^(i + 1)
// (unsigned) equal intervals of [0.1, 1]; then 0 and 1; sorted.
std::vector<double> referenceMap(bool isSigned) {
  std::vector<double> map;
  for (int i = 0; i < 7; ++i) {
    const int count = isSigned ? (1 << i) : (1 << (i + 1));
    for (int j = 0; j < count; ++j) {
      const double lo = 0.1 + 0.9 * j / count, hi = 0.1 + 0.9 * (j + 1) / count;
      const double v = std::pow(10.0, i - 6) * (lo + hi) / 2;
      map.push_back(v);
      if (isSigned) map.push_back(-v);
    }
  }
  map.push_back(0.0);
  map.push_back(1.0);
  std::sort(map.begin(), map.end());
  return map;
}

// bitsandbytes' blockwise quantization in double: blocks of 256, each divided by its absmax, each
// value the nearest map entry, a negative value never on 0 or above (its "same sign" fix).
struct ReferenceQuantizer {
  std::vector<double> map;
  bool isSigned;
  int zeroCode;
  explicit ReferenceQuantizer(bool s) : map(referenceMap(s)), isSigned(s) {
    zeroCode = static_cast<int>(std::find(map.begin(), map.end(), 0.0) - map.begin());
  }
  int signFixed(int code, double value) const {
    if (isSigned && value < 0 && map[code] >= 0) return code - 1;
    return code;
  }
  // The codes a value may take: the nearest entry, and its neighbour where the value lies within
  // `tolerance` of the boundary between them (float32 against double may fall either side).
  std::vector<int> acceptable(double x, double value, double tolerance) const {
    int best = 0;
    for (int k = 1; k < 256; ++k)
      if (std::abs(x - map[k]) < std::abs(x - map[best])) best = k;
    std::vector<int> codes{signFixed(best, value)};
    for (int other : {best - 1, best + 1}) {
      if (other < 0 || other > 255) continue;
      const double boundary = (map[best] + map[other]) / 2;
      if (std::abs(x - boundary) <= tolerance) codes.push_back(signFixed(other, value));
    }
    return codes;
  }
};

// A state as the reference keeps it: double values, or codes and absmax per block of 256.
struct ReferenceState {
  bool eightBit = false;
  const ReferenceQuantizer* quantizer = nullptr;
  std::vector<double> values;  // 32-bit
  std::vector<int> codes;      // 8-bit, one per element (bitsandbytes starts from zeros)
  std::vector<double> absmax;  // 8-bit, per block
  std::vector<double> read() const {
    if (!eightBit) return values;
    std::vector<double> out(codes.size());
    for (size_t k = 0; k < codes.size(); ++k) out[k] = quantizer->map[codes[k]] * absmax[k / 256];
    return out;
  }
};

// One step of an optimizer's formula for one parameter in double. `states` hold the states' old
// values and receive the new ones; `errors` (per state element) and `pError` (per weight) carry
// bounds on how far the float32 implementation may be from the reference, propagated through each
// operation: every float32 operation chain adds kChainTolerance of the magnitudes entering it, and
// earlier errors pass through as the formula scales them. `ambiguous` marks weights whose update the
// double and float32 arithmetic may legitimately take differently (Lion's sign of a value within
// its error bound of 0).
struct StepInputs {
  std::vector<double>& p;
  std::vector<double>& pError;
  const std::vector<double>& g;
  std::vector<std::vector<double>>& states;
  std::vector<std::vector<double>>& errors;
  std::vector<bool>& ambiguous;
  double lr;
  int step;
};
using ReferenceFormula = std::function<void(StepInputs&)>;

// |sqrt(a) - sqrt(b)| for |a - b| <= e.
double sqrtError(double value, double e) { return e > 0 ? e / (std::sqrt(value) + std::sqrt(e)) : 0.0; }

// bitsandbytes' "adam" kernels (32-bit and 8-bit blockwise): the bias corrections in float32 from
// the float betas the kernels take, the decay after the update.
ReferenceFormula bitsandbytesAdam(double b1, double b2, double eps, double wd) {
  return [=](StepInputs& s) {
    const double b1f = static_cast<float>(b1), b2f = static_cast<float>(b2);
    const double c1 = 1 - std::pow(b1f, s.step), c2sq = 1 - std::pow(b2f, s.step), c2 = std::sqrt(c2sq);
    // float32 pow: a rounding or two of beta^t (below 1), which 1 - beta^t turns relative to c1, c2^2.
    const double correctionError = 4 * kFloat32Rounding * (1 / c1 + 1 / c2sq);
    const double stepSize = s.lr * c2 / c1;
    std::vector<double>&m = s.states[0], &v = s.states[1], &em = s.errors[0], &ev = s.errors[1];
    for (size_t k = 0; k < s.p.size(); ++k) {
      const double g = s.g[k];
      em[k] = b1 * em[k] + kChainTolerance * (std::abs(m[k]) * b1 + (1 - b1) * std::abs(g));
      m[k] = m[k] * b1 + (1 - b1) * g;
      ev[k] = b2 * ev[k] + kChainTolerance * (v[k] * b2 + (1 - b2) * g * g);
      v[k] = v[k] * b2 + (1 - b2) * g * g;
      const double denom = std::sqrt(v[k]) + eps * c2;
      const double update = stepSize * m[k] / denom;
      const double updateError = denom > 0 ? stepSize * (em[k] + std::abs(m[k]) * sqrtError(v[k], ev[k]) / denom) / denom : 0.0;
      s.p[k] -= update;
      if (wd > 0) s.p[k] *= 1 - s.lr * wd;
      s.pError[k] += updateError + (kChainTolerance + correctionError) * std::abs(update) + kChainTolerance * std::abs(s.p[k]);
    }
  };
}

// lion_pytorch's update_fn (and bitsandbytes' "lion" kernels).
ReferenceFormula lion(double b1, double b2, double wd) {
  return [=](StepInputs& s) {
    std::vector<double>&m = s.states[0], &em = s.errors[0];
    for (size_t k = 0; k < s.p.size(); ++k) {
      const double g = s.g[k];
      s.p[k] *= 1 - s.lr * wd;
      const double c = m[k] * b1 + (1 - b1) * g;
      const double cError = b1 * em[k] + kChainTolerance * (std::abs(m[k]) * b1 + (1 - b1) * std::abs(g));
      s.ambiguous[k] = std::abs(c) <= cError;
      s.p[k] -= s.lr * ((c > 0) - (c < 0));
      s.pError[k] += kChainTolerance * (std::abs(s.p[k]) + s.lr);
      em[k] = b2 * em[k] + kChainTolerance * (std::abs(m[k]) * b2 + (1 - b2) * std::abs(g));
      m[k] = m[k] * b2 + (1 - b2) * g;
    }
  };
}

// torch.optim.SGD (dampening 0): Nesterov, or heavy ball as bitsandbytes' "momentum" kernels.
ReferenceFormula sgd(double momentum, double wd, bool nesterov) {
  return [=](StepInputs& s) {
    std::vector<double>&buf = s.states[0], &eb = s.errors[0];
    for (size_t k = 0; k < s.p.size(); ++k) {
      const double d = s.g[k] + wd * s.p[k];
      const double dError = wd * s.pError[k] + kChainTolerance * (std::abs(s.g[k]) + wd * std::abs(s.p[k]));
      eb[k] = momentum * eb[k] + dError + kChainTolerance * (std::abs(buf[k]) * momentum + std::abs(d));
      buf[k] = buf[k] * momentum + d;
      const double direction = nesterov ? d + momentum * buf[k] : buf[k];
      const double directionError =
          nesterov ? dError + momentum * eb[k] + kChainTolerance * (std::abs(d) + momentum * std::abs(buf[k])) : eb[k];
      s.p[k] -= s.lr * direction;
      s.pError[k] += s.lr * directionError + kChainTolerance * (std::abs(s.p[k]) + s.lr * std::abs(direction));
    }
  };
}

struct ParamSpec {
  std::vector<int64_t> shape;
  size_t group;
};

// Runs `type` with `args` and the reference side by side over `steps` steps of fixed random
// gradients (a wide range of magnitudes, one block of zeros) with a linear schedule, and checks
// the weights and every state after each step.
void expectMatchesReference(const std::string& type, const std::vector<std::string>& args, const ReferenceFormula& formula,
                            const std::vector<std::pair<std::string, bool>>& stateNames, bool eightBit, int steps = 12) {
  SCOPED_TRACE(type);
  torch::manual_seed(21);
  const std::vector<ParamSpec> specs = {{{3, 700}, 0}, {{5}, 0}, {{2, 300}, 1}};
  const double baseLr[2] = {1e-2, 5e-3};
  std::vector<torch::Tensor> params;
  std::vector<OptimizerGroup> groups{{"unet", baseLr[0], {}}, {"textencoder", baseLr[1], {}}};
  for (const ParamSpec& s : specs) {
    params.push_back(torch::randn(s.shape).set_requires_grad(true));
    groups[s.group].params.push_back(params.back());
  }
  const OptimizerSettings settings = parseOptimizerSettings(type, args);
  std::unique_ptr<Optimizer> opt = makeOptimizer(settings, groups, /*fusedBackwardPass=*/false);
  const LrSchedule schedule({LrSchedulerType::Linear, 0, steps + 4});  // a new lr every step

  const ReferenceQuantizer signedQ(true), unsignedQ(false);
  struct RefParam {
    std::vector<double> p, pError;
    std::vector<ReferenceState> states;
    std::vector<std::vector<double>> errors;  // per state: bound on the implementation's dequantized/float32 state
  };
  std::vector<RefParam> ref;
  for (size_t j = 0; j < specs.size(); ++j) {
    const size_t n = params[j].numel();
    RefParam r{toVec(params[j]), std::vector<double>(n, 0.0), {}, {}};
    const bool quantized = eightBit && params[j].numel() >= settings.min8bitSize;
    for (const auto& [name, isSigned] : stateNames) {
      ReferenceState st;
      st.eightBit = quantized;
      st.quantizer = isSigned ? &signedQ : &unsignedQ;
      if (quantized) {
        st.codes.assign(n, 0);
        st.absmax.assign((n + 255) / 256, 0.0);
      } else {
        st.values.assign(n, 0.0);
      }
      r.states.push_back(st);
      r.errors.emplace_back(n, 0.0);
    }
    ref.push_back(std::move(r));
  }

  size_t ambiguousCodes = 0, checkedCodes = 0;
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step + 1));
    std::vector<torch::Tensor> grads;
    for (size_t j = 0; j < specs.size(); ++j) {
      torch::Tensor g = torch::randn(specs[j].shape) * torch::exp(2 * torch::randn(specs[j].shape));
      if (j == 0) g.view({-1}).slice(0, 256, 512).zero_();  // a block whose states stay zero
      grads.push_back(g);
      params[j].mutable_grad().copy_(g);
    }
    schedule.apply(*opt);
    opt->step();

    std::map<std::string, torch::Tensor> state;
    for (const auto& [k, t] : opt->stateTensors()) state[k] = t;
    ASSERT_EQ(state.at("step").item<float>(), static_cast<float>(step + 1));
    for (size_t j = 0; j < specs.size(); ++j) {
      SCOPED_TRACE("parameter " + std::to_string(j));
      RefParam& r = ref[j];
      const size_t n = r.p.size();
      const size_t g = specs[j].group;
      const size_t index = g == 0 ? j : 0;
      const std::string where = "." + std::to_string(g) + "." + std::to_string(index);
      std::vector<std::vector<double>> values;
      for (const ReferenceState& st : r.states) values.push_back(st.read());
      std::vector<bool> ambiguous(n, false);
      // The learning rate is a float32 tensor: one rounding of lr, as any other input.
      StepInputs in{r.p, r.pError, toVec(grads[j]), values, r.errors, ambiguous, baseLr[g] * schedule.factor(step), step + 1};
      formula(in);

      const std::vector<double> p = toVec(params[j]);
      for (size_t k = 0; k < n; ++k) {
        if (ambiguous[k]) {
          r.p[k] = p[k];  // the sign of a value within its error bound of 0: either is right
          continue;
        }
        ASSERT_NEAR(p[k], r.p[k], r.pError[k]) << "weight " << k;
      }

      for (size_t s = 0; s < r.states.size(); ++s) {
        ReferenceState& st = r.states[s];
        std::vector<double>& error = r.errors[s];
        const std::string name = stateNames[s].first;
        SCOPED_TRACE(name);
        if (!st.eightBit) {
          ASSERT_FALSE(state.count(name + "_codes" + where));
          const std::vector<double> got = toVec(state.at(name + where));
          for (size_t k = 0; k < n; ++k) ASSERT_NEAR(got[k], values[s][k], error[k] + 1e-300) << "element " << k;
          st.values = values[s];
          continue;
        }
        ASSERT_FALSE(state.count(name + where));
        const torch::Tensor codesT = state.at(name + "_codes" + where);
        ASSERT_EQ(codesT.scalar_type(), torch::kUInt8);
        const std::vector<double> codes = toVec(codesT), absmax = toVec(state.at(name + "_absmax" + where));
        ASSERT_EQ(absmax.size(), (n + 255) / 256);
        ASSERT_EQ(codes.size(), absmax.size() * 256);
        for (size_t b = 0; b < absmax.size(); ++b) {
          const size_t end = std::min(n, (b + 1) * 256);
          double refAbsmax = 0, blockError = 0;
          for (size_t k = b * 256; k < end; ++k) {
            refAbsmax = std::max(refAbsmax, std::abs(values[s][k]));
            blockError = std::max(blockError, error[k]);
          }
          ASSERT_NEAR(absmax[b], refAbsmax, blockError) << "block " << b;
          st.absmax[b] = refAbsmax;
          for (size_t k = b * 256; k < end; ++k) {
            const double x = refAbsmax > 0 ? values[s][k] / refAbsmax : 0.0;
            // The value's and the absmax's bounds, relative to the absmax, and the division's rounding.
            const double tolerance =
                refAbsmax > 0 ? (error[k] + std::abs(x) * blockError) / refAbsmax + kChainTolerance * std::abs(x) : 0.0;
            const std::vector<int> allowed = st.quantizer->acceptable(x, values[s][k], tolerance);
            const int code = static_cast<int>(codes[k]);
            ASSERT_NE(std::find(allowed.begin(), allowed.end(), code), allowed.end())
                << "element " << k << ": code " << code << ", expected " << allowed[0] << " for " << x;
            ambiguousCodes += allowed.size() > 1;
            ++checkedCodes;
            st.codes[k] = code;
            // Next step's dequantized state: the same code times an absmax within blockError (and the
            // float32 map's and product's roundings).
            const double level = std::abs(st.quantizer->map[code]);
            error[k] = level * blockError + kChainTolerance * level * refAbsmax;
          }
        }
        // The padding of the last block stays zero (the code of 0).
        for (size_t k = n; k < codes.size(); ++k) ASSERT_EQ(static_cast<int>(codes[k]), st.quantizer->zeroCode) << "padding " << k;
      }
    }
  }
  if (eightBit) {
    EXPECT_GT(checkedCodes, 0u);
    // A boundary within float32 rounding of a value is rare: most codes are checked exactly.
    EXPECT_LT(ambiguousCodes * 100, checkedCodes) << ambiguousCodes << " of " << checkedCodes << " codes near a boundary";
  }
}

}  // namespace

TEST(BlockwiseQuantizer, MapIsBitsAndBytesDynamicMap) {
  for (bool isSigned : {true, false}) {
    const std::vector<double> map = toVec(dynamicQuantizationMap(isSigned));
    const std::vector<double> expected = referenceMap(isSigned);
    ASSERT_EQ(map.size(), 256u);
    for (size_t k = 0; k < 256; ++k) {
      // float32 linspace, mean and scaling: a few roundings of each value.
      ASSERT_NEAR(map[k], expected[k], 4 * kFloat32Rounding * std::abs(expected[k])) << k;
      if (k) ASSERT_LT(map[k - 1], map[k]) << "not strictly sorted at " << k;
    }
  }
  // The ends bitsandbytes' maps have: -0.99296875 (signed), 0 (unsigned), and 1.
  EXPECT_FLOAT_EQ(dynamicQuantizationMap(true)[0].item<float>(), -0.99296875f);
  EXPECT_EQ(dynamicQuantizationMap(false)[0].item<float>(), 0.0f);
  EXPECT_EQ(dynamicQuantizationMap(true)[255].item<float>(), 1.0f);
}

TEST(BlockwiseQuantizer, CodesAndAbsmaxAreTheReferenceQuantizers) {
  torch::manual_seed(9);
  for (bool isSigned : {true, false}) {
    SCOPED_TRACE(isSigned ? "signed" : "unsigned");
    BlockwiseQuantizer q(isSigned, torch::kCPU);
    const ReferenceQuantizer ref(isSigned);
    torch::Tensor values = torch::randn({4, kOptimizerStateBlockSize}) * torch::exp(3 * torch::randn({4, kOptimizerStateBlockSize}));
    if (!isSigned) values = values.abs();
    values[1].zero_();  // a block of zeros
    if (isSigned) values[2][5] = -1e-9f;  // rounds to 0, keeps its sign
    const auto [codes, absmax] = q.quantize(values);
    ASSERT_EQ(codes.scalar_type(), torch::kUInt8);
    ASSERT_EQ(absmax.sizes(), torch::IntArrayRef({4}));
    const std::vector<double> v = toVec(values), c = toVec(codes), a = toVec(absmax);
    for (int b = 0; b < 4; ++b) {
      double m = 0;
      for (int k = 0; k < 256; ++k) m = std::max(m, std::abs(v[b * 256 + k]));
      ASSERT_EQ(a[b], m);  // a maximum of float32 values is exact
      for (int k = 0; k < 256; ++k) {
        const double x = m > 0 ? v[b * 256 + k] / m : 0.0;
        const std::vector<int> allowed = ref.acceptable(x, v[b * 256 + k], 2 * kFloat32Rounding * std::abs(x));
        ASSERT_NE(std::find(allowed.begin(), allowed.end(), static_cast<int>(c[b * 256 + k])), allowed.end()) << b << "," << k;
      }
    }
    for (int k = 0; k < 256; ++k) EXPECT_EQ(static_cast<int>(c[256 + k]), ref.zeroCode);
    if (isSigned) EXPECT_EQ(static_cast<int>(c[2 * 256 + 5]), ref.zeroCode - 1);
    // Dequantized: each value within half a gap of the map, times the absmax.
    const torch::Tensor back = q.dequantize(codes, absmax);
    EXPECT_TRUE(torch::allclose(back, values, 0.0, 0.5 * 0.015 * absmax.max().item<double>()));
  }
  EXPECT_EQ(BlockwiseQuantizer::blockCount(256), 1);
  EXPECT_EQ(BlockwiseQuantizer::blockCount(257), 2);
}

TEST(BitsAndBytesAdamW, AdamW8bitMatchesTheReference) {
  expectMatchesReference("AdamW8bit", {"weight_decay=0.1", "betas=0.8,0.99", "eps=1e-6", "min_8bit_size=512"},
                         bitsandbytesAdam(0.8, 0.99, 1e-6, 0.1), {{"exp_avg", true}, {"exp_avg_sq", false}}, true);
  expectMatchesReference("PagedAdamW8bit", {"min_8bit_size=600"}, bitsandbytesAdam(0.9, 0.999, 1e-8, 0.01),
                         {{"exp_avg", true}, {"exp_avg_sq", false}}, true);
}

TEST(BitsAndBytesAdamW, PagedAdamW32bitMatchesTheReference) {
  expectMatchesReference("PagedAdamW32bit", {"weight_decay=0.1", "min_8bit_size=1"}, bitsandbytesAdam(0.9, 0.999, 1e-8, 0.1),
                         {{"exp_avg", true}, {"exp_avg_sq", false}}, false);
  expectMatchesReference("PagedAdamW", {"weight_decay=0", "betas=(0.85, 0.995)"}, bitsandbytesAdam(0.85, 0.995, 1e-8, 0.0),
                         {{"exp_avg", true}, {"exp_avg_sq", false}}, false);
}

TEST(Lion, MatchesTheReference) {
  expectMatchesReference("Lion", {"weight_decay=0.5"}, lion(0.9, 0.99, 0.5), {{"exp_avg", true}}, false);
  expectMatchesReference("Lion", {"betas=0.95,0.98", "use_triton=False"}, lion(0.95, 0.98, 0.0), {{"exp_avg", true}}, false);
}

TEST(Lion, Lion8bitMatchesTheReference) {
  expectMatchesReference("Lion8bit", {"weight_decay=0.5", "min_8bit_size=512"}, lion(0.9, 0.99, 0.5), {{"exp_avg", true}}, true);
  expectMatchesReference("PagedLion8bit", {"betas=0.9,0.95", "min_8bit_size=512"}, lion(0.9, 0.95, 0.0), {{"exp_avg", true}}, true);
}

TEST(SgdMomentum, SGDNesterovMatchesTorchsNesterovSgd) {
  expectMatchesReference("SGDNesterov", {}, sgd(0.9, 0.0, true), {{"momentum_buffer", true}}, false);
  expectMatchesReference("SGDNesterov", {"momentum=0.8", "weight_decay=0.05", "dampening=0"}, sgd(0.8, 0.05, true),
                         {{"momentum_buffer", true}}, false);
}

TEST(SgdMomentum, SGDNesterov8bitMatchesBitsAndBytesHeavyBallMomentum) {
  expectMatchesReference("SGDNesterov8bit", {"min_8bit_size=512"}, sgd(0.9, 0.0, false), {{"momentum_buffer", true}}, true);
  expectMatchesReference("SGDNesterov8bit", {"momentum=0.8", "weight_decay=0.05", "dampening=0.1", "min_8bit_size=512"},
                         sgd(0.8, 0.05, false), {{"momentum_buffer", true}}, true);
}

namespace {

const std::vector<std::string> kNewTypes = {"AdamW8bit", "PagedAdamW8bit", "PagedAdamW", "PagedAdamW32bit", "Lion",
                                            "Lion8bit",  "PagedLion8bit",  "SGDNesterov", "SGDNesterov8bit"};

std::vector<torch::Tensor> makeParams(int seed) {
  torch::manual_seed(seed);
  return {torch::randn({40, 130}).set_requires_grad(true), torch::randn({7}).set_requires_grad(true)};
}

std::unique_ptr<Optimizer> makeFor(const std::string& type, const std::vector<torch::Tensor>& params) {
  OptimizerSettings settings = parseOptimizerSettings(type, {});
  settings.min8bitSize = 1000;  // the first weight keeps 8-bit states where the type has them
  return makeOptimizer(settings, {{"unet", 1e-2, {params[0]}}, {"te", 3e-3, {params[1]}}},
                       /*fusedBackwardPass=*/false);
}

void setGrads(const std::vector<torch::Tensor>& params, int step) {
  torch::manual_seed(1000 + step);
  for (const torch::Tensor& p : params) p.mutable_grad().copy_(torch::randn(p.sizes()));
}

std::map<std::string, torch::Tensor> stateOf(const Optimizer& opt) {
  std::map<std::string, torch::Tensor> m;
  for (const auto& [k, t] : opt.stateTensors()) m[k] = t;
  return m;
}

}  // namespace

// N steps straight equal N/2 steps, a save and load into a new optimizer, and N/2 more, bit for
// bit (the same code on the same machine).
TEST(OptimizersWithStates, ResumeContinuesAsAStraightRun) {
  for (const std::string& type : kNewTypes) {
    SCOPED_TRACE(type);
    const std::vector<torch::Tensor> straight = makeParams(5), first = makeParams(5);
    std::unique_ptr<Optimizer> a = makeFor(type, straight), b = makeFor(type, first);
    for (int step = 0; step < 4; ++step) {
      setGrads(straight, step), setGrads(first, step);
      a->step(), b->step();
    }
    const std::map<std::string, torch::Tensor> saved = stateOf(*b);
    const bool eightBit = parseOptimizerSettings(type, {}).eightBitFrom().has_value();
    EXPECT_EQ(saved.count("exp_avg_codes.0.0") + saved.count("momentum_buffer_codes.0.0"), eightBit ? 1u : 0u);
    std::vector<torch::Tensor> resumedParams;
    for (const torch::Tensor& p : first) resumedParams.push_back(p.detach().clone().set_requires_grad(true));
    std::unique_ptr<Optimizer> resumed = makeFor(type, resumedParams);
    resumed->loadStateTensors(saved);
    for (int step = 4; step < 8; ++step) {
      setGrads(straight, step), setGrads(resumedParams, step);
      a->step(), resumed->step();
    }
    for (size_t j = 0; j < straight.size(); ++j) EXPECT_TRUE(torch::equal(straight[j], resumedParams[j])) << "parameter " << j;
    const auto sa = stateOf(*a), sr = stateOf(*resumed);
    ASSERT_EQ(sa.size(), sr.size());
    for (const auto& [k, t] : sa) EXPECT_TRUE(torch::equal(t, sr.at(k))) << k;
    // Another optimizer's state is refused.
    std::map<std::string, torch::Tensor> missing = saved;
    missing.erase(saved.begin()->first);  // a state tensor: "exp_avg..." and "momentum_buffer..." sort before "lr.*" and "step"
    EXPECT_THROW(resumed->loadStateTensors(missing), std::invalid_argument);
  }
}

// fp16's overflow: step(foundInf) with the flag set changes nothing (weights, states, step count);
// with it clear it is the plain step.
TEST(OptimizersWithStates, SkippedStepLeavesEverythingAsItWas) {
  for (const std::string& type : kNewTypes) {
    SCOPED_TRACE(type);
    const std::vector<torch::Tensor> plain = makeParams(6), flagged = makeParams(6);
    std::unique_ptr<Optimizer> a = makeFor(type, plain), b = makeFor(type, flagged);
    for (int step = 0; step < 3; ++step) {
      setGrads(plain, step), setGrads(flagged, step);
      a->step();
      b->step(torch::zeros({1}));
      for (size_t j = 0; j < plain.size(); ++j) ASSERT_TRUE(torch::equal(plain[j], flagged[j]));
    }
    setGrads(flagged, 3);
    std::vector<torch::Tensor> before;
    for (const torch::Tensor& t : b->mutableTensors()) before.push_back(t.detach().clone());
    b->step(torch::ones({1}));
    const std::vector<torch::Tensor> after = b->mutableTensors();
    ASSERT_EQ(after.size(), before.size());
    for (size_t k = 0; k < after.size(); ++k) EXPECT_TRUE(torch::equal(after[k], before[k])) << "tensor " << k;
    EXPECT_EQ(b->stepCount().item<float>(), 3.0f);
  }
}

TEST(OptimizerArgs, EachNewOptimizersArgumentsAsSdScriptsPassesThem) {
  const OptimizerSettings adam = parseOptimizerSettings("adamw8bit", {"weight_decay=0.05 betas=(0.9, 0.99)", "eps=1e-7", "amsgrad=False"});
  EXPECT_EQ(adam.type, "AdamW8bit");
  EXPECT_DOUBLE_EQ(adam.adamw.weightDecay, 0.05);
  EXPECT_DOUBLE_EQ(adam.adamw.beta2, 0.99);
  EXPECT_DOUBLE_EQ(adam.adamw.eps, 1e-7);
  EXPECT_EQ(adam.className() + "(" + adam.pythonText + ")",
            "bitsandbytes.optim.adamw.AdamW8bit(weight_decay=0.05,betas=(0.9, 0.99),eps=1e-07,amsgrad=False)");
  EXPECT_EQ(adam.eightBitFrom().value_or(-1), 4096);
  EXPECT_EQ(parseOptimizerSettings("AdamW8bit", {"min_8bit_size=100"}).eightBitFrom().value_or(-1), 100);
  EXPECT_EQ(parseOptimizerSettings("AdamW8bit", {"min_8bit_size=100"}).pythonText, "min_8bit_size=100");
  EXPECT_DOUBLE_EQ(parseOptimizerSettings("PagedAdamW8bit", {}).adamw.weightDecay, 0.01);  // bitsandbytes' default
  EXPECT_EQ(parseOptimizerSettings("PagedAdamW8bit", {}).className(), "bitsandbytes.optim.adamw.PagedAdamW8bit");
  EXPECT_EQ(parseOptimizerSettings("PagedAdamW32bit", {}).className(), "bitsandbytes.optim.adamw.PagedAdamW32bit");
  EXPECT_EQ(parseOptimizerSettings("PagedAdamW", {}).className(), "bitsandbytes.optim.adamw.PagedAdamW");
  EXPECT_FALSE(parseOptimizerSettings("PagedAdamW32bit", {}).eightBitFrom());

  const OptimizerSettings lionArgs = parseOptimizerSettings("Lion", {"betas=0.95,0.98", "weight_decay=0.1"});
  EXPECT_DOUBLE_EQ(lionArgs.lion.beta1, 0.95);
  EXPECT_DOUBLE_EQ(lionArgs.lion.beta2, 0.98);
  EXPECT_DOUBLE_EQ(lionArgs.lion.weightDecay, 0.1);
  EXPECT_EQ(lionArgs.className() + "(" + lionArgs.pythonText + ")", "lion_pytorch.lion_pytorch.Lion(betas=(0.95, 0.98),weight_decay=0.1)");
  EXPECT_DOUBLE_EQ(parseOptimizerSettings("Lion", {}).lion.beta2, 0.99);
  EXPECT_EQ(parseOptimizerSettings("Lion", {}).pythonText, "");
  EXPECT_FALSE(parseOptimizerSettings("Lion", {}).eightBitFrom());
  EXPECT_EQ(parseOptimizerSettings("Lion8bit", {}).className(), "bitsandbytes.optim.lion.Lion8bit");
  EXPECT_EQ(parseOptimizerSettings("PagedLion8bit", {}).className(), "bitsandbytes.optim.lion.PagedLion8bit");

  // sd-scripts adds momentum=0.9 when absent (last), and passes nesterov=True itself.
  const OptimizerSettings sgdArgs = parseOptimizerSettings("SGDNesterov", {"weight_decay=1e-4"});
  EXPECT_DOUBLE_EQ(sgdArgs.sgd.momentum, 0.9);
  EXPECT_EQ(sgdArgs.className() + "(" + sgdArgs.pythonText + ")", "torch.optim.sgd.SGD(weight_decay=0.0001,momentum=0.9)");
  const OptimizerSettings sgd8 = parseOptimizerSettings("SGDNesterov8bit", {"momentum=0.95"});
  EXPECT_EQ(sgd8.className() + "(" + sgd8.pythonText + ")", "bitsandbytes.optim.sgd.SGD8bit(momentum=0.95)");
  EXPECT_DOUBLE_EQ(sgd8.sgd.momentum, 0.95);

  // Refused, naming the item.
  auto refuses = [](const std::string& type, const std::string& item, const std::string& mentions) {
    try {
      parseOptimizerSettings(type, {item});
      ADD_FAILURE() << type << " took " << item;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
    }
  };
  refuses("AdamW8bit", "amsgrad=True", "amsgrad");
  refuses("AdamW8bit", "momentum=0.9", "'momentum' is not an AdamW8bit argument");
  refuses("AdamW8bit", "betas=0.9,1.0", "betas");
  refuses("AdamW8bit", "weight_decay=-1", "weight_decay");
  refuses("AdamW8bit", "min_8bit_size=1.5", "min_8bit_size");
  refuses("AdamW", "min_8bit_size=100", "'min_8bit_size' is not an AdamW argument");
  refuses("Lion", "eps=1e-8", "'eps' is not a");
  refuses("Lion", "decoupled_weight_decay=True", "decoupled_weight_decay");
  refuses("Lion", "min_8bit_size=100", "min_8bit_size");
  refuses("Lion8bit", "use_triton=True", "use_triton");
  refuses("Lion8bit", "betas=0.9,1.0", "betas");
  refuses("SGDNesterov", "nesterov=True", "nesterov");
  refuses("SGDNesterov", "dampening=0.1", "dampening");
  refuses("SGDNesterov", "momentum=0", "momentum");
  refuses("SGDNesterov", "betas=0.9,0.99", "'betas' is not an SGDNesterov argument");
  refuses("SGDNesterov8bit", "nesterov=True", "nesterov");
  refuses("SGDNesterov8bit", "momentum=0", "momentum");
  // lion_pytorch takes a beta of 1.
  EXPECT_DOUBLE_EQ(parseOptimizerSettings("Lion", {"betas=0.9,1.0"}).lion.beta2, 1.0);

  for (const std::string& type : kNewTypes) EXPECT_EQ(resolveOptimizerType(lowerAscii(type)), type);
}

TEST(OptimizerChoice, SdScriptsOlderSwitches) {
  Config config;
  EXPECT_EQ(configuredOptimizerType(config), "");
  config.set("use_8bit_adam", true);
  EXPECT_EQ(configuredOptimizerType(config), "AdamW8bit");
  EXPECT_EQ(optimizerSettingsFromConfig(config).className(), "bitsandbytes.optim.adamw.AdamW8bit");
  config.set("use_lion_optimizer", true);
  EXPECT_THROW(configuredOptimizerType(config), std::invalid_argument);  // both
  config.set("use_8bit_adam", false);
  EXPECT_EQ(configuredOptimizerType(config), "Lion");
  config.set("optimizer_type", std::string("AdamW"));
  try {
    configuredOptimizerType(config);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use_lion_optimizer"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("optimizer_type"), std::string::npos);
  }
  config.set("use_lion_optimizer", false);
  EXPECT_EQ(configuredOptimizerType(config), "AdamW");
}
