// The masked loss against a float64 reference of sd-scripts' formula (apply_masked_loss: the mask
// brought to the loss's size by F.interpolate(mode="area"), multiplied in before the mean over
// all but the batch, with no renormalisation), for both families' losses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "train/objectives/diffusion_loss.h"
#include "train/objectives/flow_matching.h"
#include "train/objectives/masked_loss.h"

using namespace sinter::train;

namespace {

// PyTorch's area interpolation (adaptive average pooling): output cell i covers input rows
// floor(i * H / h) to ceil((i + 1) * H / h), in double.
std::vector<double> areaReference(const torch::Tensor& mask, int64_t b, int64_t h, int64_t w) {
  const torch::Tensor m = mask.to(torch::kFloat64);
  const int64_t H = m.size(1), W = m.size(2);
  std::vector<double> out(static_cast<size_t>(h * w));
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < w; ++j) {
      const int64_t y0 = (i * H) / h, y1 = ((i + 1) * H + h - 1) / h;
      const int64_t x0 = (j * W) / w, x1 = ((j + 1) * W + w - 1) / w;
      double sum = 0;
      for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) sum += m[b][y][x].item<double>();
      out[static_cast<size_t>(i * w + j)] = sum / static_cast<double>((y1 - y0) * (x1 - x0));
    }
  return out;
}

// mean_b( weight_b * mean_{c,y,x}( (pred - target)^2 * weighting_b * mask_b(y, x) ) ), in double.
double maskedL2Reference(const torch::Tensor& pred, const torch::Tensor& target, const torch::Tensor& mask,
                         const std::vector<double>& lossWeights, const std::vector<double>& weighting) {
  const torch::Tensor p = pred.to(torch::kFloat64), t = target.to(torch::kFloat64);
  const int64_t B = p.size(0), C = p.size(1), h = p.size(2), w = p.size(3);
  double total = 0;
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<double> m = areaReference(mask, b, h, w);
    double sum = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const double d = p[b][c][y][x].item<double>() - t[b][c][y][x].item<double>();
          sum += d * d * weighting[static_cast<size_t>(b)] * m[static_cast<size_t>(y * w + x)];
        }
    total += lossWeights[static_cast<size_t>(b)] * sum / static_cast<double>(C * h * w);
  }
  return total / static_cast<double>(B);
}

}  // namespace

TEST(MaskedLoss, AreaInterpolationIsPyTorchsAreaMode) {
  torch::manual_seed(3);
  const torch::Tensor masks = torch::rand({2, 40, 24});
  for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {7, 5}, {40, 24}}) {
    const torch::Tensor m = lossMaskAt(masks, h, w);
    ASSERT_EQ(m.sizes(), (std::vector<int64_t>{2, 1, h, w}));
    for (int64_t b = 0; b < 2; ++b) {
      const std::vector<double> ref = areaReference(masks, b, h, w);
      for (int64_t i = 0; i < h * w; ++i)
        EXPECT_NEAR(m[b][0].flatten()[i].item<double>(), ref[static_cast<size_t>(i)], 1e-6) << h << "x" << w;
    }
  }
}

TEST(MaskedLoss, DiffusionLossEqualsSdScriptsFormula) {
  torch::manual_seed(11);
  const torch::Tensor pred = torch::randn({3, 4, 4, 6}), target = torch::randn({3, 4, 4, 6});
  torch::Tensor mask = torch::rand({3, 32, 48});
  mask[1].fill_(0.0);  // fully masked out: contributes nothing
  mask[2].fill_(1.0);  // fully kept: the unmasked loss
  const torch::Tensor lossWeights = torch::tensor({1.0f, 0.5f, 2.0f});
  const DdpmNoiseSchedule schedule;
  const torch::Tensor timesteps = torch::tensor({10, 500, 990}, torch::kLong);
  const DiffusionLossOptions options;  // l2, no SNR weighting
  const double got = diffusionLoss(pred, target, timesteps, lossWeights, schedule, options, lossMaskAt(mask, 4, 6)).item<double>();
  const double want = maskedL2Reference(pred, target, mask, {1.0, 0.5, 2.0}, {1.0, 1.0, 1.0});
  // float32 sums of ~300 terms of size ~1: a few float32 ulps of the total.
  EXPECT_NEAR(got, want, 1e-5 * std::abs(want) + 1e-7);
  // Unmasked, the same call differs (the mask did something) and equals the all-ones mask.
  const double unmasked = diffusionLoss(pred, target, timesteps, lossWeights, schedule, options).item<double>();
  EXPECT_GT(std::abs(unmasked - got), 1e-3);
  const double ones =
      diffusionLoss(pred, target, timesteps, lossWeights, schedule, options, lossMaskAt(torch::ones({3, 32, 48}), 4, 6))
          .item<double>();
  EXPECT_NEAR(ones, unmasked, 1e-6 * std::abs(unmasked));
  // A mask of the wrong size is refused.
  EXPECT_THROW(diffusionLoss(pred, target, timesteps, lossWeights, schedule, options, lossMaskAt(mask, 4, 5)),
               std::invalid_argument);
}

TEST(MaskedLoss, FlowMatchingLossEqualsSdScriptsFormula) {
  torch::manual_seed(5);
  const torch::Tensor out = torch::randn({2, 16, 4, 4}), noisy = torch::randn({2, 16, 4, 4});
  const torch::Tensor target = torch::randn({2, 16, 4, 4});
  const torch::Tensor sigmas = torch::tensor({0.3f, 0.8f});
  const torch::Tensor mask = torch::rand({2, 32, 32});
  FlowMatchingOptions options;
  options.weightingScheme = WeightingScheme::Cosmap;  // a per-sample weighting, multiplied with the mask
  const FlowPrediction prediction = applyModelPredictionType(options, out, noisy, sigmas);
  const torch::Tensor lossWeights = torch::tensor({1.0f, 0.25f});
  const double got =
      flowMatchingLoss(options, prediction, target, sigmas, lossWeights, lossMaskAt(mask, 4, 4)).item<double>();
  std::vector<double> weighting;
  for (double s : {0.3, 0.8}) weighting.push_back(2.0 / (M_PI * (1 - 2 * s + 2 * s * s)));
  const double want = maskedL2Reference(prediction.prediction, target, mask, {1.0, 0.25}, weighting);
  EXPECT_NEAR(got, want, 1e-5 * std::abs(want) + 1e-7);
  EXPECT_GT(std::abs(flowMatchingLoss(options, prediction, target, sigmas, lossWeights).item<double>() - got), 1e-3);
}
