#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/random_checkpoint.h"
#include "models/checkpoints/sdxl_checkpoint.h"
#include "models/layers/conv2d.h"
#include "models/layers/linear.h"
#include "models/layers/parameters_from_checkpoint.h"
#include "models/unet/sdxl_size_conditioning.h"

namespace fs = std::filesystem;
using namespace sinter::models;
using sinter::io::SafetensorsFile;

namespace {

class SdxlCheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("sinter_models_checkpoint_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    writeRandomSdxlCheckpoint(tinyPath(), /*tiny=*/true, /*seed=*/42);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string tinyPath() { return (dir_ / "tiny.safetensors").string(); }
  static std::string file(const std::string& name) { return (dir_ / name).string(); }

  // The tiny checkpoint's tensors, edited, written to another file.
  static std::string editedCopy(const std::string& name,
                                const std::function<void(std::vector<std::pair<std::string, torch::Tensor>>&)>& edit) {
    SafetensorsFile source(tinyPath());
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    for (const std::string& key : source.keys()) tensors.emplace_back(key, source.tensor(key));
    edit(tensors);
    sinter::io::writeSafetensors(file(name), tensors);
    return file(name);
  }

  static std::string loadError(const std::string& path) {
    try {
      loadSdxlCheckpoint(path);
    } catch (const CheckpointError& e) {
      return e.what();
    }
    return "";
  }

  static fs::path dir_;
};

fs::path SdxlCheckpointTest::dir_;

TEST_F(SdxlCheckpointTest, RandomTinyCheckpointHoldsEveryModelInTheOriginalLayout) {
  SafetensorsFile f(tinyPath());
  for (const char* key : {"model.diffusion_model.input_blocks.0.0.weight", "model.diffusion_model.out.2.weight",
                          "first_stage_model.encoder.conv_in.weight", "first_stage_model.decoder.conv_out.bias",
                          "conditioner.embedders.0.transformer.text_model.embeddings.token_embedding.weight",
                          "conditioner.embedders.1.model.text_projection",
                          "conditioner.embedders.1.model.transformer.resblocks.0.attn.in_proj_weight"})
    EXPECT_TRUE(f.has(key)) << key;
  EXPECT_EQ(f.info("model.diffusion_model.input_blocks.0.0.weight").dtype, "F32");
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base");
}

TEST_F(SdxlCheckpointTest, ConfigIsInferredFromTheShapes) {
  SafetensorsFile f(tinyPath());
  const SdxlCheckpointConfig c = SdxlCheckpointConfig::inferFromCheckpoint(f);
  const SdxlCheckpointConfig expected = SdxlCheckpointConfig::tiny();
  EXPECT_TRUE(c.unet == expected.unet);
  EXPECT_TRUE(c.vae == expected.vae);
  EXPECT_TRUE(c.clipL == expected.clipL);
  EXPECT_TRUE(c.bigG == expected.bigG);

  // Another structure in the same layout: two res blocks per level, deeper transformers.
  SdxlUnetConfig other = SdxlUnetConfig::tiny();
  other.numResBlocks = 2;
  other.transformerDepth = {0, 2, 3};
  other.transformerDepthMiddle = 2;
  other.modelChannels = 64;
  other.channelMult = {1, 2};
  other.transformerDepth = {0, 2};
  torch::manual_seed(0);
  SdxlUnet unet(other);
  sinter::io::writeSafetensors(file("other_unet.safetensors"), unet->checkpointTensors());
  EXPECT_TRUE(SdxlUnetImpl::inferFromCheckpoint(SafetensorsFile(file("other_unet.safetensors"))) == other);
}

TEST(SdxlCheckpointConfig, FullSizeModelsFitTogether) {
  const SdxlCheckpointConfig full = SdxlCheckpointConfig::full();
  EXPECT_NO_THROW(full.validate());
  EXPECT_EQ(full.unet.contextDim, 2048);
  EXPECT_EQ(full.unet.admInChannels, 2816);
}

TEST_F(SdxlCheckpointTest, ReloadedModelsGiveIdenticalOutputs) {
  SdxlCheckpoint loaded = loadSdxlCheckpoint(tinyPath());
  const SdxlCheckpointConfig config = SdxlCheckpointConfig::tiny();
  SdxlUnet unet = buildRandomSdxlUnet(config, 42);
  SdxlVae vae = buildRandomSdxlVae(config, 42);
  ClipTextModel clipL = buildRandomSdxlClipL(config, 42);
  OpenClipTextModel bigG = buildRandomSdxlBigG(config, 42);

  torch::NoGradGuard noGrad;
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({1, 4, 8, 8});
  const torch::Tensor t = torch::tensor({500.0});
  const torch::Tensor ids = torch::randint(0, 49408, {1, 77}, torch::kLong);
  const OpenClipTextOutput g = bigG(ids), gl = loaded.bigG(ids);
  EXPECT_TRUE(torch::equal(g.pooled, gl.pooled));
  const torch::Tensor l = clipL->penultimateHiddenState(ids), ll = loaded.clipL->penultimateHiddenState(ids);
  EXPECT_TRUE(torch::equal(l, ll));
  const torch::Tensor context = torch::cat({l, g.penultimateHiddenState}, -1);
  const torch::Tensor size = torch::tensor({64, 64}).reshape({1, 2});
  const torch::Tensor y = sdxlAdmVector(g.pooled, size, torch::zeros({1, 2}), size);
  EXPECT_TRUE(torch::equal(unet(x, t, context, y), loaded.unet(x, t, context, y)));
  const torch::Tensor images = torch::rand({1, 3, 16, 16}) * 2 - 1;
  EXPECT_TRUE(torch::equal(vae->encodeToLatents(images, false), loaded.vae->encodeToLatents(images, false)));
  EXPECT_TRUE(torch::equal(vae->decodeLatents(x), loaded.vae->decodeLatents(x)));
}

// Layers made for a checkpoint's values leave torch's random stream untouched (their random initial
// values were most of a full-size model's load time); elsewhere they draw torch.nn's as before.
TEST(ParametersFromCheckpoint, LayersMadeForACheckpointDrawNoRandomNumbers) {
  const auto drawAfter = [](const std::function<void()>& make) {
    torch::manual_seed(5);
    make();
    return torch::rand({8});
  };
  const torch::Tensor untouched = drawAfter([] {});
  EXPECT_TRUE(torch::equal(drawAfter([] {
                             const ParametersFromCheckpoint fromFile;
                             Linear(64, 32);
                             Conv2d(4, 8, 3, 1, 1);
                           }),
                           untouched));
  EXPECT_FALSE(torch::equal(drawAfter([] { Linear(64, 32); }), untouched));
  EXPECT_FALSE(torch::equal(drawAfter([] { Conv2d(4, 8, 3, 1, 1); }), untouched));
  EXPECT_FALSE(ParametersFromCheckpoint::active());
}

TEST_F(SdxlCheckpointTest, HalfPrecisionCheckpointsLoad) {
  writeRandomSdxlCheckpoint(file("half.safetensors"), SdxlCheckpointConfig::tiny(), 42, torch::kBFloat16);
  SafetensorsFile f(file("half.safetensors"));
  EXPECT_EQ(f.info("model.diffusion_model.out.2.weight").dtype, "BF16");
  SdxlCheckpoint loaded = loadSdxlCheckpoint(f);
  SdxlUnet unet = buildRandomSdxlUnet(SdxlCheckpointConfig::tiny(), 42);
  const torch::Tensor w = unet->named_parameters()["out.2.weight"];
  EXPECT_TRUE(torch::equal(loaded.unet->named_parameters()["out.2.weight"], w.to(torch::kBFloat16).to(torch::kFloat32)));
}

TEST_F(SdxlCheckpointTest, MissingKeyIsListed) {
  const std::string path = editedCopy("missing.safetensors", [](auto& tensors) {
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const auto& e) {
                                   return e.first == "model.diffusion_model.input_blocks.3.1.transformer_blocks.0.attn2.to_v.weight" ||
                                          e.first == "first_stage_model.decoder.mid.attn_1.k.bias";
                                 }),
                  tensors.end());
  });
  const std::string error = loadError(path);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("missing key"), std::string::npos) << error;
  EXPECT_NE(error.find("model.diffusion_model.input_blocks.3.1.transformer_blocks.0.attn2.to_v.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("first_stage_model.decoder.mid.attn_1.k.bias"), std::string::npos) << error;
}

TEST_F(SdxlCheckpointTest, WrongShapeIsListed) {
  const std::string path = editedCopy("shape.safetensors", [](auto& tensors) {
    for (auto& [key, t] : tensors)
      if (key == "model.diffusion_model.output_blocks.0.0.emb_layers.1.weight") t = torch::zeros({3, 5});
  });
  const std::string error = loadError(path);
  EXPECT_NE(error.find("model.diffusion_model.output_blocks.0.0.emb_layers.1.weight is [3, 5], expected [128, 128]"),
            std::string::npos)
      << error;
}

TEST_F(SdxlCheckpointTest, FluxFileIsRecognised) {
  sinter::io::writeSafetensors(file("flux.safetensors"), {{"double_blocks.0.img_attn.qkv.weight", torch::zeros({6, 2})},
                                                           {"single_blocks.0.linear1.weight", torch::zeros({4, 2})}});
  const std::string error = loadError(file("flux.safetensors"));
  EXPECT_NE(error.find("this looks like a FLUX checkpoint"), std::string::npos) << error;
  EXPECT_NE(error.find("flux.safetensors"), std::string::npos) << error;
}

TEST_F(SdxlCheckpointTest, MismatchedTextWidthIsAClearError) {
  // A UNet whose context does not fit the text encoders.
  const std::string path = editedCopy("mismatch.safetensors", [](auto& tensors) {
    SdxlUnetConfig c = SdxlCheckpointConfig::tiny().unet;
    c.contextDim = 48;
    torch::manual_seed(0);
    SdxlUnet unet(c);
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const auto& e) { return e.first.rfind("model.diffusion_model.", 0) == 0; }),
                  tensors.end());
    for (auto& e : unet->checkpointTensors()) tensors.push_back(e);
  });
  const std::string error = loadError(path);
  EXPECT_NE(error.find("context width 48"), std::string::npos) << error;
}

}  // namespace
