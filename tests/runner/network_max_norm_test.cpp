// scale_weight_norms: sd-scripts' apply_max_norm_regularization (networks/lora.py) against a
// float64 reference, on the tiny SDXL U-Net's Linear, 1x1 and 3x3 (conv_dim) adapters.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "models/sdxl_unet.h"
#include "network/lora_max_norm.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"

using namespace sinter;
using namespace sinter::network;

namespace {

// up @ down * alpha / rank in float64, with the 3x3 case as sum_r up[o, r] down[r, i, k, l].
torch::Tensor referenceDelta(const models::LoraAdapter& a) {
  const torch::Tensor down = a.down.detach().to(torch::kFloat64), up = a.up.detach().to(torch::kFloat64);
  const double scale = a.alpha / static_cast<double>(down.size(0));
  if (down.dim() == 2) return torch::matmul(up, down) * scale;
  return torch::einsum("or,rikl->oikl", {up.flatten(1), down}) * scale;
}

}  // namespace

TEST(LoraMaxNorm, ScalesModulesOverTheLimitBackToItAsSdScripts) {
  torch::manual_seed(3);
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  LoraNetworkOptions o;
  o.dim = 4;
  o.alpha = 2.0;
  o.args = parseNetworkArgs({"conv_dim=3", "conv_alpha=1.5"});
  LoraNetwork net(o);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  bool linear = false, conv1 = false, conv3 = false;
  {
    torch::NoGradGuard noGrad;
    int i = 0;
    for (const LoraModule& m : net.modules()) {
      // Alternate modules well over and well under the limit.
      const double spread = (i++ % 2 == 0) ? 3.0 : 0.01;
      m.adapter->down.copy_(torch::randn(m.adapter->down.sizes()) * spread);
      m.adapter->up.copy_(torch::randn(m.adapter->up.sizes()) * spread);
      linear |= m.adapter->down.dim() == 2;
      conv1 |= m.adapter->down.dim() == 4 && m.adapter->down.size(2) == 1;
      conv3 |= m.adapter->down.dim() == 4 && m.adapter->down.size(2) == 3;
    }
  }
  ASSERT_TRUE(linear && conv1 && conv3);

  const double limit = 1.0;
  std::vector<torch::Tensor> downBefore, upBefore;
  std::vector<double> norms;
  for (const LoraModule& m : net.modules()) {
    downBefore.push_back(m.adapter->down.detach().to(torch::kFloat64));
    upBefore.push_back(m.adapter->up.detach().to(torch::kFloat64));
    norms.push_back(referenceDelta(*m.adapter).norm().item<double>());
  }
  LoraMaxNorm maxNorm(net, limit);
  maxNorm.apply();

  int scaled = 0;
  double sum = 0, largest = 0;
  for (size_t i = 0; i < net.modules().size(); ++i) {
    const models::LoraAdapter& a = *net.modules()[i].adapter;
    // norm clamped below at limit / 2, desired at most limit; each factor sqrt(ratio).
    const double clamped = std::max(norms[i], limit / 2);
    const double ratio = std::min(clamped, limit) / clamped;
    if (ratio != 1.0) ++scaled;
    EXPECT_TRUE(torch::allclose(a.down.to(torch::kFloat64), downBefore[i] * std::sqrt(ratio), 1e-6, 1e-7)) << i;
    EXPECT_TRUE(torch::allclose(a.up.to(torch::kFloat64), upBefore[i] * std::sqrt(ratio), 1e-6, 1e-7)) << i;
    const double after = referenceDelta(a).norm().item<double>();
    if (norms[i] > limit) EXPECT_NEAR(after, limit, 1e-5) << i;
    sum += norms[i] * ratio;
    largest = std::max(largest, norms[i] * ratio);
  }
  EXPECT_GT(scaled, 0);
  EXPECT_LT(scaled, static_cast<int>(net.modules().size()));
  const torch::Tensor f = maxNorm.figures();
  EXPECT_EQ(f[0].item<double>(), scaled);
  EXPECT_NEAR(f[1].item<double>(), sum / net.modules().size(), 1e-5 * sum / net.modules().size());
  EXPECT_NEAR(f[2].item<double>(), largest, 1e-5);

  // A second pass finds every module within the limit (up to float32 rounding of the norm).
  maxNorm.apply();
  EXPECT_LE(maxNorm.figures()[2].item<double>(), limit * (1 + 1e-5));
}

TEST(LoraMaxNorm, RefusesANonPositiveLimit) {
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  LoraNetwork net(LoraNetworkOptions{});
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  EXPECT_THROW(LoraMaxNorm(net, 0.0), std::invalid_argument);
  EXPECT_THROW(LoraMaxNorm(net, -1.0), std::invalid_argument);
}
