// Masked loss end to end through the real sinter-runner on tiny models and generated RGBA images,
// on the CPU: SDXL with alpha_mask (from the images, and through the latent cache on disk) and
// FLUX with masked_loss and a conditioning_data_dir of mask images. Each trains, and its losses
// differ from the same run unmasked.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "io/safetensors.h"
#include "runner_process.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace fs = std::filesystem;
using sinter::test::writeText;
using sinter::test::ProcessResult;
using sinter::test::doneStatus;
using sinter::test::losses;
using sinter::test::runRunner;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// Four 128x128 pictures (a disc on a gradient) with captions; alpha (and the mask image's red
// channel) keeps the disc and drops the background.
void writeMaskedDataset() {
  const std::string images = path("rgba/4_sks disc"), masks = path("masks");
  fs::create_directories(images);
  fs::create_directories(masks);
  const int n = 128;
  for (int i = 0; i < 4; ++i) {
    std::vector<std::uint8_t> rgba(size_t(n) * n * 4), mask(size_t(n) * n * 3);
    const int cx = 40 + 16 * i, cy = 64, r = 24 + 4 * i;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const bool inside = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;
        std::uint8_t* p = &rgba[(size_t(y) * n + x) * 4];
        p[0] = inside ? 220 : std::uint8_t(x * 2);
        p[1] = inside ? std::uint8_t(40 * i) : std::uint8_t(y * 2);
        p[2] = inside ? 30 : 128;
        p[3] = inside ? 255 : 0;
        std::uint8_t* m = &mask[(size_t(y) * n + x) * 3];
        m[0] = m[1] = m[2] = p[3];
      }
    const std::string name = "disc" + std::to_string(i);
    ASSERT_TRUE(stbi_write_png((images + "/" + name + ".png").c_str(), n, n, 4, rgba.data(), n * 4));
    ASSERT_TRUE(stbi_write_png((masks + "/" + name + ".png").c_str(), n, n, 3, mask.data(), n * 3));
    writeText(images + "/" + name + ".txt", "sks disc, red");
  }
}

std::string commonConfig(const std::string& outputDir) {
  return "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
         "train_data_dir = \"" + path("rgba") + "\"\n"
         "output_dir = \"" + outputDir + "\"\n"
         "output_name = \"t\"\n"
         "resolution = \"128,128\"\n"
         "caption_extension = \".txt\"\n"
         "max_data_loader_n_workers = 0\n"
         "network_dim = 4\n"
         "network_alpha = 4.0\n"
         "learning_rate = 0.01\n"
         "network_train_unet_only = true\n"
         "max_train_steps = 4\n"
         "train_batch_size = 2\n"
         "flip_aug = true\n"
         "seed = 7\n";
}

std::string sdxlConfig(const std::string& name, const std::string& extra) {
  const std::string p = path(name);
  writeText(p, "model_family = \"sdxl\"\npretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n" +
                   commonConfig(path("out_" + name)) + extra);
  return p;
}

std::string fluxConfig(const std::string& name, const std::string& extra) {
  const std::string p = path(name);
  writeText(p, "model_family = \"flux\"\npretrained_model_name_or_path = \"" + path("flux/flux1-dev.safetensors") + "\"\n" +
                   commonConfig(path("out_" + name)) + "t5xxl_max_token_length = 16\nae = \"" + path("flux/ae.safetensors") +
                   "\"\nclip_l = \"" + path("flux/clip_l.safetensors") + "\"\nt5xxl = \"" +
                   path("flux/t5xxl_fp16.safetensors") + "\"\nt5_tokenizer = \"" + path("tokenizer") + "\"\n" + extra);
  return p;
}

std::vector<double> trainedLosses(const std::string& config, const std::string& outputDir = "") {
  std::vector<std::string> args = {"--config_file", config, "--events", "jsonl"};
  if (!outputDir.empty()) args.insert(args.end(), {"--output_dir", outputDir});
  ProcessResult r = runRunner(args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const std::vector<double> l = losses(r);
  EXPECT_EQ(l.size(), 4u);
  for (double v : l) EXPECT_TRUE(std::isfinite(v));
  return l;
}

// The runs share the seed, so the first step draws the same noise and timesteps: only the mask
// can make its loss differ. A mask keeping less than the whole image lowers it.
void expectMaskedDiffers(const std::vector<double>& masked, const std::vector<double>& plain) {
  ASSERT_FALSE(masked.empty());
  ASSERT_FALSE(plain.empty());
  EXPECT_LT(masked[0], plain[0]) << "masked " << masked[0] << ", unmasked " << plain[0];
}

class MaskedLossRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_masked_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size",
                         "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    writeMaskedDataset();
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(MaskedLossRun, SdxlAlphaMaskTrainsAndChangesTheLoss) {
  const std::vector<double> plain = trainedLosses(sdxlConfig("sdxl_plain.toml", ""));
  const std::vector<double> masked = trainedLosses(sdxlConfig("sdxl_alpha.toml", "alpha_mask = true\n"));
  expectMaskedDiffers(masked, plain);
  EXPECT_TRUE(fs::exists(path("out_sdxl_alpha.toml/t.safetensors")));

  // Through the latent cache on disk: the masks are cached with the latents, and a second run
  // reads both back and trains the same.
  const std::string cached = sdxlConfig("sdxl_cached.toml", "alpha_mask = true\ncache_latents = true\ncache_latents_to_disk = true\n");
  const std::vector<double> first = trainedLosses(cached);
  const std::string cacheFile = path("rgba/4_sks disc/disc0_128x128_sinter_sdxl.safetensors");
  ASSERT_TRUE(fs::exists(cacheFile));
  sinter::io::SafetensorsFile f(cacheFile);
  ASSERT_TRUE(f.has("alpha_mask"));
  const torch::Tensor mask = f.tensor("alpha_mask");
  EXPECT_EQ(mask.sizes(), (std::vector<int64_t>{128, 128}));
  EXPECT_DOUBLE_EQ(mask[64][40].item<double>(), 1.0);  // the disc
  EXPECT_DOUBLE_EQ(mask[2][2].item<double>(), 0.0);    // the background
  EXPECT_EQ(trainedLosses(cached, path("out_sdxl_cached_again")), first);
}

TEST_F(MaskedLossRun, FluxMaskedLossWithMaskImagesTrainsAndChangesTheLoss) {
  const std::vector<double> plain = trainedLosses(fluxConfig("flux_plain.toml", ""));
  const std::vector<double> masked =
      trainedLosses(fluxConfig("flux_masked.toml", "masked_loss = true\nconditioning_data_dir = \"" + path("masks") + "\"\n"));
  expectMaskedDiffers(masked, plain);
  // The alpha channel holds the same masks: the same run.
  EXPECT_EQ(trainedLosses(fluxConfig("flux_alpha.toml", "alpha_mask = true\n")), masked);
}

TEST_F(MaskedLossRun, MaskedLossWithoutMasksIsRefused) {
  ProcessResult r = runRunner({"--config_file", sdxlConfig("no_masks.toml", "masked_loss = true\n")});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("masked_loss"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("conditioning_data_dir"), std::string::npos) << r.err;
}
