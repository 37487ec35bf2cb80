#include <gtest/gtest.h>

#include <algorithm>

#include <set>

#include "models/layers/attention.h"
#include "models/unet/sdxl_unet.h"

using namespace sinter::models;

namespace {

struct TinyInputs {
  torch::Tensor x, t, context, y;
};

TinyInputs tinyInputs(const SdxlUnetConfig& c, int64_t batch = 2) {
  torch::manual_seed(1);
  return {torch::randn({batch, c.inChannels, 16, 12}), torch::tensor({10.0, 900.0}).narrow(0, 0, batch),
          torch::randn({batch, 7, c.contextDim}), torch::randn({batch, c.admInChannels})};
}

}  // namespace

TEST(SdxlUnet, TinyForwardKeepsTheLatentShape) {
  torch::manual_seed(0);
  SdxlUnet unet(SdxlUnetConfig::tiny());
  const TinyInputs in = tinyInputs(unet->config());
  torch::NoGradGuard noGrad;
  const torch::Tensor out = unet(in.x, in.t, in.context, in.y);
  EXPECT_EQ(out.sizes(), in.x.sizes());
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
  // The output depends on the conditioning.
  const torch::Tensor other = unet(in.x, in.t, in.context, in.y * 2);
  EXPECT_FALSE(torch::allclose(out, other));
}

TEST(SdxlUnet, ParameterNamesAreTheCheckpointKeys) {
  SdxlUnet unet(SdxlUnetConfig::tiny());
  std::set<std::string> names;
  for (const auto& [key, t] : unet->checkpointTensors()) names.insert(key);
  for (const char* key : {"model.diffusion_model.time_embed.0.weight", "model.diffusion_model.time_embed.2.bias",
                          "model.diffusion_model.label_emb.0.0.weight", "model.diffusion_model.label_emb.0.2.weight",
                          "model.diffusion_model.input_blocks.0.0.weight",
                          "model.diffusion_model.input_blocks.1.0.in_layers.0.weight",
                          "model.diffusion_model.input_blocks.1.0.in_layers.2.weight",
                          "model.diffusion_model.input_blocks.1.0.emb_layers.1.weight",
                          "model.diffusion_model.input_blocks.1.0.out_layers.0.bias",
                          "model.diffusion_model.input_blocks.1.0.out_layers.3.weight",
                          "model.diffusion_model.input_blocks.2.0.op.weight",
                          "model.diffusion_model.input_blocks.3.0.skip_connection.weight",
                          "model.diffusion_model.input_blocks.3.1.norm.weight",
                          "model.diffusion_model.input_blocks.3.1.proj_in.weight",
                          "model.diffusion_model.input_blocks.3.1.transformer_blocks.0.attn1.to_q.weight",
                          "model.diffusion_model.input_blocks.3.1.transformer_blocks.0.attn2.to_out.0.bias",
                          "model.diffusion_model.input_blocks.3.1.transformer_blocks.0.ff.net.0.proj.weight",
                          "model.diffusion_model.input_blocks.3.1.transformer_blocks.0.ff.net.2.weight",
                          "model.diffusion_model.input_blocks.3.1.transformer_blocks.0.norm3.weight",
                          "model.diffusion_model.middle_block.1.transformer_blocks.0.attn2.to_k.weight",
                          "model.diffusion_model.middle_block.2.out_layers.3.bias",
                          "model.diffusion_model.output_blocks.1.2.conv.weight",
                          "model.diffusion_model.output_blocks.3.1.proj_out.weight",
                          "model.diffusion_model.out.0.weight", "model.diffusion_model.out.2.weight"})
    EXPECT_TRUE(names.count(key)) << key;
  EXPECT_FALSE(names.count("model.diffusion_model.input_blocks.3.1.transformer_blocks.0.attn1.to_q.bias"));

  // Every Linear the layout lists is a module with that name and shape.
  for (const LinearInfo& l : sdxlUnetLinearLayers(unet->config())) {
    const std::string key = std::string(SdxlUnetImpl::kPrefix) + l.path + ".weight";
    ASSERT_TRUE(names.count(key)) << key;
    const torch::Tensor w = unet->named_parameters()[l.path + ".weight"];
    EXPECT_EQ(w.sizes(), (std::vector<int64_t>{l.out, l.in})) << l.path;
    EXPECT_EQ(names.count(std::string(SdxlUnetImpl::kPrefix) + l.path + ".bias") == 1, l.bias) << l.path;
  }
}

// The input's and every parameter's gradient of one training-mode forward and backward of the
// tiny UNet (fixed weights and inputs).
static std::vector<torch::Tensor> tinyUnetGradients(bool checkpointing, bool preserveRngState) {
  torch::manual_seed(0);
  SdxlUnet unet(SdxlUnetConfig::tiny());
  unet->train();
  unet->setGradientCheckpointing(checkpointing, preserveRngState);
  TinyInputs in = tinyInputs(unet->config());
  in.x.requires_grad_(true);
  unet(in.x, in.t, in.context, in.y).square().mean().backward();
  std::vector<torch::Tensor> grads = {in.x.grad().clone()};
  for (const auto& p : unet->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

TEST(SdxlUnet, GradientCheckpointingGivesTheSameGradients) {
  const auto plain = tinyUnetGradients(false, true);
  const auto checkpointed = tinyUnetGradients(true, true);
  ASSERT_EQ(plain.size(), checkpointed.size());
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(torch::allclose(plain[i], checkpointed[i], 1e-5, 1e-6)) << i;
}

// Without dropout in the blocks, the checkpointed recomputation needs no RNG state: the same
// gradients, bit for bit, with the state left alone.
TEST(SdxlUnet, CheckpointingWithoutRngStateGivesTheSameGradients) {
  const auto preserved = tinyUnetGradients(true, true), leftAlone = tinyUnetGradients(true, false);
  ASSERT_EQ(preserved.size(), leftAlone.size());
  for (size_t i = 0; i < preserved.size(); ++i) EXPECT_TRUE(torch::equal(preserved[i], leftAlone[i])) << i;
}

// The seam where each block runs: a runner sees every block by its checkpoint name, in forward
// order, and running the default from it changes nothing.
TEST(SdxlUnet, BlockRunnerSeesEveryRegionInOrder) {
  torch::manual_seed(0);
  SdxlUnet unet(SdxlUnetConfig::tiny());
  unet->eval();
  const TinyInputs in = tinyInputs(unet->config());
  torch::NoGradGuard noGrad;
  const torch::Tensor plain = unet(in.x, in.t, in.context, in.y);
  std::vector<std::string> seen;
  SdxlUnetImpl* impl = unet.get();
  unet->setBlockRunner([&](const std::string& region, SdxlUnetBlock& block, const torch::Tensor& h, const torch::Tensor& emb,
                           const torch::Tensor& context) {
    seen.push_back(region);
    return impl->runBlockDefault(block, h, emb, context);
  });
  const torch::Tensor routed = unet(in.x, in.t, in.context, in.y);
  EXPECT_TRUE(torch::equal(plain, routed));
  EXPECT_EQ(seen, unet->blockRegions());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "input_blocks.0");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "middle_block"), seen.end());
  EXPECT_EQ(seen.back(), "output_blocks." + std::to_string(unet->output_blocks->size() - 1));
}

TEST(SdxlUnet, BadInputShapesAreClearErrors) {
  SdxlUnet unet(SdxlUnetConfig::tiny());
  const TinyInputs in = tinyInputs(unet->config());
  torch::NoGradGuard noGrad;
  EXPECT_THROW(unet(torch::randn({2, 4, 10, 12}), in.t, in.context, in.y), std::invalid_argument);
  EXPECT_THROW(unet(in.x, in.t, torch::randn({2, 7, 5}), in.y), std::invalid_argument);
  EXPECT_THROW(unet(in.x, in.t, in.context, torch::randn({2, 5})), std::invalid_argument);
}

TEST(Attention, MatchesTheSoftmaxFormula) {
  torch::manual_seed(0);
  const torch::Tensor q = torch::randn({1, 2, 5, 8}), k = torch::randn({1, 2, 3, 8}), v = torch::randn({1, 2, 3, 8});
  const torch::Tensor expected = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(8.0), -1).matmul(v);
  EXPECT_TRUE(torch::allclose(scaledDotProductAttention(q, k, v), expected, 1e-5, 1e-6));
}

// Chunked over the query rows, attention is the same computation row by row: equal to the whole
// call within float32 rounding (the kernels may sum in another order), for chunks that divide the
// rows and chunks that leave a remainder, with batch and heads, and with keys of another length.
TEST(Attention, ChunkedOverQueriesMatchesTheWholeCall) {
  torch::manual_seed(0);
  const torch::Tensor q = torch::randn({2, 3, 37, 16}), k = torch::randn({2, 3, 29, 16}), v = torch::randn({2, 3, 29, 8});
  const torch::Tensor whole = scaledDotProductAttention(q, k, v);
  const int64_t perRow = 2 * 3 * 29;
  for (int64_t rows : {1, 2, 5, 8, 36, 37, 100}) {
    SCOPED_TRACE(rows);
    const torch::Tensor chunked = chunkedScaledDotProductAttention(q, k, v, rows * perRow);
    ASSERT_EQ(chunked.sizes(), whole.sizes());
    EXPECT_TRUE(torch::allclose(chunked, whole, 1e-5, 1e-6)) << (chunked - whole).abs().max().item<double>();
  }
  // A bound below one row's scores still computes one row at a time.
  EXPECT_TRUE(torch::allclose(chunkedScaledDotProductAttention(q, k, v, 1), whole, 1e-5, 1e-6));
  EXPECT_THROW(chunkedScaledDotProductAttention(q, k, v, 0), std::invalid_argument);
}
