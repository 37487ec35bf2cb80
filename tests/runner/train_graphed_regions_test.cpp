// Per-block regions (train/capture/graphed_regions.h) where they cannot be captured: on the CPU every
// region runs eagerly, says once why, and computes exactly what the model computes without them.
// (Their replay is checked on the GPU machine: tests/gpu/captured_vs_eager.sh with per-block flags.)
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "compile/cuda_graph.h"
#include "models/unet/sdxl_unet.h"
#include "network/lora_network.h"
#include "train/capture/graphed_regions.h"
#include "train/flux/flux_regions.h"
#include "train/sdxl/sdxl_unet_regions.h"

using namespace sinter;
using namespace sinter::train;

namespace {

struct TinyLoraUnet {
  models::SdxlUnet unet{nullptr};
  network::LoraNetwork lora{network::LoraNetworkOptions{}};

  TinyLoraUnet() {
    torch::manual_seed(5);
    unet = models::SdxlUnet(models::SdxlUnetConfig::tiny());
    for (torch::Tensor& p : unet->parameters()) p.requires_grad_(false);  // the base frozen, as in a LoRA run
    lora.attach(network::sdxlLoraRule(network::LoraComponent::Unet), *unet);
    torch::NoGradGuard noGrad;
    for (torch::Tensor& p : lora.parameters()) p.normal_(0.0, 0.05);  // lora_up starts at zero
  }

  // The loss and the LoRA gradients of one forward and backward pass.
  std::pair<torch::Tensor, std::vector<torch::Tensor>> pass() {
    for (torch::Tensor& p : lora.parameters()) p.mutable_grad() = torch::Tensor();
    torch::manual_seed(9);
    const auto& c = unet->config();
    torch::Tensor x = torch::randn({1, c.inChannels, 8, 8});
    // Both need grad when the text encoders train: the context, and y through the pooled output.
    torch::Tensor context = torch::randn({1, 77, c.contextDim}).requires_grad_(true);
    torch::Tensor y = torch::randn({1, c.admInChannels}).requires_grad_(true);
    torch::Tensor loss = unet->forward(x, torch::tensor({500}, torch::kLong), context, y).pow(2).mean();
    loss.backward();
    std::vector<torch::Tensor> grads{context.grad(), y.grad()};
    for (const torch::Tensor& p : lora.parameters()) grads.push_back(p.grad());
    return {loss.detach(), grads};
  }
};

}  // namespace

TEST(GraphedRegions, UncapturableRegionsRunEagerlyAndSayWhyOnce) {
  GraphedRegions regions(torch::kCPU, 8, {});
  const torch::Tensor w = torch::full({3}, 2.0f).requires_grad_(true);
  auto body = [&](const std::vector<torch::Tensor>& in) { return in[0] * w; };
  const torch::Tensor x = torch::arange(3, torch::kFloat32).requires_grad_(true);
  torch::Tensor out = regions.run("block.0", {x}, body);
  out.sum().backward();
  EXPECT_TRUE(torch::equal(out.detach(), torch::arange(3, torch::kFloat32) * 2));
  EXPECT_TRUE(torch::equal(w.grad(), torch::arange(3, torch::kFloat32)));
  EXPECT_TRUE(torch::equal(x.grad(), torch::full({3}, 2.0f)));
  const std::vector<std::string> failures = regions.takeFailures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("block.0 (inputs Float[3,]grad)"), std::string::npos) << failures[0];
  const std::string cause = compile::cudaGraphsCompiledIn() ? "runs eagerly: the capture stream needs a CUDA device, not cpu"
                                                            : "runs eagerly: CUDA graphs are not in this build (a CPU libtorch)";
  EXPECT_NE(failures[0].find(cause), std::string::npos) << failures[0];

  regions.run("block.0", {x}, body);  // the same signature: not tried again
  EXPECT_TRUE(regions.takeFailures().empty());
  regions.run("block.0", {x.detach()}, body);  // another signature (no grad): tried once
  EXPECT_EQ(regions.takeFailures().size(), 1u);
  {
    torch::NoGradGuard noGrad;  // sampling: nothing to capture, nothing tried
    regions.run("block.1", {x}, body);
  }
  EXPECT_TRUE(regions.takeFailures().empty());
  EXPECT_EQ(regions.eager(), 3);
  EXPECT_EQ(regions.replayed(), 0);

  GraphedRegions none(torch::kCPU, 0, {});  // compile_cache_size_limit reached: eager, no attempt
  none.run("block.0", {x}, body);
  EXPECT_TRUE(none.takeFailures().empty());
}

TEST(GraphedRegions, UnetBlocksThroughRegionsComputeWhatTheUnetComputes) {
  TinyLoraUnet plain, through;
  const auto [plainLoss, plainGrads] = plain.pass();
  GraphedRegions regions(torch::kCPU, 8, {});
  captureUnetBlocks(through.unet, regions);
  const auto [loss, grads] = through.pass();
  EXPECT_TRUE(torch::equal(loss, plainLoss));
  ASSERT_EQ(grads.size(), plainGrads.size());
  for (size_t i = 0; i < grads.size(); ++i) EXPECT_TRUE(torch::equal(grads[i], plainGrads[i])) << "gradient " << i;
  // Every block was tried, by its checkpoint name, and said why it runs eagerly.
  const std::vector<std::string> failures = regions.takeFailures();
  EXPECT_EQ(failures.size(), through.unet->blockRegions().size());
  for (size_t i = 0; i < failures.size(); ++i)
    EXPECT_EQ(failures[i].rfind(through.unet->blockRegions()[i] + " (inputs ", 0), 0u) << failures[i];
  EXPECT_EQ(regions.eager(), static_cast<long long>(failures.size()));

  releaseUnetBlocks(through.unet);
  through.pass();
  EXPECT_EQ(regions.eager(), static_cast<long long>(failures.size()));  // no longer used
}

// A region's graphs differentiate by what regionLeaves finds in its first warm-up pass. With the
// text encoders trained (context and y need grad), the inputs it names must be exactly those
// autograd gives a gradient for, and its weights the LoRA modules inside the block. conv_in
// (input_blocks.0) reads neither the context nor emb and trains nothing: its forward graph runs
// alone. Issue 51: its inputs were taken to be all that need grad, so its backward pass
// differentiated an output without an autograd graph and every such run failed at step 1 (seen
// on the GPU only, where the regions are captured; here they run eagerly).
TEST(GraphedRegions, RegionsDifferentiateByTheInputsTheirOutputReads) {
  TinyLoraUnet net;
  std::map<std::string, RegionLeaves> found;
  net.unet->setBlockRunner([&](const std::string& region, models::SdxlUnetBlock& block, const torch::Tensor& h,
                               const torch::Tensor& emb, const torch::Tensor& context) {
    // The inputs as GraphedRegions copies them for a capture: leaves that need grad where the step's do.
    std::vector<torch::Tensor> in;
    for (const torch::Tensor& t : {h, emb, context}) in.push_back(t.detach().clone().requires_grad_(t.requires_grad()));
    const torch::Tensor out = block->forward(in[0], in[1], in[2]);
    const RegionLeaves leaves = regionLeaves(out, in);
    std::vector<size_t> needGrad, withGradient;
    std::vector<torch::Tensor> targets;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].requires_grad()) {
        needGrad.push_back(i);
        targets.push_back(in[i]);
      }
    if (out.requires_grad() && !targets.empty()) {
      const auto grads = torch::autograd::grad({out}, targets, {torch::ones_like(out)}, false, false, /*allow_unused=*/true);
      for (size_t j = 0; j < grads.size(); ++j)
        if (grads[j].defined()) withGradient.push_back(needGrad[j]);
    }
    EXPECT_EQ(leaves.inputs, withGradient) << region;
    if (!out.requires_grad() && !targets.empty()) {
      // What the backward pass did before: differentiate by every input that needs grad. The step-1 error.
      try {
        torch::autograd::grad({out}, targets, {torch::ones_like(out)}, false, false, /*allow_unused=*/true);
        ADD_FAILURE() << region << ": differentiated an output without autograd graph";
      } catch (const c10::Error& e) {
        EXPECT_NE(std::string(e.what()).find("element 0 of tensors does not require grad and does not have a grad_fn"),
                  std::string::npos) << e.what();
      }
    }
    found[region] = leaves;
    return block->forward(h, emb, context);
  });
  net.pass();
  ASSERT_EQ(found.size(), net.unet->blockRegions().size());

  const RegionLeaves& convIn = found.at("input_blocks.0");
  EXPECT_TRUE(convIn.inputs.empty());
  EXPECT_TRUE(convIn.weights.empty());
  EXPECT_EQ(found.at("input_blocks.1").inputs, std::vector<size_t>{1});  // a ResBlock: emb, not the context
  // Each LoRA module is trained by one region, which reads the context (the transformer blocks).
  std::set<const c10::TensorImpl*> lora, trained;
  for (const torch::Tensor& p : net.lora.parameters()) lora.insert(p.unsafeGetTensorImpl());
  size_t weights = 0, readingContext = 0;
  for (const auto& [region, leaves] : found) {
    for (const torch::Tensor& w : leaves.weights) trained.insert(w.unsafeGetTensorImpl());
    weights += leaves.weights.size();
    const bool readsContext = !leaves.inputs.empty() && leaves.inputs.back() == 2;
    readingContext += readsContext;
    if (!leaves.weights.empty()) EXPECT_TRUE(readsContext) << region;
  }
  EXPECT_EQ(trained, lora);
  EXPECT_EQ(weights, lora.size());
  EXPECT_GT(readingContext, 0u);
}

namespace {

// A tiny FLUX transformer (dev) and one loss over its output, with every parameter's gradient.
struct TinyFlux {
  models::FluxTransformer transformer{nullptr};
  TinyFlux() {
    torch::manual_seed(21);
    transformer = models::FluxTransformer(models::FluxConfig::tiny());
  }
  std::pair<torch::Tensor, std::vector<torch::Tensor>> pass() {
    torch::manual_seed(22);
    const models::FluxConfig& c = transformer->config();
    const torch::Tensor img = torch::randn({2, 6, c.inChannels}), txt = torch::randn({2, 4, c.contextInDim});
    torch::Tensor imgIds = torch::zeros({2, 6, 3});
    imgIds.select(2, 2).copy_(torch::arange(6).to(torch::kFloat32));
    transformer->zero_grad();
    const torch::Tensor loss = transformer->forward(img, imgIds, txt, torch::zeros({2, 4, 3}), torch::tensor({0.3, 0.8}),
                                                    torch::randn({2, c.vecInDim}), torch::full({2}, 3.5))
                                   .pow(2)
                                   .mean();
    loss.backward();
    std::vector<torch::Tensor> grads;
    for (const torch::Tensor& p : transformer->parameters()) grads.push_back(p.grad().clone());
    return {loss.detach(), grads};
  }
};

}  // namespace

TEST(GraphedRegions, FluxBlocksThroughRegionsComputeWhatTheTransformerComputes) {
  TinyFlux plain, through;
  const auto [plainLoss, plainGrads] = plain.pass();
  GraphedRegions regions(torch::kCPU, 8, {});
  captureFluxBlocks(through.transformer, regions);
  const auto [loss, grads] = through.pass();
  EXPECT_TRUE(torch::equal(loss, plainLoss));
  ASSERT_EQ(grads.size(), plainGrads.size());
  for (size_t i = 0; i < grads.size(); ++i) EXPECT_TRUE(torch::equal(grads[i], plainGrads[i])) << "gradient " << i;
  // Every double and single block was tried, by its checkpoint name, in forward order.
  const std::vector<std::string>& names = through.transformer->blockRegions();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names.front(), "double_blocks.0");
  EXPECT_EQ(names.back(), "single_blocks.1");
  const std::vector<std::string> failures = regions.takeFailures();
  ASSERT_EQ(failures.size(), names.size());
  for (size_t i = 0; i < failures.size(); ++i) EXPECT_EQ(failures[i].rfind(names[i] + " (inputs ", 0), 0u) << failures[i];

  releaseFluxBlocks(through.transformer);
  through.pass();
  EXPECT_EQ(regions.eager(), static_cast<long long>(failures.size()));  // no longer used
}
