// fused_optimizer_groups (sdxl_train.py) and blockwise_fused_optimizers (flux_train.py): the
// parameters are stepped within the backward pass, each as soon as its gradient is complete, with
// per-parameter gradient clipping as sd-scripts' hooks clip. For an optimizer whose update is per
// parameter this is the plain step's arithmetic: checked for AdamW, AdamW8bit and Lion.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config.h"
#include "core/registry.h"
#include "train/optim/fused_backward.h"
#include "train/optim/grad_clip.h"
#include "train/optim/make_optimizer.h"
#include "train/optim/optimizer_args.h"

using namespace sinter;
using namespace sinter::train;

namespace {

torch::Tensor model(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, const torch::Tensor& w2) {
  return torch::matmul(torch::tanh(torch::matmul(x, w.t()) + b), w2.t()).pow(2).mean();
}

}  // namespace

TEST(FusedOptimizerGroups, PerParameterStepsEqualThePlainStep) {
  for (const std::string type : {"AdamW", "AdamW8bit", "Lion"}) {
    const OptimizerSettings settings = parseOptimizerSettings(type, {"weight_decay=0.01"});
    checkFusedBackwardPass(settings, 1, "fused_optimizer_groups");
    for (double maxNorm : {0.0, 0.5}) {
      torch::manual_seed(8);
      // 8-bit states need parameters of at least 4096 elements (min_8bit_size).
      const torch::Tensor w0 = torch::randn({96, 64}) * 0.1, b0 = torch::randn({96}), w20 = torch::randn({2, 96}) * 0.1;
      torch::Tensor w = w0.clone().set_requires_grad(true), b = b0.clone().set_requires_grad(true),
                    w2 = w20.clone().set_requires_grad(true);
      torch::Tensor fw = w0.clone().set_requires_grad(true), fb = b0.clone().set_requires_grad(true),
                    fw2 = w20.clone().set_requires_grad(true);
      auto plain = makeOptimizer(settings, {{"unet", 1e-3, {w, b, w2}}}, /*fusedBackwardPass=*/false);
      auto perParam = makeOptimizer(settings, {{"unet", 1e-3, {fw, fb, fw2}}}, /*fusedBackwardPass=*/true);
      FusedBackwardPass fused(*perParam, maxNorm);
      for (int step = 0; step < 4; ++step) {
        const torch::Tensor x = torch::randn({8, 64});
        model(x, w, b, w2).backward();
        if (maxNorm > 0)
          for (const torch::Tensor& p : {w, b, w2}) clipGradNorm({p}, maxNorm);
        plain->step();
        plain->zeroGrad();
        perParam->advanceStep();
        model(x, fw, fb, fw2).backward();
        for (const torch::Tensor& p : {fw, fb, fw2}) EXPECT_FALSE(p.grad().defined()) << type << ": a gradient was kept";
        // Same arithmetic, same order of operations per element: equal up to the fused AdamW
        // kernel's rounding where the plain step uses it (CUDA only; here both are elementwise).
        EXPECT_TRUE(torch::allclose(w, fw, 1e-6, 1e-7) && torch::allclose(b, fb, 1e-6, 1e-7) &&
                    torch::allclose(w2, fw2, 1e-6, 1e-7))
            << type << ", step " << step << ", max norm " << maxNorm;
      }
    }
  }
}

TEST(FusedOptimizerGroups, RefusesOptimizersThatEstimateAcrossParametersAndAccumulation) {
  EXPECT_THROW(checkFusedBackwardPass(parseOptimizerSettings("Prodigy", {}), 1, "fused_optimizer_groups"), std::invalid_argument);
  EXPECT_THROW(checkFusedBackwardPass(parseOptimizerSettings("DAdaptAdam", {}), 1, "blockwise_fused_optimizers"),
               std::invalid_argument);
  EXPECT_THROW(checkFusedBackwardPass(parseOptimizerSettings("AdamW", {}), 2, "fused_optimizer_groups"), std::invalid_argument);
  // fused_backward_pass itself stays Adafactor-only, as in sd-scripts.
  EXPECT_THROW(checkFusedBackwardPass(parseOptimizerSettings("AdamW", {}), 1, "fused_backward_pass"), std::invalid_argument);
  try {
    checkFusedBackwardPass(parseOptimizerSettings("Prodigy", {}), 1, "fused_optimizer_groups");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fused_optimizer_groups"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Prodigy"), std::string::npos) << e.what();
  }
}

TEST(FusedOptimizerGroups, TheConfigNamesWhichOptionAsked) {
  Config c;
  c.set("training_type", Value(std::string("finetune")));
  EXPECT_EQ(fusedBackwardOption(c), "");
  c.set("fused_optimizer_groups", Value(static_cast<long long>(4)));
  EXPECT_EQ(fusedBackwardOption(c), "fused_optimizer_groups");
  EXPECT_TRUE(fusedBackwardPassRequested(c));
  Config flux;
  flux.set("training_type", Value(std::string("finetune")));
  flux.set("blockwise_fused_optimizers", Value(true));
  EXPECT_EQ(fusedBackwardOption(flux), "blockwise_fused_optimizers");
  Config lora;
  lora.set("training_type", Value(std::string("lora")));
  lora.set("fused_optimizer_groups", Value(static_cast<long long>(4)));
  EXPECT_EQ(fusedBackwardOption(lora), "");
}
