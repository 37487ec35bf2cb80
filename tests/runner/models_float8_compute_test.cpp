// fp8_scaled / fp8_fast on the CPU: the scale arithmetic, the refusals that name the option and the
// device, and the Linear's route through a served weight's own products (what fp8_fast's FP8 GEMMs
// plug into), checked with a weight that computes its products in float32. The FP8 GEMMs themselves
// need an FP8 GPU: tests/gpu/fp8_compute_check.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/float8_compute.h"
#include "models/frozen_linear_lora.h"
#include "models/linear.h"
#include "models/scaled_float8_weight.h"
#include "models/served_weight.h"

using namespace sinter::models;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A served weight that computes its products itself (as fp8_fast's does), in float32, counting calls.
class ProductWeight : public ServedWeight {
 public:
  explicit ProductWeight(torch::Tensor w) : w_(std::move(w)) {}
  torch::Tensor get(torch::ScalarType dtype) override { return w_.to(dtype); }
  bool computesProducts() const override { return true; }
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
    EXPECT_FALSE(linear->served->computesProducts());
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
