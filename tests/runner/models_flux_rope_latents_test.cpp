// FLUX's RoPE against values worked out by hand from its formula, and the 2x2 latent packing.
#include <gtest/gtest.h>

#include <cmath>

#include "models/flux/flux_latents.h"
#include "models/flux/flux_rope.h"

using namespace sinter::models;

// Axis a of width d turns channel pair i by pos_a * theta^(-2i/d). With axes (2, 2, 4) and theta
// 10000, a token at ids (0, 2, 3) has the pair angles:
//   axis 0 (d=2): pair 0: 0 * 1                = 0
//   axis 1 (d=2): pair 0: 2 * 1                = 2
//   axis 2 (d=4): pair 0: 3 * 1                = 3,   pair 1: 3 * 10000^(-2/4) = 3 * 0.01 = 0.03
TEST(FluxRope, RotationsAreTheFormulasAngles) {
  const torch::Tensor ids = torch::tensor({0.0f, 2.0f, 3.0f}).view({1, 1, 3});
  const torch::Tensor r = fluxRopeRotations(ids, {2, 2, 4}, 10000.0);
  ASSERT_EQ(r.sizes(), (std::vector<int64_t>{1, 1, 1, 4, 2, 2}));
  const double angles[4] = {0.0, 2.0, 3.0, 0.03};
  for (int i = 0; i < 4; ++i) {
    const torch::Tensor m = r[0][0][0][i];
    EXPECT_NEAR(m[0][0].item<double>(), std::cos(angles[i]), 1e-7) << i;
    EXPECT_NEAR(m[0][1].item<double>(), -std::sin(angles[i]), 1e-7) << i;
    EXPECT_NEAR(m[1][0].item<double>(), std::sin(angles[i]), 1e-7) << i;
    EXPECT_NEAR(m[1][1].item<double>(), std::cos(angles[i]), 1e-7) << i;
  }
}

// FLUX.1's own axes (16, 56, 56): the head's pair 8 + 5 is axis 1's pair 5, turned by
// row * 10000^(-10/56); pair 8 + 28 + 27 is axis 2's last pair, col * 10000^(-54/56).
TEST(FluxRope, FullAxesPickTheirChannelPairs) {
  const torch::Tensor ids = torch::tensor({0.0f, 7.0f, 100.0f}).view({1, 1, 3});
  const torch::Tensor r = fluxRopeRotations(ids, {16, 56, 56}, 10000.0);
  ASSERT_EQ(r.sizes(), (std::vector<int64_t>{1, 1, 1, 64, 2, 2}));
  const double a1 = 7.0 * std::pow(10000.0, -10.0 / 56.0), a2 = 100.0 * std::pow(10000.0, -54.0 / 56.0);
  EXPECT_NEAR(r[0][0][0][13][1][0].item<double>(), std::sin(a1), 1e-7);
  EXPECT_NEAR(r[0][0][0][63][0][0].item<double>(), std::cos(a2), 1e-7);
  EXPECT_NEAR(r[0][0][0][3][0][0].item<double>(), 1.0, 0);  // axis 0 at position 0: no turn
}

// A pair (x0, x1) turned by angle a becomes (x0 cos a - x1 sin a, x0 sin a + x1 cos a).
TEST(FluxRope, ApplyTurnsEachPair) {
  const torch::Tensor ids = torch::tensor({0.0f, 2.0f, 3.0f}).view({1, 1, 3});
  const torch::Tensor r = fluxRopeRotations(ids, {2, 2, 4}, 10000.0);
  // [B=1, heads=1, L=1, D=8]: pairs (1, 2), (3, 4), (5, 6), (7, 8)
  const torch::Tensor x = torch::arange(1, 9, torch::kFloat32).view({1, 1, 1, 8});
  const torch::Tensor y = applyFluxRope(x, r).view({8});
  const double angles[4] = {0.0, 2.0, 3.0, 0.03};
  for (int i = 0; i < 4; ++i) {
    const double x0 = 2 * i + 1, x1 = 2 * i + 2, a = angles[i];
    EXPECT_NEAR(y[2 * i].item<double>(), x0 * std::cos(a) - x1 * std::sin(a), 1e-5) << i;
    EXPECT_NEAR(y[2 * i + 1].item<double>(), x0 * std::sin(a) + x1 * std::cos(a), 1e-5) << i;
  }
  EXPECT_EQ(applyFluxRope(x.to(torch::kBFloat16), r).scalar_type(), torch::kBFloat16);
}

TEST(FluxRope, RejectsIdsOfTheWrongAxes) {
  EXPECT_THROW(fluxRopeRotations(torch::zeros({1, 4, 2}), {16, 56, 56}, 10000.0), std::invalid_argument);
}

// Token (row, col) holds the 2x2 patch at latent rows 2row..2row+1, cols 2col..2col+1, channel c's
// four values at token channels 4c .. 4c+3 in the order (0,0), (0,1), (1,0), (1,1).
TEST(FluxLatents, PackingPutsEachPatchInOneToken) {
  const torch::Tensor latents = torch::randn({2, 16, 6, 8});
  const torch::Tensor tokens = packFluxLatents(latents);
  ASSERT_EQ(tokens.sizes(), (std::vector<int64_t>{2, 12, 64}));
  const int64_t row = 2, col = 1, c = 5, token = row * 4 + col;
  EXPECT_EQ(tokens[1][token][4 * c + 0].item<float>(), latents[1][c][2 * row][2 * col].item<float>());
  EXPECT_EQ(tokens[1][token][4 * c + 1].item<float>(), latents[1][c][2 * row][2 * col + 1].item<float>());
  EXPECT_EQ(tokens[1][token][4 * c + 2].item<float>(), latents[1][c][2 * row + 1][2 * col].item<float>());
  EXPECT_EQ(tokens[1][token][4 * c + 3].item<float>(), latents[1][c][2 * row + 1][2 * col + 1].item<float>());
  EXPECT_TRUE(torch::equal(unpackFluxLatents(tokens, 3, 4), latents));
  EXPECT_THROW(packFluxLatents(torch::randn({1, 16, 5, 8})), std::invalid_argument);
  EXPECT_THROW(unpackFluxLatents(tokens, 4, 4), std::invalid_argument);
}

TEST(FluxLatents, ImageIdsAreZeroRowColumnInTokenOrder) {
  const torch::Tensor ids = fluxImageIds(2, 3, 4);
  ASSERT_EQ(ids.sizes(), (std::vector<int64_t>{2, 12, 3}));
  EXPECT_EQ(ids.scalar_type(), torch::kFloat32);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        EXPECT_EQ(ids[b][r * 4 + c][0].item<float>(), 0.0f);
        EXPECT_EQ(ids[b][r * 4 + c][1].item<float>(), static_cast<float>(r));
        EXPECT_EQ(ids[b][r * 4 + c][2].item<float>(), static_cast<float>(c));
      }
  const torch::Tensor txt = fluxTextIds(2, 5);
  EXPECT_EQ(txt.sizes(), (std::vector<int64_t>{2, 5, 3}));
  EXPECT_EQ(txt.abs().sum().item<float>(), 0.0f);
}
