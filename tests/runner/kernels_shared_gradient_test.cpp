// The split whose parts' consumers write its gradient in place (kernels/shared_gradient.h): the same
// values and gradients as split_with_sizes, the buffer handed on without a copy where every part
// was written into it, copies and zeros for the parts that were not.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kernels/shared_gradient.h"

namespace {

using sinter::kernels::GradientInto;
using sinter::kernels::SharedGradient;
using sinter::kernels::splitSharingGradient;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// x * factor, whose backward writes its input gradient into a shared gradient's part, as the
// fused kernels do.
struct ScaleIntoShared : public torch::autograd::Function<ScaleIntoShared> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double factor, const GradientInto& into) {
    ctx->saved_data["factor"] = factor;
    sinter::kernels::keepGradientInto(ctx, into);
    ctx->save_for_backward({x});
    return x * factor;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor dx = sinter::kernels::gradientInto(ctx, ctx->get_saved_variables()[0]);
    dx.copy_(grads[0] * ctx->saved_data["factor"].toDouble());
    return {dx, torch::Tensor(), torch::Tensor()};
  }
};

torch::Tensor leaf(const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); }

TEST(SharedGradient, SplitsAsSplitWithSizes) {
  torch::manual_seed(1);
  const torch::Tensor y = torch::randn({2, 5, 9});
  const auto split = splitSharingGradient(y, {3, 6});
  const std::vector<torch::Tensor> stock = y.split_with_sizes({3, 6}, -1);
  ASSERT_EQ(split.parts.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(torch::equal(split.parts[i], stock[i]));
    EXPECT_EQ(split.parts[i].data_ptr(), stock[i].data_ptr());  // views, not copies
  }
  EXPECT_EQ(split.gradient->parts(), 2u);
}

TEST(SharedGradient, StockConsumersGetTheConcatenation) {
  torch::manual_seed(2);
  const torch::Tensor base = torch::randn({2, 4, 10}), g0 = torch::randn({2, 4, 4}), g1 = torch::randn({2, 4, 6});
  torch::Tensor a = leaf(base), b = leaf(base);
  const auto split = splitSharingGradient(a, {4, 6});
  torch::autograd::backward({(split.parts[0] * 3).sin(), split.parts[1] * 2}, {g0, g1});
  const std::vector<torch::Tensor> stock = b.split_with_sizes({4, 6}, -1);
  torch::autograd::backward({(stock[0] * 3).sin(), stock[1] * 2}, {g0, g1});
  EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 0, 0)) << (a.grad() - b.grad()).abs().max();
}

TEST(SharedGradient, ConsumersWritingInPlaceGiveTheSameGradient) {
  torch::manual_seed(3);
  const torch::Tensor base = torch::randn({3, 10}), g0 = torch::randn({3, 4}), g1 = torch::randn({3, 6});
  torch::Tensor a = leaf(base), b = leaf(base);
  const auto split = splitSharingGradient(a, {4, 6});
  // Both in place, and a mixed case: part 0 in place, part 1 by a stock operator.
  torch::autograd::backward({ScaleIntoShared::apply(split.parts[0], 3.0, split.into(0)),
                             ScaleIntoShared::apply(split.parts[1], -2.0, split.into(1))},
                            {g0, g1});
  const torch::Tensor expected = torch::cat({g0 * 3.0, g1 * -2.0}, -1);
  EXPECT_TRUE(torch::allclose(a.grad(), expected, 0, 0));
  const auto mixed = splitSharingGradient(b, {4, 6});
  torch::autograd::backward({ScaleIntoShared::apply(mixed.parts[0], 3.0, mixed.into(0)), mixed.parts[1] * -2.0}, {g0, g1});
  EXPECT_TRUE(torch::allclose(b.grad(), expected, 0, 0));
}

TEST(SharedGradient, AssembleHandsOnTheBufferItsPartsWereWrittenInto) {
  SharedGradient shared({2, 7}, {3, 4}, torch::TensorOptions().dtype(torch::kFloat32));
  torch::Tensor p0 = shared.part(0), p1 = shared.part(1);
  p0.fill_(1.0);
  p1.fill_(2.0);
  const torch::Tensor whole = shared.assemble({p0, p1});
  EXPECT_EQ(whole.data_ptr(), p0.data_ptr());  // no copy
  EXPECT_EQ(whole.sizes(), (std::vector<int64_t>{2, 7}));
  EXPECT_TRUE(torch::equal(whole, torch::cat({torch::ones({2, 3}), torch::full({2, 4}, 2.0)}, -1)));
  // The holder let go: the next backward pass gets a buffer of its own.
  EXPECT_NE(shared.part(0).data_ptr(), p0.data_ptr());
}

TEST(SharedGradient, AnUnusedPartGetsZeros) {
  SharedGradient shared({2, 5}, {2, 3}, torch::TensorOptions().dtype(torch::kFloat64));
  torch::Tensor p1 = shared.part(1);
  p1.fill_(4.0);
  const torch::Tensor whole = shared.assemble({torch::Tensor(), p1});
  EXPECT_TRUE(torch::equal(whole.narrow(-1, 0, 2), torch::zeros({2, 2}, torch::kFloat64)));
  EXPECT_TRUE(torch::equal(whole.narrow(-1, 2, 3), torch::full({2, 3}, 4.0, torch::kFloat64)));
  // Nothing written in place at all: the concatenation of what came.
  SharedGradient fresh({1, 3}, {1, 2}, torch::TensorOptions().dtype(torch::kFloat32));
  const torch::Tensor cat = fresh.assemble({torch::full({1, 1}, 5.0), torch::Tensor()});
  EXPECT_TRUE(torch::equal(cat, torch::tensor({{5.0f, 0.0f, 0.0f}})));
}

TEST(SharedGradient, APartTheSplitDoesNotHaveIsRefused) {
  const auto split = splitSharingGradient(leaf(torch::zeros({2, 9})), {3, 6});
  try {
    ScaleIntoShared::apply(split.parts[0], 2.0, split.into(2));
    FAIL() << "no error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared gradient: no part 2 in a split of 2 parts"), std::string::npos) << e.what();
  }
}

TEST(SharedGradient, WidthsThatDoNotSumAreRefused) {
  try {
    splitSharingGradient(torch::zeros({2, 9}), {3, 5});
    FAIL() << "no error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("widths do not sum to the last dimension of [2, 9]"), std::string::npos) << e.what();
  }
}

}  // namespace
