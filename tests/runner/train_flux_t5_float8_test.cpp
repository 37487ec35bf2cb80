// fp8_base for FLUX (train/flux/flux_model_set.h): without fp8_base_unet, T5-XXL's Linear weights
// are stored as float8 e4m3 and upcast per call, its embeddings and layer norms and all of CLIP-L
// staying in the weight dtype (sd-scripts' prepare_text_encoder_fp8); fp8_base_unet keeps T5 as it
// was. A libtorch without float8 (Debian's 1.13) refuses with fp8_base's message.
#include <gtest/gtest.h>

#include <string>

#include "core/toml_config.h"
#include "models/weights/served_weight.h"
#include "train/flux/flux_model_set.h"

using namespace sinter;

namespace {

train::FluxWeightPlacement placementOf(const std::string& toml) {
  return train::FluxWeightPlacement::fromConfig(parseConfigToml("model_family = \"flux\"\nmixed_precision = \"bf16\"\n" + toml, "t.toml").config);
}

train::FluxModelSet tinyModels() {
  torch::manual_seed(5);
  train::FluxModelSet set;
  set.transformer = models::FluxTransformer(models::FluxConfig::tiny());
  set.ae = models::FluxAutoencoder(models::FluxAutoencoderConfig::tiny());
  set.clipL = models::ClipTextModel(models::ClipTextConfig::tinyClipL());
  set.t5 = models::T5Encoder(models::T5EncoderConfig::tiny());
  return set;
}

}  // namespace

TEST(FluxT5Float8, Fp8BaseAloneCastsT5AndFp8BaseUnetDoesNot) {
  EXPECT_TRUE(placementOf("fp8_base = true\n").t5Float8);
  EXPECT_TRUE(placementOf("fp8_base = true\n").fp8Base);
  EXPECT_FALSE(placementOf("fp8_base = true\nfp8_base_unet = true\n").t5Float8);
  EXPECT_FALSE(placementOf("fp8_base_unet = true\n").t5Float8);
  EXPECT_TRUE(placementOf("fp8_base_unet = true\n").fp8Base);  // the transformer still is
  EXPECT_FALSE(placementOf("").t5Float8);
}

TEST(FluxT5Float8, LinearsInFloat8NormsAndEmbeddingsInTheWeightDtype) {
  train::FluxWeightPlacement placement;
  placement.t5Float8 = true;
  train::FluxModelSet set = tinyModels();
  if (!models::float8InBuild()) {
    try {
      set.castInPlace(torch::kBFloat16, placement);
      FAIL() << "a libtorch without float8 stored T5's weights in float8";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("fp8_base"), std::string::npos) << e.what();
    }
    return;
  }
  // The reference: the same T5 in bf16, its Linear weights rounded to e4m3 as the stored ones are.
  train::FluxModelSet reference = tinyModels();
  reference.castInPlace(torch::kBFloat16);
  set.castInPlace(torch::kBFloat16, placement);
  int linears = 0;
  for (const auto& item : set.t5->named_modules()) {
    if (auto linear = std::dynamic_pointer_cast<models::LinearImpl>(item.value())) {
      ++linears;
      EXPECT_EQ(linear->weight.scalar_type(), models::float8Dtype()) << item.key();
      EXPECT_TRUE(linear->served) << item.key();
    }
  }
  EXPECT_EQ(linears, 7 * set.t5->config().layers);  // q, k, v, o, wi_0, wi_1, wo
  for (const auto& p : set.t5->named_parameters())
    if (p.key().find("shared") != std::string::npos || p.key().find("layer_norm") != std::string::npos ||
        p.key().find("relative_attention_bias") != std::string::npos)
      EXPECT_EQ(p.value().scalar_type(), torch::kBFloat16) << p.key();
  for (const auto& p : set.clipL->named_parameters()) EXPECT_EQ(p.value().scalar_type(), torch::kBFloat16) << p.key();
  {
    torch::NoGradGuard noGrad;
    for (const auto& item : reference.t5->named_modules())
      if (auto linear = std::dynamic_pointer_cast<models::LinearImpl>(item.value()))
        linear->weight.set_data(linear->weight.to(models::float8Dtype()).to(torch::kBFloat16));
    const torch::Tensor ids = torch::randint(0, set.t5->config().vocabSize, {2, 12}, torch::kLong);
    const torch::Tensor got = set.t5->forward(ids).to(torch::kFloat32), want = reference.t5->forward(ids).to(torch::kFloat32);
    // Same values, computed by the same kernels from an upcast copy: only bf16 rounding apart.
    EXPECT_TRUE(torch::allclose(got, want, 1e-2, 1e-2)) << (got - want).abs().max().item<float>();
  }
}
