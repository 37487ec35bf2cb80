// The U-Net step's staged conditioning (objectives/unet_train_step.h): with trained text encoders,
// a batch stages its encoders' inputs (token ids) and the staged loss runs the encoder, so the
// whole step, encoder forward and backward included, is device work a graph can capture. Here on
// the tiny U-Net with a small trainable "encoder" (an embedding and a projection): the staged step
// gives the loss and gradients that the context-with-gradients path gives on the same draws.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/unet/sdxl_unet.h"
#include "train/objectives/unet_train_step.h"

using namespace sinter;
using namespace sinter::train;

namespace {

constexpr int64_t kBatch = 2, kTokens = 7, kVocab = 50;

struct Encoder : torch::nn::Module {
  torch::nn::Embedding embed{nullptr};
  torch::nn::Linear adm{nullptr};
  Encoder(const models::SdxlUnetConfig& c) {
    embed = register_module("embed", torch::nn::Embedding(kVocab, c.contextDim));
    adm = register_module("adm", torch::nn::Linear(c.contextDim, c.admInChannels));
  }
  UnetConditioning operator()(const torch::Tensor& ids) {
    const torch::Tensor context = embed->forward(ids);
    return {context, adm->forward(context.mean(1))};
  }
};

struct Fixture {
  models::SdxlUnetConfig config = models::SdxlUnetConfig::tiny();
  models::SdxlUnet unet{nullptr};
  std::shared_ptr<Encoder> encoder;
  torch::Tensor latents, ids, weights;
  Fixture() {
    torch::manual_seed(11);
    unet = models::SdxlUnet(config);
    encoder = std::make_shared<Encoder>(config);
    latents = torch::randn({kBatch, config.inChannels, 8, 8});
    ids = torch::randint(kVocab, {kBatch, kTokens}, torch::kLong);
    weights = torch::tensor({1.0f, 0.5f});
  }
  StagedConditioning staged(bool trains) {
    StagedConditioning c;
    c.makeInputs = [](const StepShape& s) { return StaticBuffers{{"ids", torch::zeros({s.batch, s.tokens}, torch::kLong)}}; };
    c.encode = [this, trains](const StaticBuffers& in) {
      std::optional<torch::NoGradGuard> noGrad;
      if (!trains) noGrad.emplace();
      return (*encoder)(in.at("ids"));
    };
    return c;
  }
  UnetStepBatch stagedBatch() const {
    UnetStepBatch b;
    b.latents = latents;
    b.lossWeights = weights;
    b.conditioningInputs = {{"ids", ids}};
    b.contextTokens = kTokens;
    return b;
  }
  // Every trained tensor's gradient (the encoder's and the U-Net's), then cleared.
  std::vector<torch::Tensor> takeGradients() {
    std::vector<torch::Tensor> out;
    for (auto* m : {static_cast<torch::nn::Module*>(encoder.get()), static_cast<torch::nn::Module*>(unet.get())})
      for (torch::Tensor& p : m->parameters()) {
        out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
        p.mutable_grad() = torch::Tensor();
      }
    return out;
  }
};

void expectSame(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-7)) << i << " max diff " << (a[i] - b[i]).abs().max().item<double>();
}

}  // namespace

TEST(UnetStagedConditioning, TrainedEncoderInsideTheStagedStepMatchesTheContextWithGradients) {
  Fixture f;
  // The reference: the encoder runs outside the step, its context carrying gradients in.
  UnetTrainStep reference(f.unet, UnetStepOptions{}, torch::kCPU, 5);
  const UnetConditioning c = (*f.encoder)(f.ids);
  UnetStepBatch withContext;
  withContext.latents = f.latents;
  withContext.context = c.context;
  withContext.admVector = c.admVector;
  withContext.lossWeights = f.weights;
  const torch::Tensor expected = reference.loss(withContext);
  expected.backward();
  const std::vector<torch::Tensor> expectedGrads = f.takeGradients();

  // The same draws through staging, as a captured step runs it: stage, then the staged loss.
  UnetTrainStep step(f.unet, UnetStepOptions{}, torch::kCPU, 5);
  step.useStagedConditioning(f.staged(true));
  StepShape shape;
  {
    torch::NoGradGuard noGrad;  // staging copies without gradients, as the loop stages
    shape = step.stage(f.stagedBatch());
  }
  EXPECT_EQ(shape.tokens, kTokens);
  const torch::Tensor staged = step.stagedLoss(shape);
  ASSERT_TRUE(staged.requires_grad());
  EXPECT_TRUE(torch::allclose(staged, expected, 1e-6, 1e-7)) << staged.item<double>() << " vs " << expected.item<double>();
  staged.backward();
  const std::vector<torch::Tensor> stagedGrads = f.takeGradients();
  expectSame(stagedGrads, expectedGrads);
  // The encoder trained: its gradients are not zero.
  EXPECT_GT(stagedGrads.front().abs().sum().item<double>(), 0.0);

  // loss() takes the same route for a batch of conditioning inputs.
  UnetTrainStep eager(f.unet, UnetStepOptions{}, torch::kCPU, 5);
  eager.useStagedConditioning(f.staged(true));
  const torch::Tensor viaLoss = eager.loss(f.stagedBatch());
  EXPECT_TRUE(torch::equal(viaLoss, staged));
}

TEST(UnetStagedConditioning, AFrozenEncoderGetsNoGradientAndNeutralInputsFillTheBuffers) {
  Fixture f;
  UnetTrainStep step(f.unet, UnetStepOptions{}, torch::kCPU, 5);
  step.useStagedConditioning(f.staged(false));
  const StepShape shape{kBatch, 8, 8, kTokens};
  step.stageNeutral(shape);
  step.stagedLoss(shape).backward();
  const std::vector<torch::Tensor> grads = f.takeGradients();
  EXPECT_EQ(grads[0].abs().sum().item<double>(), 0.0) << "the frozen encoder's embedding got a gradient";
  double unet = 0;
  for (size_t i = 2; i < grads.size(); ++i) unet += grads[i].abs().sum().item<double>();
  EXPECT_GT(unet, 0.0);
}

TEST(UnetStagedConditioning, StagingRefusesABatchOfTheOtherKindAndALateSwitch) {
  Fixture f;
  UnetTrainStep step(f.unet, UnetStepOptions{}, torch::kCPU, 5);
  step.useStagedConditioning(f.staged(true));
  UnetStepBatch withContext;
  withContext.latents = f.latents;
  withContext.context = torch::zeros({kBatch, kTokens, f.config.contextDim});
  withContext.admVector = torch::zeros({kBatch, f.config.admInChannels});
  withContext.lossWeights = f.weights;
  EXPECT_THROW(step.stage(withContext), std::logic_error);
  step.stage(f.stagedBatch());
  // The buffers of a staged shape hold the inputs, so the kind cannot change afterwards.
  EXPECT_THROW(step.useStagedConditioning(std::nullopt), std::logic_error);
}
