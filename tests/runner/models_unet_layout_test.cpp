#include "models/unet/sdxl_unet_layout.h"

#include <gtest/gtest.h>

#include <map>

#include "models/unet/sdxl_size_conditioning.h"
#include "models/unet/timestep_embedding.h"

using namespace sinter::models;

TEST(SdxlUnetLayout, FullSizeTransformerLinearsMatchSdScriptsCount) {
  // sd-scripts' LoRA on the SDXL UNet creates 722 modules (11 SpatialTransformers, 70 blocks).
  const auto linears = sdxlUnetTransformerLinearLayers(SdxlUnetConfig::full());
  EXPECT_EQ(linears.size(), 722u);
  std::map<std::string, LinearInfo> byPath;
  for (const auto& l : linears) byPath[l.path] = l;
  ASSERT_TRUE(byPath.count("input_blocks.4.1.transformer_blocks.0.attn1.to_q"));
  EXPECT_EQ(byPath["input_blocks.4.1.transformer_blocks.0.attn1.to_q"].in, 640);
  EXPECT_EQ(byPath["input_blocks.4.1.transformer_blocks.0.attn2.to_k"].in, 2048);
  EXPECT_EQ(byPath["input_blocks.4.1.transformer_blocks.0.attn2.to_k"].out, 640);
  EXPECT_FALSE(byPath["input_blocks.4.1.transformer_blocks.0.attn2.to_k"].bias);
  EXPECT_EQ(byPath["middle_block.1.transformer_blocks.9.ff.net.0.proj"].out, 1280 * 8);
  EXPECT_EQ(byPath["middle_block.1.transformer_blocks.9.ff.net.2"].in, 1280 * 4);
  EXPECT_TRUE(byPath.count("output_blocks.2.1.transformer_blocks.9.attn2.to_out.0"));
  EXPECT_TRUE(byPath.count("output_blocks.5.1.proj_out"));
  EXPECT_FALSE(byPath.count("output_blocks.6.1.proj_in"));  // the first level has no transformers

  const auto all = sdxlUnetLinearLayers(SdxlUnetConfig::full());
  // + time_embed (2) + label_emb (2) + 17 ResBlocks' emb_layers.1 (6 input, 2 middle, 9 output)
  EXPECT_EQ(all.size(), 722u + 4u + 17u);
}

TEST(SdxlUnetLayout, PlanHasSdxlsBlockStructure) {
  const SdxlUnetPlan plan = sdxlUnetPlan(SdxlUnetConfig::full());
  EXPECT_EQ(plan.inputBlocks.size(), 9u);
  EXPECT_EQ(plan.outputBlocks.size(), 9u);
  EXPECT_EQ(plan.inputBlocks[3][0].kind, SdxlUnetLayer::Kind::Downsample);
  EXPECT_EQ(plan.inputBlocks[7][1].depth, 10);
  EXPECT_EQ(plan.inputBlocks[7][1].heads, 20);
  EXPECT_EQ(plan.outputBlocks[0][0].inChannels, 2560);
  EXPECT_EQ(plan.outputBlocks[2][2].kind, SdxlUnetLayer::Kind::Upsample);
  EXPECT_EQ(plan.outputBlocks[8][0].inChannels, 640);
  EXPECT_EQ(plan.outputBlocks[8].size(), 1u);
}

TEST(SdxlConditioning, TimestepEmbeddingIsCosThenSin) {
  const torch::Tensor e = timestepEmbedding(torch::tensor({0.0, 3.0}), 8);
  ASSERT_EQ(e.sizes(), (std::vector<int64_t>{2, 8}));
  EXPECT_NEAR(e[1][0].item<double>(), std::cos(3.0), 1e-6);
  EXPECT_NEAR(e[1][4].item<double>(), std::sin(3.0), 1e-6);
  EXPECT_NEAR(e[1][1].item<double>(), std::cos(3.0 * std::pow(10000.0, -0.25)), 1e-6);
  EXPECT_NEAR(e[0][0].item<double>(), 1.0, 1e-6);
}

TEST(SdxlConditioning, AdmVectorIsPooledThenSixSizeEmbeddings) {
  const torch::Tensor pooled = torch::randn({2, 1280});
  const torch::Tensor orig = torch::tensor({1024, 768, 512, 512}).reshape({2, 2});
  const torch::Tensor crop = torch::tensor({0, 16, 8, 0}).reshape({2, 2});
  const torch::Tensor target = torch::tensor({1024, 1024, 1024, 1024}).reshape({2, 2});
  const torch::Tensor y = sdxlAdmVector(pooled, orig, crop, target);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 2816}));
  EXPECT_TRUE(torch::equal(y.narrow(1, 0, 1280), pooled));
  // The width of the original size (768) is embedded in the second 256-wide slot.
  EXPECT_TRUE(torch::allclose(y[0].narrow(0, 1280 + 256, 256), timestepEmbedding(torch::tensor({768.0}), 256)[0]));
  EXPECT_TRUE(torch::allclose(y[0].narrow(0, 1280 + 512 + 256, 256), timestepEmbedding(torch::tensor({16.0}), 256)[0]));
  EXPECT_THROW(sdxlAdmVector(pooled, torch::zeros({2, 3}), crop, target), std::invalid_argument);
}
