// scale_weight_norms: sd-scripts' apply_max_norm_regularization (networks/lora.py) against a
// float64 reference, on the tiny SDXL U-Net's Linear, 1x1 and 3x3 (conv_dim) adapters.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/unet/sdxl_unet.h"
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

// sd-scripts' (and lycoris.kohya's) ratio: the norm clamped below at limit / 2, the desired norm
// at most the limit; exactly 1 for a module within the limit.
double maxNormRatio(double norm, double limit) {
  const double clamped = std::max(norm, limit / 2);
  return std::min(clamped, limit) / clamped;
}

// The figures apply() records for modules whose norms were `norms` before it: how many were
// scaled (some, not all, in these tests), the mean and the largest norm after scaling.
void expectFigures(const torch::Tensor& figures, const std::vector<double>& norms, double limit) {
  int scaled = 0;
  double sum = 0, largest = 0;
  for (double norm : norms) {
    const double ratio = maxNormRatio(norm, limit);
    if (ratio != 1.0) ++scaled;
    sum += norm * ratio;
    largest = std::max(largest, norm * ratio);
  }
  EXPECT_GT(scaled, 0);
  EXPECT_LT(scaled, static_cast<int>(norms.size()));
  const double mean = sum / static_cast<double>(norms.size());
  EXPECT_EQ(figures[0].item<double>(), scaled);
  EXPECT_NEAR(figures[1].item<double>(), mean, 1e-5 * mean);
  EXPECT_NEAR(figures[2].item<double>(), largest, 1e-5 * largest);
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

  for (size_t i = 0; i < net.modules().size(); ++i) {
    const models::LoraAdapter& a = *net.modules()[i].adapter;
    const double ratio = maxNormRatio(norms[i], limit);  // each factor scaled by sqrt(ratio)
    EXPECT_TRUE(torch::allclose(a.down.to(torch::kFloat64), downBefore[i] * std::sqrt(ratio), 1e-6, 1e-7)) << i;
    EXPECT_TRUE(torch::allclose(a.up.to(torch::kFloat64), upBefore[i] * std::sqrt(ratio), 1e-6, 1e-7)) << i;
    const double after = referenceDelta(a).norm().item<double>();
    if (norms[i] > limit) EXPECT_NEAR(after, limit, 1e-5) << i;
  }
  expectFigures(maxNorm.figures(), norms, limit);

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

// lycoris.kohya's apply_max_norm_regularization: LoCon and LoHa scale their scalar (folded into
// lora_up / hada_w1_a when use_scalar is off) by the ratio, LoKr each of its n factors by
// ratio^(1/n); IA3 has no max norm and is neither scaled nor counted. The figures are all 0 when
// no module was scaled.
TEST(LoraMaxNorm, LycorisModulesScaleAsLycorisDoes) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> scaledNames;  // the tensors each over-limit module multiplies
    bool rootOfFactors;                    // LoKr: each by ratio^(1/n)
  };
  const std::vector<Case> cases{{{"algo=locon", "conv_dim=2"}, {"lora_up.weight"}, false},
                                {{"algo=locon", "use_scalar=True"}, {"scalar"}, false},
                                {{"algo=loha", "conv_dim=2"}, {"hada_w1_a"}, false},
                                {{"algo=lokr", "factor=4", "decompose_both=True"}, {}, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.front() + (c.args.size() > 1 ? " " + c.args[1] : ""));
    torch::manual_seed(5);
    models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
    LoraNetworkOptions o;
    o.dim = 4;
    o.alpha = 2.0;
    o.args = parseNetworkArgs(c.args, "lycoris.kohya");
    LoraNetwork net(o);
    net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
    ASSERT_GT(net.modules().size(), 2u);
    {
      torch::NoGradGuard noGrad;
      int i = 0;
      for (const LoraModule& m : net.modules()) {
        const double spread = (i++ % 2 == 0) ? 2.0 : 0.01;
        for (torch::Tensor& t : m.lycoris->trainedTensors()) t.copy_(torch::randn(t.sizes()) * spread + (t.dim() == 0 ? 1.0 : 0.0));
      }
    }
    auto norm = [](const models::LycorisAdapter& a) {
      models::LycorisTensors t = a.tensors;
      for (auto& item : t.byName) item.second = item.second.detach().to(torch::kFloat64);
      if (a.algo == models::LycorisAlgo::LoKr) {  // LoKr's get_weight leaves the scalar out
        t.byName.erase("scalar");
      }
      return models::lycorisDelta(a.algo, a.shape, t, a.scale, {}).norm().item<double>();
    };
    std::vector<std::map<std::string, torch::Tensor>> before;
    std::vector<double> norms;
    for (const LoraModule& m : net.modules()) {
      std::map<std::string, torch::Tensor> copy;
      for (const auto& item : m.lycoris->tensors.byName) copy[item.first] = item.second.detach().to(torch::kFloat64).clone();
      before.push_back(copy);
      norms.push_back(norm(*m.lycoris));
    }
    const double limit = 1.0;
    LoraMaxNorm maxNorm(net, limit);
    maxNorm.apply();
    for (size_t i = 0; i < net.modules().size(); ++i) {
      const models::LycorisAdapter& a = *net.modules()[i].lycoris;
      const double ratio = maxNormRatio(norms[i], limit);
      std::vector<std::string> factors = c.scaledNames;
      if (c.rootOfFactors)
        for (const std::string& name : a.tensors.names)
          if (a.tensors.trained.at(name)) factors.push_back(name);
      for (const std::string& name : a.tensors.names) {
        const bool isFactor = std::find(factors.begin(), factors.end(), name) != factors.end();
        const double f = !isFactor ? 1.0 : c.rootOfFactors ? std::pow(ratio, 1.0 / static_cast<double>(factors.size())) : ratio;
        // The ratio comes from a float32 norm over the whole delta (up to 2^17 terms here).
        EXPECT_TRUE(torch::allclose(a.tensors.at(name).to(torch::kFloat64), before[i].at(name) * f, 1e-5, 1e-7)) << i << " " << name;
      }
      if (norms[i] > limit) EXPECT_NEAR(norm(a), limit, 1e-5) << i;
    }
    expectFigures(maxNorm.figures(), norms, limit);
    // A limit no module reaches: lycoris.kohya reports (0, 0, 0), where sd-scripts' LoRA would
    // still report the mean and largest norm.
    LoraMaxNorm loose(net, 1e9);
    loose.apply();
    EXPECT_EQ(loose.figures().abs().sum().item<double>(), 0.0);
  }
}

TEST(LoraMaxNorm, LycorisIa3HasNoMaxNorm) {
  torch::manual_seed(6);
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  LoraNetworkOptions o;
  o.args = parseNetworkArgs({"algo=ia3"}, "lycoris.kohya");
  LoraNetwork net(o);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  std::vector<torch::Tensor> before;
  {
    torch::NoGradGuard noGrad;
    for (torch::Tensor& p : net.parameters()) {
      p.copy_(torch::randn(p.sizes()) * 100.0);
      before.push_back(p.clone());
    }
  }
  LoraMaxNorm maxNorm(net, 1.0);
  maxNorm.apply();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(net.parameters()[i], before[i])) << i;
  EXPECT_EQ(maxNorm.figures().abs().sum().item<double>(), 0.0);
}
