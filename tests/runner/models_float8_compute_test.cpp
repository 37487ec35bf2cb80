// fp8_scaled / fp8_fast on the CPU: the scale arithmetic (per tensor and per row), the rowwise
// quantization's torch form and the per-channel stored weights where this libtorch has float8, the
// refusals that name the option and the device, and the Linear's route through a served weight's
// own products (what fp8_fast's FP8 GEMMs plug into), checked with a weight that computes its
// products in float32. The FP8 GEMMs and the fused quantize kernel (bit for bit against the torch
// form here) need an FP8 GPU: tests/gpu/fp8_compute_check.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <string>

#include "kernels/fused_kernels.h"
#include "models/weights/float8_compute.h"
#include "models/adapters/frozen_linear_lora.h"
#include "models/layers/linear.h"
#include "models/weights/scaled_float8_weight.h"
#include "models/weights/served_weight.h"

using namespace sinter::models;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A served weight that computes its products itself (as fp8_fast's does), in float32, counting calls.
class ProductWeight : public ServedWeight {
 public:
  explicit ProductWeight(torch::Tensor w) : w_(std::move(w)) {}
  torch::Tensor get(torch::ScalarType dtype) override { return w_.to(dtype); }
  bool computesProducts(int64_t) const override { return true; }
  torch::Tensor forwardProduct(const torch::Tensor& x2, const torch::Tensor& bias) override {
    ++forwardCalls;
    return ServedWeight::forwardProduct(x2, bias);
  }
  torch::Tensor backwardProduct(const torch::Tensor& g) override {
    ++backwardCalls;
    return ServedWeight::backwardProduct(g);
  }
  int forwardCalls = 0, backwardCalls = 0;

 private:
  torch::Tensor w_;
};

}  // namespace

TEST(Float8Compute, FormatMaxima) {
  EXPECT_EQ(float8Max(Float8Format::E4M3), 448.0);
  EXPECT_EQ(float8Max(Float8Format::E5M2), 57344.0);
}

TEST(Float8Compute, ScaleIsAmaxOverTheMaximumRoundedToBfloat16) {
  const torch::Tensor amax = torch::tensor({448.0, 1.0, 3.7, 0.0, 57344.0});
  const torch::Tensor scale = float8ScaleFromAmax(amax, Float8Format::E4M3);
  EXPECT_EQ(scale.scalar_type(), torch::kFloat32);
  EXPECT_EQ(scale[0].item<float>(), 1.0f);
  // Each scale is a bfloat16 value within bfloat16's rounding (2^-8, relative) of amax / 448.
  EXPECT_TRUE(scale.equal(scale.to(torch::kBFloat16).to(torch::kFloat32)));
  for (int i : {1, 2, 4}) {
    const double want = amax[i].item<double>() / 448.0;
    EXPECT_NEAR(scale[i].item<double>(), want, want * std::ldexp(1.0, -8)) << i;
  }
  // An all-zero tensor: a tiny positive scale whose reciprocal is finite in bfloat16.
  const float zero = scale[3].item<float>();
  EXPECT_GT(zero, 0.0f);
  EXPECT_TRUE(std::isfinite(torch::tensor(1.0f / zero).to(torch::kBFloat16).item<float>()));
  EXPECT_EQ(float8ScaleFromAmax(torch::tensor(57344.0), Float8Format::E5M2).item<float>(), 1.0f);
}

// Rows of very different sizes, one all zero: [5, 48] float32.
torch::Tensor rowsOfManySizes() {
  torch::manual_seed(7);
  torch::Tensor x = torch::randn({5, 48}) * torch::tensor({1.0, 3e-4, 0.0, 2.5e3, 1e-20}).unsqueeze(1);
  return x.to(torch::kFloat32);
}

// The factor of every row: max * (1 / amax) in float32, rounded to bfloat16 (the kernel's contract).
TEST(Float8Compute, RowFactorsMapEachRowsAmaxOntoTheFormatsMaximum) {
  const torch::Tensor x = rowsOfManySizes();
  for (const Float8Format format : {Float8Format::E4M3, Float8Format::E5M2}) {
    const torch::Tensor factor = float8RowFactors(x, format);
    ASSERT_EQ(factor.sizes(), (std::vector<int64_t>{5, 1}));
    EXPECT_EQ(factor.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(factor.equal(factor.to(torch::kBFloat16).to(torch::kFloat32)));
    const double max = float8Max(format);
    for (int64_t r = 0; r < 5; ++r) {
      const float amax = x[r].abs().max().item<float>();
      const float f = factor[r][0].item<float>();
      if (amax == 0.0f) {  // clamped: a finite factor whose reciprocal is a positive float32
        EXPECT_TRUE(std::isfinite(f)) << r;
        EXPECT_GT(1.0f / f, 0.0f) << r;
        continue;
      }
      const float want = static_cast<float>(1.0f / amax) * static_cast<float>(max);
      EXPECT_EQ(f, torch::tensor(want).to(torch::kBFloat16).to(torch::kFloat32).item<float>()) << r;
      // So the row's largest value lands within bfloat16's rounding of the format's maximum.
      EXPECT_NEAR(amax * static_cast<double>(f), max, max * (std::ldexp(1.0, -8) + std::ldexp(1.0, -20))) << r;
    }
  }
  // Each row by its own amax: scaling one row leaves the others' factors alone.
  torch::Tensor y = x.clone();
  y[3].mul_(1e3);
  const torch::Tensor a = float8RowFactors(x, Float8Format::E4M3), b = float8RowFactors(y, Float8Format::E4M3);
  EXPECT_TRUE(a.index({torch::indexing::Slice(0, 3)}).equal(b.index({torch::indexing::Slice(0, 3)})));
  EXPECT_FALSE(a[3].equal(b[3]));
  // bfloat16 rows: the same factors as their float32 values (amax is exact either way).
  const torch::Tensor x16 = x.to(torch::kBFloat16);
  EXPECT_TRUE(float8RowFactors(x16, Float8Format::E4M3).equal(float8RowFactors(x16.to(torch::kFloat32), Float8Format::E4M3)));
  EXPECT_THROW(float8RowFactors(torch::ones({2, 3, 16}), Float8Format::E4M3), c10::Error);
}

// The rowwise quantization's torch form (the fused kernel's reference) where this libtorch has float8.
TEST(Float8Compute, QuantizeRowsKeepsEachRowWithinTheFormatsRounding) {
  const torch::Tensor x = rowsOfManySizes();
  EXPECT_FALSE(sinter::kernels::float8QuantizeRowsFits(x));  // the CPU: the torch operators
  if (!float8InBuild()) {
    EXPECT_THROW(quantizeRows(x, Float8Format::E4M3), std::runtime_error);
    return;
  }
  for (const Float8Format format : {Float8Format::E4M3, Float8Format::E5M2}) {
    const Float8Tensor q = quantizeRows(x, format);
    ASSERT_EQ(q.scale.sizes(), (std::vector<int64_t>{5, 1}));
    EXPECT_EQ(q.data.scalar_type(), float8ScalarType(format));
    EXPECT_TRUE(q.scale.equal(float8RowFactors(x, format).reciprocal()));
    const torch::Tensor codes = q.data.to(torch::kFloat32);
    EXPECT_TRUE(torch::isfinite(codes).all().item<bool>());
    EXPECT_LE(codes.abs().max().item<double>(), float8Max(format));
    // Per row: within the format's unit roundoff of the row's amax (relative to each value where
    // normal; the amax-relative form covers the subnormals too), 2^-4 for e4m3, 2^-3 for e5m2.
    const double u = format == Float8Format::E4M3 ? 1.0 / 16 : 1.0 / 8;
    const torch::Tensor error = (codes.to(torch::kFloat64) * q.scale.to(torch::kFloat64) - x.to(torch::kFloat64)).abs();
    const torch::Tensor rowAmax = x.abs().amax({1}, true).to(torch::kFloat64);
    EXPECT_TRUE(error.le(rowAmax * u).all().item<bool>());
    EXPECT_EQ(codes[2].abs().max().item<float>(), 0.0f);  // the zero row stays zero
    EXPECT_GT(codes[4].abs().max().item<float>(), 0.0f);  // the 1e-20 row is scaled up, not lost
  }
}

// fp8_fast's stored weights: per output channel for the forward, per input channel for the
// backward's transposed copy; fp8_scaled alone keeps musubi's per-tensor scale.
TEST(Float8Compute, FastWeightsAreScaledPerChannel) {
  if (!float8InBuild()) GTEST_SKIP() << "this libtorch has no float8";
  torch::manual_seed(5);
  const torch::Tensor w = torch::randn({32, 48}) * torch::linspace(1e-3, 10.0, 32).unsqueeze(1);
  const Float8Tensor rows = quantizeWeight(w, torch::kCPU, false, Float8Scaling::Row);
  ASSERT_EQ(rows.scale.sizes(), (std::vector<int64_t>{32, 1}));
  const Float8Tensor columns = quantizeWeight(w, torch::kCPU, true, Float8Scaling::Row);
  ASSERT_EQ(columns.data.sizes(), (std::vector<int64_t>{48, 32}));
  ASSERT_EQ(columns.scale.sizes(), (std::vector<int64_t>{48, 1}));
  EXPECT_EQ(asSecondOperand(rows).scale.sizes(), (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(asSecondOperand(rows).data.sizes(), (std::vector<int64_t>{48, 32}));
  const torch::Tensor perRow = rows.data.to(torch::kFloat32) * rows.scale;
  const torch::Tensor perColumn = (columns.data.to(torch::kFloat32) * columns.scale).t();
  const torch::Tensor rowAmax = w.abs().amax({1}, true), columnAmax = w.abs().amax({0}, true);
  EXPECT_TRUE((perRow - w).abs().le(rowAmax / 16).all().item<bool>());
  EXPECT_TRUE((perColumn - w).abs().le(columnAmax / 16).all().item<bool>());
  // Stored with fp8_fast (rowwise): the dequantised weight (its backward without FP8) per channel.
  Linear fast(48, 32, false), plain(48, 32, false);
  fast->weight.set_data(w.clone());
  plain->weight.set_data(w.clone());
  Float8ScaledOptions options;
  options.fastForward = options.fastBackward = true;
  ASSERT_EQ(storeLinearsInScaledFloat8(*fast, torch::kCPU, options), 1);
  EXPECT_TRUE(fast->served->computesProducts(16));
  EXPECT_TRUE((fast->served->get(torch::kFloat32) - w).abs().le(rowAmax / 16).all().item<bool>());
  EXPECT_EQ(setFloat8Compute(*fast, true, false), 1);
  EXPECT_TRUE(fast->served->computesProducts(16));
  EXPECT_EQ(setFloat8Compute(*fast, false, false), 1);
  EXPECT_FALSE(fast->served->computesProducts(16));
  ASSERT_EQ(storeLinearsInScaledFloat8(*plain, torch::kCPU, Float8ScaledOptions{}), 1);
  EXPECT_EQ(setFloat8Compute(*plain, true, true), 0);  // stored to dequantise only: no FP8 products
  EXPECT_TRUE((plain->served->get(torch::kFloat32) - w).abs().le(w.abs().max() / 16).all().item<bool>());
}

// fp8_fast's filter: a Linear left out is stored per channel like the others but dequantised, and
// cannot be switched to FP8 products later; the filter sees module paths.
TEST(Float8Compute, LinearsLeftOutOfFloat8ProductsAreDequantised) {
  if (!float8InBuild()) GTEST_SKIP() << "this libtorch has no float8";
  torch::nn::Sequential root;
  root->push_back("kept", Linear(48, 32, false));
  root->push_back("modulation", Linear(48, 32, false));
  Float8ScaledOptions options;
  options.fastForward = options.fastBackward = true;
  std::vector<std::string> seen;
  ASSERT_EQ(storeLinearsInScaledFloat8(*root, torch::kCPU, options,
                                       [&](const std::string& path) {
                                         seen.push_back(path);
                                         return path != "modulation";
                                       }),
            2);
  EXPECT_EQ(seen, (std::vector<std::string>{"kept", "modulation"}));
  auto kept = root[0]->as<LinearImpl>(), left = root[1]->as<LinearImpl>();
  EXPECT_TRUE(kept->served->computesProducts(16));
  EXPECT_FALSE(left->served->computesProducts(16));
  const torch::Tensor w = left->served->get(torch::kFloat32);
  EXPECT_EQ(setFloat8Compute(*root, true, true), 1);  // the kept one only
  EXPECT_FALSE(left->served->computesProducts(16));
  EXPECT_TRUE(torch::equal(left->served->get(torch::kFloat32), w));
}

TEST(Float8Compute, RefusedOnTheCpuNamingTheOptionAndDevice) {
  const std::string why = float8ComputeRefusal(torch::kCPU);
  ASSERT_FALSE(why.empty());
  EXPECT_TRUE(contains(why, "fp8_fast")) << why;
  if (float8ComputeInBuild()) EXPECT_TRUE(contains(why, "cpu")) << why;
  else EXPECT_TRUE(contains(why, "libtorch")) << why;
}

TEST(Float8Compute, WithoutFloat8ScaledStorageIsRefusedNamingTheOption) {
  Linear linear(32, 16, true);
  if (float8InBuild()) {
    // Stored on the CPU: e4m3 data and a scale whose product is within e4m3's rounding (2^-4).
    const torch::Tensor before = linear->weight.detach().clone();
    EXPECT_EQ(storeLinearsInScaledFloat8(*linear, torch::kCPU, Float8ScaledOptions{}), 1);
    EXPECT_EQ(linear->weight.scalar_type(), float8Dtype());
    ASSERT_TRUE(linear->served);
    EXPECT_FALSE(linear->served->computesProducts(16));
    const torch::Tensor got = linear->served->get(torch::kFloat32);
    EXPECT_LE((got - before).abs().max().item<double>(), before.abs().max().item<double>() / 16);
    const Float8Tensor q = quantizePerTensor(before, Float8Format::E4M3);
    EXPECT_LE((q.data.to(torch::kFloat32) * q.scale - before).abs().max().item<double>(), before.abs().max().item<double>() / 16);
    return;
  }
  try {
    storeLinearsInScaledFloat8(*linear, torch::kCPU, Float8ScaledOptions{});
    FAIL() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "fp8_scaled")) << e.what();
    EXPECT_TRUE(contains(e.what(), "libtorch")) << e.what();
  }
  EXPECT_THROW(quantizePerTensor(torch::ones({4, 4}), Float8Format::E4M3), std::runtime_error);
}

// frozenLinear: a weight that computes its products gets x2 W^T + b forward and dy W backward.
TEST(Float8Compute, FrozenLinearRoutesThroughTheWeightsProducts) {
  torch::manual_seed(3);
  const torch::Tensor w = torch::randn({24, 40}), b = torch::randn({24});
  auto served = std::make_shared<ProductWeight>(w);
  const torch::Tensor x = torch::randn({2, 5, 40}).requires_grad_(true);
  const torch::Tensor y = frozenLinear(x, served, b);
  EXPECT_EQ(served->forwardCalls, 1);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 5, 24}));
  EXPECT_TRUE(torch::allclose(y, torch::nn::functional::linear(x.detach(), w, b), 1e-5, 1e-5));
  const torch::Tensor dy = torch::randn_like(y);
  y.mul_(1.0);  // callers may write into the output
  y.backward(dy);
  EXPECT_EQ(served->backwardCalls, 1);
  EXPECT_TRUE(torch::allclose(x.grad(), torch::matmul(dy, w), 1e-5, 1e-5));
}

// frozenLinearWithLora: the same forward, dx and LoRA gradients as the unserved weight.
TEST(Float8Compute, LoraLinearRoutesThroughTheWeightsProducts) {
  torch::manual_seed(4);
  const torch::Tensor w = torch::randn({24, 40}), b = torch::randn({24});
  const torch::Tensor down = torch::randn({4, 40}).requires_grad_(true), up = torch::randn({24, 4}).requires_grad_(true);
  const torch::Tensor x = torch::randn({6, 40});
  const torch::Tensor dy = torch::randn({6, 24});
  auto run = [&](const std::shared_ptr<ServedWeight>& served) {
    const torch::Tensor xin = x.clone().requires_grad_(true);
    down.mutable_grad() = torch::Tensor();
    up.mutable_grad() = torch::Tensor();
    const torch::Tensor y = frozenLinearWithLora(xin, w, b, down, up, 0.75, served);
    y.backward(dy);
    return std::vector<torch::Tensor>{y.detach(), xin.grad(), down.grad().clone(), up.grad().clone()};
  };
  const auto plain = run(nullptr);
  auto served = std::make_shared<ProductWeight>(w);
  const auto routed = run(served);
  EXPECT_EQ(served->forwardCalls, 1);
  EXPECT_EQ(served->backwardCalls, 1);
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(torch::allclose(plain[i], routed[i], 1e-5, 1e-5)) << i;
}

// The diagnostic that picks which passes' FP8 GEMMs accumulate fast (SINTER_FP8_FAST_ACCUM in the
// trainer, FP8_FAST_ACCUM in the GPU check), read here from a variable of the test's own.
TEST(Float8Compute, FastAccumulationFromTheEnvironment) {
  const char* variable = "SINTER_TEST_FP8_FAST_ACCUM";
  auto read = [&](const char* value) {
    if (value) ::setenv(variable, value, 1);
    else ::unsetenv(variable);
    Float8ScaledOptions o;  // fast accumulation in both passes, as fp8_fast trains
    float8FastAccumulationFromEnvironment(o, variable);
    ::unsetenv(variable);
    return std::make_pair(o.fastAccumulationForward, o.fastAccumulationBackward);
  };
  EXPECT_EQ(read(nullptr), std::make_pair(true, true));  // unset: as they were
  EXPECT_EQ(read(""), std::make_pair(true, true));
  EXPECT_EQ(read("0"), std::make_pair(false, false));
  EXPECT_EQ(read("forward"), std::make_pair(true, false));
  EXPECT_EQ(read("1"), std::make_pair(true, true));
  try {
    read("both");
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), variable)) << e.what();
    EXPECT_TRUE(contains(e.what(), "'both'")) << e.what();
  }
  ::unsetenv(variable);
}
