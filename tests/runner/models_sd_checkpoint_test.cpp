// SD 1.x/2.x models: the UNet's SD switches (1x1-conv projections, fixed head count, no label
// embedding), single-file checkpoints written and read back in the original layout with their
// sizes inferred, and the text encoder's clip_skip layers.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/random_checkpoint.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "models/text_encoders/sd_text_encoding.h"
#include "models/unet/sdxl_unet_blocks.h"

namespace fs = std::filesystem;
using namespace sinter;
using models::SdVersion;

namespace {

std::string tempPath(const std::string& name) {
  return (fs::temp_directory_path() / ("sinter_sd_ckpt_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

TEST(SdCheckpoint, FullConfigsAreSd15AndSd21) {
  const models::SdCheckpointConfig v1 = models::SdCheckpointConfig::full(SdVersion::V1);
  EXPECT_EQ(v1.unet.channelMult, (std::vector<int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(v1.unet.contextDim, 768);
  EXPECT_EQ(v1.unet.headsFor(640), 8);
  EXPECT_FALSE(v1.unet.linearProjection);
  EXPECT_EQ(v1.unet.admInChannels, 0);
  EXPECT_DOUBLE_EQ(v1.vae.scalingFactor, 0.18215);
  const models::SdCheckpointConfig v2 = models::SdCheckpointConfig::full(SdVersion::V2);
  EXPECT_EQ(v2.unet.contextDim, 1024);
  EXPECT_EQ(v2.unet.headsFor(640), 10);  // heads 64 wide
  EXPECT_TRUE(v2.unet.linearProjection);
  EXPECT_EQ(v2.text.layers, 24);
  EXPECT_EQ(v2.text.width, 1024);
  v1.validate();
  v2.validate();
  // SD 1.5's UNet has 859.5 M parameters (diffusers and sd-scripts count the same).
  int64_t params = 0;
  for (const auto& p : models::SdxlUnet(v1.unet)->parameters()) params += p.numel();
  EXPECT_EQ(params, 859520964);
}

TEST(SdCheckpoint, WrittenFilesLoadBackWithTheirSizesAndWeights) {
  for (SdVersion version : {SdVersion::V1, SdVersion::V2}) {
    const std::string file = tempPath(version == SdVersion::V1 ? "v1.safetensors" : "v2.safetensors");
    models::writeRandomSdCheckpoint(file, version, /*tiny=*/true, 5);
    const models::SdCheckpoint loaded = models::loadSdCheckpoint(file);
    const models::SdCheckpointConfig expected = models::SdCheckpointConfig::tiny(version);
    EXPECT_EQ(loaded.config.version, version);
    EXPECT_EQ(loaded.config.unet, expected.unet);
    EXPECT_EQ(loaded.config.text, expected.text);
    EXPECT_EQ(loaded.config.vae, expected.vae);
    // What is saved is what was read: every key of the file, the same values.
    io::SafetensorsFile f(file);
    const auto tensors = loaded.checkpointTensors();
    EXPECT_EQ(tensors.size(), f.keys().size());
    for (const auto& [key, t] : tensors) {
      ASSERT_TRUE(f.has(key)) << key;
      EXPECT_TRUE(f.tensor(key).equal(t)) << key;
    }
    // The same seed gives the same weights as the in-memory builder.
    const models::SdCheckpoint built = models::buildRandomSdCheckpoint(expected, 5);
    const auto builtTensors = built.checkpointTensors();
    for (const auto& [key, t] : builtTensors) EXPECT_TRUE(f.tensor(key).equal(t)) << key;
    fs::remove(file);
  }
}

TEST(SdCheckpoint, AnSdxlFileIsRefusedNamingWhatItIs) {
  const std::string file = tempPath("sdxl.safetensors");
  models::writeRandomSdxlCheckpoint(file, /*tiny=*/true, 1);
  try {
    models::loadSdCheckpoint(file);
    FAIL() << "an SDXL checkpoint loaded as SD";
  } catch (const models::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("label_emb"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sdxl"), std::string::npos) << e.what();
  }
  fs::remove(file);
}

TEST(SdUnet, ConvProjectionsAndNoLabelEmbedding) {
  torch::manual_seed(0);
  models::SdxlUnet unet(models::SdxlUnetConfig::tinySd15());
  const auto params = unet->named_parameters();
  EXPECT_EQ(params["input_blocks.1.1.proj_in.weight"].sizes(), (std::vector<int64_t>{32, 32, 1, 1}));
  EXPECT_EQ(params.find("label_emb.0.0.weight"), nullptr);
  const torch::Tensor x = torch::randn({2, 4, 16, 16});
  const torch::Tensor out = unet->forward(x, torch::tensor({10, 500}), torch::randn({2, 5, 32}), torch::Tensor());
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_THROW(unet->forward(x, torch::tensor({10, 500}), torch::randn({2, 5, 32}), torch::randn({2, 8})), std::invalid_argument);

  // A 1x1-conv projection is the Linear of the same weights applied per position.
  auto& st = *unet->input_blocks[1]->as<models::SdxlUnetBlockImpl>()->children()[1]->as<models::SpatialTransformerImpl>();
  const torch::Tensor map = torch::randn({1, 32, 4, 4});
  const torch::Tensor conv = st.proj_in_conv(map);
  const torch::Tensor viaLinear = torch::nn::functional::linear(map.permute({0, 2, 3, 1}), st.proj_in_conv->weight.flatten(1),
                                                               st.proj_in_conv->bias)
                                      .permute({0, 3, 1, 2});
  EXPECT_TRUE(torch::allclose(conv, viaLinear, 1e-5, 1e-6));
}

TEST(SdText, ClipSkipCountsLayersAsSdScriptsModelsHaveThem) {
  EXPECT_EQ(models::sdTextLayersToRun(SdVersion::V1, 12, 1), 12);
  EXPECT_EQ(models::sdTextLayersToRun(SdVersion::V1, 12, 2), 11);
  // SD 2.x: sd-scripts' converted ViT-H has 23 of the checkpoint's 24 layers.
  EXPECT_EQ(models::sdTextLayersToRun(SdVersion::V2, 24, 1), 23);
  EXPECT_EQ(models::sdTextLayersToRun(SdVersion::V2, 24, 2), 22);
  EXPECT_THROW(models::sdTextLayersToRun(SdVersion::V1, 12, 13), std::invalid_argument);

  torch::manual_seed(1);
  models::ClipTextModel clip(models::ClipTextConfig::tinyClipL());
  const torch::Tensor ids = torch::randint(0, 1000, {2, 1, 77});
  // clip_skip 1 is Hugging Face's last_hidden_state.
  const torch::Tensor last = models::encodeSdText(clip->textModel(), ids, 2);
  EXPECT_TRUE(torch::allclose(last, clip->forward(ids.reshape({2, 77})).lastHiddenState, 1e-6, 1e-6));
  // clip_skip 2: the penultimate layer's output through final_layer_norm.
  const torch::Tensor skip = models::encodeSdText(clip->textModel(), ids, 1);
  const torch::Tensor expected = clip->textModel()->finalLayerNorm()(clip->forward(ids.reshape({2, 77})).hiddenStates[1]);
  EXPECT_TRUE(torch::allclose(skip, expected, 1e-6, 1e-6));
}
