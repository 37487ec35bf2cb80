#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "models/autoencoders/sdxl_vae.h"

using namespace sinter::models;

TEST(SdxlVae, TinyEncodeAndDecodeShapes) {
  torch::manual_seed(0);
  SdxlVae vae(SdxlVaeConfig::tiny());
  torch::NoGradGuard noGrad;
  const torch::Tensor images = torch::rand({2, 3, 16, 24}) * 2 - 1;
  const LatentDistribution d = vae->encode(images);
  EXPECT_EQ(d.mean.sizes(), (std::vector<int64_t>{2, 4, 8, 12}));
  EXPECT_EQ(d.logvar.sizes(), d.mean.sizes());
  EXPECT_LE(d.logvar.max().item<double>(), 20.0);

  const torch::Tensor latents = vae->encodeToLatents(images, /*sample=*/false);
  EXPECT_TRUE(torch::allclose(latents, d.mean * 0.13025));
  at::Generator g1 = at::make_generator<at::CPUGeneratorImpl>(7), g2 = at::make_generator<at::CPUGeneratorImpl>(7);
  const torch::Tensor s1 = vae->encodeToLatents(images, true, g1), s2 = vae->encodeToLatents(images, true, g2);
  EXPECT_TRUE(torch::equal(s1, s2));
  EXPECT_FALSE(torch::allclose(s1, latents));

  const torch::Tensor decoded = vae->decodeLatents(latents);
  EXPECT_EQ(decoded.sizes(), images.sizes());
  EXPECT_TRUE(torch::isfinite(decoded).all().item<bool>());
  EXPECT_THROW(vae->encode(torch::rand({1, 3, 15, 16})), std::invalid_argument);
  EXPECT_THROW(vae->decodeLatents(torch::rand({1, 3, 8, 8})), std::invalid_argument);
}

TEST(SdxlVae, FullSizeDownscalesByEight) {
  EXPECT_EQ(SdxlVaeConfig::full().downscale(), 8);
}

TEST(SdxlVae, ParameterNamesAreTheCheckpointKeys) {
  SdxlVae vae(SdxlVaeConfig::tiny());
  std::set<std::string> names;
  for (const auto& [key, t] : vae->checkpointTensors()) names.insert(key);
  for (const char* key :
       {"first_stage_model.encoder.conv_in.weight", "first_stage_model.encoder.down.0.block.0.norm1.weight",
        "first_stage_model.encoder.down.0.downsample.conv.weight", "first_stage_model.encoder.down.1.block.0.nin_shortcut.weight",
        "first_stage_model.encoder.mid.block_1.conv2.bias", "first_stage_model.encoder.mid.attn_1.q.weight",
        "first_stage_model.encoder.mid.attn_1.proj_out.bias", "first_stage_model.encoder.norm_out.weight",
        "first_stage_model.encoder.conv_out.weight", "first_stage_model.quant_conv.weight",
        "first_stage_model.post_quant_conv.bias", "first_stage_model.decoder.conv_in.weight",
        "first_stage_model.decoder.mid.attn_1.v.weight", "first_stage_model.decoder.up.1.block.1.conv1.weight",
        "first_stage_model.decoder.up.1.upsample.conv.weight", "first_stage_model.decoder.up.0.block.0.nin_shortcut.weight",
        "first_stage_model.decoder.norm_out.bias", "first_stage_model.decoder.conv_out.weight"})
    EXPECT_TRUE(names.count(key)) << key;
  EXPECT_FALSE(names.count("first_stage_model.decoder.up.0.upsample.conv.weight"));
  EXPECT_FALSE(names.count("first_stage_model.encoder.down.1.downsample.conv.weight"));
  // Shapes: decoder.up.1 works at 64 channels, up.0 at 32.
  for (const auto& [key, t] : vae->checkpointTensors())
    if (key == "first_stage_model.decoder.up.0.block.0.conv1.weight")
      EXPECT_EQ(t.sizes(), (std::vector<int64_t>{32, 64, 3, 3}));
}

// The mid-block's attention runs in query chunks past kMaxScoreElements scores (SDXL at
// 1024x1024: 16384 tokens); the result is the whole softmax's within float32 rounding. 80x75
// latent pixels are 6000 tokens, 36 million scores: two chunks.
TEST(SdxlVae, MidBlockAttentionInChunksIsTheWholeSoftmax) {
  torch::manual_seed(0);
  VaeAttnBlock attn(32, 32);
  torch::NoGradGuard noGrad;
  const torch::Tensor x = torch::randn({1, 32, 80, 75});
  ASSERT_GT(int64_t{6000} * 6000, VaeAttnBlockImpl::kMaxScoreElements);
  const torch::Tensor n = attn->norm(x);
  auto tokens = [](const torch::Tensor& t) { return t.reshape({1, 32, 6000}).transpose(-1, -2); };
  const torch::Tensor scores = torch::matmul(tokens(attn->q(n)), tokens(attn->k(n)).transpose(-1, -2)) / std::sqrt(32.0);
  const torch::Tensor attended = torch::matmul(torch::softmax(scores, -1), tokens(attn->v(n)));
  const torch::Tensor expected = x + attn->proj_out(attended.transpose(-1, -2).reshape({1, 32, 80, 75}));
  const torch::Tensor got = attn(x);
  EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-5)) << (got - expected).abs().max().item<double>();
}
