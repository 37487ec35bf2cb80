// FLUX's training step on a tiny transformer (CPU): the loss is flow matching as sd-scripts'
// flux_train_network computes it, re-done here by hand from the same draws; staging, the text
// mask, gradients and schnell.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/flux/flux_latents.h"
#include "models/flux/flux_transformer.h"
#include "train/base/device_info.h"
#include "train/flux/flux_train_step.h"

using namespace sinter;
using namespace sinter::train;

namespace {

struct Fixture {
  models::FluxConfig config;
  models::FluxTransformer transformer{nullptr};
  FluxStepBatch batch;

  explicit Fixture(bool dev = true) : config(models::FluxConfig::tiny(dev)) {
    torch::manual_seed(3);
    transformer = models::FluxTransformer(config);
    batch.latents = torch::randn({2, 16, 8, 6});
    batch.t5 = torch::randn({2, 5, config.contextInDim});
    batch.t5Mask = torch::tensor({{1, 1, 1, 0, 0}, {1, 1, 1, 1, 0}}, torch::kFloat32);
    batch.pooled = torch::randn({2, config.vecInDim});
    batch.lossWeights = torch::tensor({1.0, 0.5});
  }
};

FluxStepOptions options() {
  FluxStepOptions o;
  o.guidanceScale = 2.5;
  return o;
}

}  // namespace

TEST(FluxTrainStep, LossIsFlowMatchingOnThePackedLatents) {
  Fixture f;
  const FluxStepOptions o = options();
  FluxTrainStep step(f.transformer, o, torch::kCPU, 42);
  const double loss = step.loss(f.batch).item<double>();

  // The same draws, in the step's order: noise, then sigmas (timestep_sampling "sigma", shift 3).
  at::Generator g = makeGenerator(torch::kCPU, 42);
  const torch::Tensor noise = at::randn({2, 16, 8, 6}, g);
  const torch::Tensor u = at::rand({2}, g);
  const torch::Tensor sigmas = shiftedSigmaTable(3.0).index_select(0, (u * 1000).to(torch::kLong));
  const torch::Tensor s = sigmas.view({2, 1, 1, 1});
  const torch::Tensor xt = (1 - s) * f.batch.latents + s * noise;
  // Tokens of 2x2 patches, ids (0, row, col), text ids 0, guidance 2.5, timestep sigma.
  const torch::Tensor tokens = xt.reshape({2, 16, 4, 2, 3, 2}).permute({0, 2, 4, 1, 3, 5}).reshape({2, 12, 64});
  torch::Tensor ids = torch::zeros({2, 12, 3});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 3; ++c) {
      ids.select(1, r * 3 + c).select(1, 1).fill_(r);
      ids.select(1, r * 3 + c).select(1, 2).fill_(c);
    }
  torch::Tensor out;
  {
    torch::NoGradGuard noGrad;
    out = f.transformer->forward(tokens, ids, f.batch.t5, torch::zeros({2, 5, 3}), sigmas, f.batch.pooled,
                                 torch::full({2}, 2.5));
  }
  const torch::Tensor velocity = out.reshape({2, 4, 3, 16, 2, 2}).permute({0, 3, 1, 4, 2, 5}).reshape({2, 16, 8, 6});
  // sigma_scaled: x_t - sigma * output, against noise - x0; uniform weighting; loss weights 1, 0.5.
  const torch::Tensor perSample = (xt - s * velocity - (noise - f.batch.latents)).pow(2).mean({1, 2, 3});
  EXPECT_NEAR(loss, (perSample * f.batch.lossWeights).mean().item<double>(), 1e-5);
}

TEST(FluxTrainStep, StagedLossEqualsTheLossAndIsRepeatable) {
  Fixture f;
  FluxTrainStep a(f.transformer, options(), torch::kCPU, 7), b(f.transformer, options(), torch::kCPU, 7);
  const double direct = a.loss(f.batch).item<double>();
  const double staged = b.stagedLoss(b.stage(f.batch)).item<double>();
  EXPECT_EQ(direct, staged);
  EXPECT_NE(a.loss(f.batch).item<double>(), direct);  // fresh noise on the next step
}

// Staged text: the step stages token ids and its loss encodes them (two embedding tables stand in
// for CLIP-L and T5-XXL), which gives the loss of the same conditioning passed in encoded, with
// gradients reaching the encoders; T5-XXL's cached outputs are staged beside CLIP-L's ids.
TEST(FluxTrainStep, StagedTextEncodesInsideTheLoss) {
  Fixture f;
  torch::manual_seed(9);
  torch::nn::Embedding clip(50, f.config.vecInDim), t5(50, f.config.contextInDim);
  const torch::Tensor clipIds = torch::randint(50, {2, 77}), t5Ids = torch::randint(50, {2, 5});
  auto stagedText = [&](bool t5InStep) {
    FluxStagedText text;
    text.makeInputs = [t5InStep](const StepShape& s) {
      StaticBuffers b{{"clip_l_ids", torch::zeros({s.batch, 77}, torch::kLong)}};
      if (t5InStep) b["t5_ids"] = torch::zeros({s.batch, s.tokens}, torch::kLong);
      return b;
    };
    text.encode = [&, t5InStep](const StaticBuffers& in) {
      return FluxConditioning{t5InStep ? t5(in.at("t5_ids")) : torch::Tensor(), clip(in.at("clip_l_ids")).mean(1)};
    };
    return text;
  };
  FluxStepBatch encoded = f.batch;
  {
    torch::NoGradGuard noGrad;
    encoded.t5 = t5(t5Ids);
    encoded.pooled = clip(clipIds).mean(1);
  }
  FluxTrainStep direct(f.transformer, options(), torch::kCPU, 7), staged(f.transformer, options(), torch::kCPU, 7),
      partial(f.transformer, options(), torch::kCPU, 7);
  staged.useStagedText(stagedText(true));
  partial.useStagedText(stagedText(false));
  const double expected = direct.loss(encoded).item<double>();

  FluxStepBatch ids = f.batch;
  ids.t5 = torch::Tensor();
  ids.pooled = torch::Tensor();
  ids.textInputs = {{"clip_l_ids", clipIds}, {"t5_ids", t5Ids}};
  ids.t5Tokens = 5;
  const torch::Tensor loss = staged.loss(ids);
  EXPECT_NEAR(loss.item<double>(), expected, 1e-6 * std::abs(expected));
  loss.backward();
  for (const torch::Tensor& w : {clip->weight, t5->weight}) {
    ASSERT_TRUE(w.grad().defined());
    EXPECT_GT(w.grad().abs().sum().item<double>(), 0.0);
  }
  // T5-XXL's outputs cached: staged as they are, CLIP-L's ids beside them.
  FluxStepBatch cached = f.batch;
  cached.t5 = encoded.t5;
  cached.pooled = torch::Tensor();
  cached.textInputs = {{"clip_l_ids", clipIds}};
  EXPECT_NEAR(partial.loss(cached).item<double>(), expected, 1e-6 * std::abs(expected));
  // A batch without the ids the step stages is a programming error, named.
  EXPECT_THROW(staged.stage(f.batch), std::logic_error);
}

TEST(FluxTrainStep, GradientsReachTheTransformer) {
  Fixture f;
  FluxTrainStep step(f.transformer, options(), torch::kCPU, 1);
  step.loss(f.batch).backward();
  for (const char* name : {"img_in.weight", "double_blocks.0.img_attn.qkv.weight", "single_blocks.1.linear2.weight",
                           "guidance_in.in_layer.weight", "final_layer.linear.weight"}) {
    const torch::Tensor grad = f.transformer->named_parameters()[name].grad();
    ASSERT_TRUE(grad.defined()) << name;
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << name;
  }
}

TEST(FluxTrainStep, MaskedPaddingDoesNotChangeTheLoss) {
  Fixture f;
  FluxStepOptions o = options();
  o.applyT5AttnMask = true;
  FluxStepBatch changed = f.batch;
  changed.t5 = f.batch.t5.clone();
  changed.t5[0][4].fill_(100.0);  // padding of sample 0
  changed.t5[1][4].fill_(-50.0);  // padding of sample 1
  FluxTrainStep a(f.transformer, o, torch::kCPU, 9), b(f.transformer, o, torch::kCPU, 9);
  EXPECT_NEAR(a.loss(f.batch).item<double>(), b.loss(changed).item<double>(), 1e-6);
  // Without the mask the padding is attended to.
  FluxTrainStep c(f.transformer, options(), torch::kCPU, 9), d(f.transformer, options(), torch::kCPU, 9);
  EXPECT_GT(std::abs(c.loss(f.batch).item<double>() - d.loss(changed).item<double>()), 1e-6);
}

TEST(FluxTrainStep, SchnellTrainsWithoutGuidance) {
  Fixture f(/*dev=*/false);
  FluxTrainStep step(f.transformer, options(), torch::kCPU, 2);
  const torch::Tensor loss = step.loss(f.batch);
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  EXPECT_TRUE(f.transformer->img_in->weight.grad().defined());
}

TEST(FluxTrainStep, NeutralStagingWarmsUpAShape) {
  Fixture f;
  FluxTrainStep step(f.transformer, options(), torch::kCPU, 4);
  const StepShape shape{1, 4, 4, 3};
  step.stageNeutral(shape);
  const torch::Tensor loss = step.stagedLoss(shape);
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
}
