// Loss masks (alpha_mask, masked_loss with conditioning_data_dir): decoded from the alpha channel
// or a mask image's red channel, resized, cropped and mirrored with their image through bucketing
// and flip_aug, carried by the latent cache, and the errors sd-scripts' users meet.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/config.h"
#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/image_tensor.h"
#include "data/latent_cache.h"
#include "data/loss_mask.h"
#include "data_test_images.h"

using namespace sinter;
using namespace sinter::data;
using namespace sinter::data::testing;

namespace {

// An RGBA image whose alpha is a copy of its red channel (a diagonal pattern, so any shift or
// mirror between the two shows), green and blue a function of position.
void writeRgbaTwin(const std::string& path, int w, int h) {
  std::vector<std::uint8_t> px(size_t(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = &px[(size_t(y) * w + x) * 4];
      p[0] = std::uint8_t((x * 7 + y * 3) % 256 * ((x + y) % 3 == 0));  // not symmetric in x
      p[1] = std::uint8_t(y * 255 / std::max(1, h - 1));
      p[2] = std::uint8_t(x * 255 / std::max(1, w - 1));
      p[3] = p[0];
    }
  ASSERT_TRUE(stbi_write_png(path.c_str(), w, h, 4, px.data(), w * 4));
}

// An RGB mask image whose red channel is that of `writeRgbaTwin`'s image (green and blue differ).
void writeRedMask(const std::string& path, int w, int h) {
  std::vector<std::uint8_t> px(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = &px[(size_t(y) * w + x) * 3];
      p[0] = std::uint8_t((x * 7 + y * 3) % 256 * ((x + y) % 3 == 0));
      p[1] = 200;
      p[2] = 17;
    }
  ASSERT_TRUE(stbi_write_png(path.c_str(), w, h, 3, px.data(), w * 3));
}

DatasetSettings bucketed(SubsetSettings s) {
  DatasetSettings d;
  d.buckets.resolution = {32, 32};
  d.buckets.enableBucket = true;
  d.buckets.minBucketReso = 16;
  d.buckets.maxBucketReso = 64;
  d.buckets.bucketResoSteps = 16;
  d.batchSize = 2;
  d.subsets.push_back(std::move(s));
  return d;
}

SubsetSettings subsetOf(const std::string& dir) {
  SubsetSettings s;
  s.imageDir = dir;
  s.classTokens = "sks";
  s.captionExtension = ".txt";
  return s;
}

// Every batch of two epochs: each mask must be its image's red channel / 255 (the images are
// twins, so the mask followed the image's resize, crop and mirror exactly).
void expectMasksFollowImages(const Dataset& d, const LatentCache* cache = nullptr) {
  const BatchPlan plan(d, 1234);
  BatchLoader loader(d, plan, {}, cache);
  bool sawFlip = false, sawUnflipped = false;
  for (long long i = 0; i < 2 * plan.batchesPerEpoch(); ++i) {
    const Batch b = loader.next();
    ASSERT_TRUE(b.lossMasks.defined());
    ASSERT_EQ(b.lossMasks.dim(), 3);
    EXPECT_EQ(b.lossMasks.size(1), b.bucket.height);
    EXPECT_EQ(b.lossMasks.size(2), b.bucket.width);
    for (size_t k = 0; k < b.imageIndices.size(); ++k) {
      (b.flipped[k] ? sawFlip : sawUnflipped) = true;
      if (cache) continue;  // no pixels to compare with: checked against the cache's own mask by the caller
      const torch::Tensor red = ((b.images[static_cast<long>(k)][0] + 1.0) * 127.5).round();
      EXPECT_TRUE(torch::allclose(b.lossMasks[static_cast<long>(k)] * 255.0, red, 0, 1e-3))
          << "image " << d.images[b.imageIndices[k]].path << (b.flipped[k] ? " (flipped)" : "");
    }
  }
  EXPECT_TRUE(sawFlip);
  EXPECT_TRUE(sawUnflipped);
}

}  // namespace

TEST(LossMask, DecodingKeepsAlphaAndMakesItOpaqueWithoutOne) {
  TempDir dir;
  writeRgbaTwin(dir / "rgba.png", 6, 5);
  const RgbaImage rgba = loadImageFileWithAlpha(dir / "rgba.png");
  const RgbImage rgb = loadImageFile(dir / "rgba.png");
  EXPECT_EQ(rgba.rgb.pixels, rgb.pixels);  // the colour is the same as without alpha
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 6; ++x) EXPECT_EQ(*rgba.alpha.pixel(x, y), rgba.rgb.pixel(x, y)[0]);
  // sd-scripts' convert("RGBA") of an image without alpha: opaque, so the mask is all ones.
  for (const char* name : {"rgb.png", "rgb.webp", "rgb.jpg", "rgb.bmp"}) {
    writeImage(dir / name, 6, 5, 3);
    const RgbaImage opaque = loadImageFileWithAlpha(dir / name);
    EXPECT_EQ(opaque.alpha.width, 6);
    EXPECT_EQ(opaque.alpha.pixels, std::vector<std::uint8_t>(30, 255)) << name;
  }
  writeImage(dir / "alpha.webp", 6, 5, 4);  // makePixels: alpha 255 on even columns, 0 on odd
  const RgbaImage webp = loadImageFileWithAlpha(dir / "alpha.webp");
  EXPECT_EQ(*webp.alpha.pixel(0, 0), 255);
  EXPECT_EQ(*webp.alpha.pixel(1, 0), 0);
}

TEST(LossMask, AlphaMaskFollowsItsImageThroughBucketsCropsAndFlips) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeRgbaTwin(dir / "imgs/wide.png", 53, 29);  // resized and cropped in width
  writeRgbaTwin(dir / "imgs/tall.png", 30, 61);  // resized and cropped in height
  writeRgbaTwin(dir / "imgs/exact.png", 32, 32);
  writeImage(dir / "imgs/opaque.png", 32, 32, 3);  // no alpha: ones
  SubsetSettings s = subsetOf(dir / "imgs");
  s.alphaMask = true;
  s.flipAug = true;
  s.randomCrop = true;  // random offsets must be the image's too
  s.resizeFilter = ResizeFilter::Bilinear;
  const Dataset d = buildDataset({bucketed(s)});
  ASSERT_TRUE(d.hasLossMasks());
  // The opaque image's red channel is not its mask: check it apart.
  Dataset twins = d;
  twins.images.erase(std::remove_if(twins.images.begin(), twins.images.end(),
                                    [](const ImageEntry& e) { return e.path.find("opaque") != std::string::npos; }),
                     twins.images.end());
  expectMasksFollowImages(twins);

  const BatchPlan plan(d, 7);
  BatchLoader loader(d, plan, {});
  bool sawOpaque = false;
  for (long long i = 0; i < plan.batchesPerEpoch(); ++i) {
    const Batch b = loader.next();
    for (size_t k = 0; k < b.imageIndices.size(); ++k)
      if (d.images[b.imageIndices[k]].path.find("opaque") != std::string::npos) {
        sawOpaque = true;
        EXPECT_TRUE(torch::equal(b.lossMasks[static_cast<long>(k)], torch::ones({32, 32})));
      }
  }
  EXPECT_TRUE(sawOpaque);
}

TEST(LossMask, WithoutMasksBatchesCarryNoneAndOthersGetOnes) {
  TempDir dir;
  fs::create_directories(dir.path / "plain");
  fs::create_directories(dir.path / "masked");
  writeRgbaTwin(dir / "plain/a.png", 32, 32);
  writeRgbaTwin(dir / "masked/b.png", 32, 32);
  const Dataset plain = buildDataset({bucketed(subsetOf(dir / "plain"))});
  EXPECT_FALSE(plain.hasLossMasks());
  const BatchPlan plainPlan(plain, 1);
  EXPECT_FALSE(BatchLoader(plain, plainPlan, {}).next().lossMasks.defined());

  // One subset with alpha_mask, one without: sd-scripts fills the other images' masks with ones.
  DatasetSettings mixed = bucketed(subsetOf(dir / "plain"));
  SubsetSettings masked = subsetOf(dir / "masked");
  masked.alphaMask = true;
  mixed.subsets.push_back(masked);
  const Dataset d = buildDataset({mixed});
  ASSERT_TRUE(d.hasLossMasks());
  const BatchPlan plan(d, 1);
  const Batch b = BatchLoader(d, plan, {}).next();
  ASSERT_EQ(b.imageIndices.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const bool isMasked = d.images[b.imageIndices[k]].path.find("masked") != std::string::npos;
    const torch::Tensor m = b.lossMasks[static_cast<long>(k)];
    if (isMasked) EXPECT_FALSE(torch::equal(m, torch::ones_like(m)));
    else EXPECT_TRUE(torch::equal(m, torch::ones_like(m)));
  }
}

TEST(LossMask, ConditioningImagesPairByNameAndFollowTheirImages) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  fs::create_directories(dir.path / "masks");
  writeRgbaTwin(dir / "imgs/wide.png", 53, 29);
  writeRgbaTwin(dir / "imgs/tall.png", 30, 61);
  writeRedMask(dir / "masks/wide.png", 53, 29);
  writeRedMask(dir / "masks/tall.bmp", 30, 61);  // any image extension, as sd-scripts' glob_images
  SubsetSettings s = subsetOf(dir / "imgs");
  s.conditioningDataDir = dir / "masks";
  s.flipAug = true;
  s.alphaMask = true;  // from a top-level alpha_mask: the conditioning folder comes first
  const Dataset d = buildDataset({bucketed(s)});
  for (const ImageEntry& e : d.images) EXPECT_EQ(fs::path(e.maskPath).stem(), fs::path(e.path).stem());
  expectMasksFollowImages(d);

  // A training image without a mask, a mask without an image, and a mask of another size.
  writeRgbaTwin(dir / "imgs/lonely.png", 32, 32);
  try {
    buildDataset({bucketed(s)});
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("lonely.png"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("conditioning_data_dir"), std::string::npos) << e.what();
  }
  fs::remove(dir.path / "imgs/lonely.png");
  writeRedMask(dir / "masks/stray.png", 32, 32);
  try {
    buildDataset({bucketed(s)});
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("stray.png"), std::string::npos) << e.what();
  }
  fs::remove(dir.path / "masks/stray.png");
  writeRedMask(dir / "masks/wide.png", 52, 29);
  try {
    buildDataset({bucketed(s)});
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("52x29"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("53x29"), std::string::npos) << e.what();
  }
  s.conditioningDataDir = dir / "no_such_folder";
  EXPECT_THROW(buildDataset({bucketed(s)}), DatasetError);
}

TEST(LossMask, LatentCacheCarriesMasksAndIsRebuiltWhenTheyChange) {
  TempDir dir;
  fs::create_directories(dir.path / "imgs");
  writeRgbaTwin(dir / "imgs/wide.png", 53, 29);
  writeRgbaTwin(dir / "imgs/exact.png", 32, 32);
  const auto encoder = [](const torch::Tensor& images) { return torch::avg_pool2d(images, 8); };
  LatentCacheOptions opts;
  opts.toDisk = true;
  opts.encoderIdentity = "pool8";
  LatentCacheStats stats;
  SubsetSettings s = subsetOf(dir / "imgs");
  s.flipAug = true;
  // A cache written without masks is not reused once alpha_mask is on.
  LatentCache::build(buildDataset({bucketed(s)}), encoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  s.alphaMask = true;
  const Dataset d = buildDataset({bucketed(s)});
  const LatentCache first = LatentCache::build(d, encoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  const LatentCache second = LatentCache::build(d, encoder, opts, &stats);
  EXPECT_EQ(stats.loadedFromDisk, 2u);
  for (size_t i = 0; i < d.images.size(); ++i) {
    const ImageEntry& e = d.images[i];
    Rng unused(0);
    const MaskedImage img = resizeAndCrop(loadMaskedImage(e, s), e.choice, false, unused, s.resizeFilter);
    ASSERT_TRUE(first.get(i).mask.defined());
    EXPECT_TRUE(torch::equal(first.get(i).mask, maskToTensor(img.mask)));
    EXPECT_TRUE(torch::equal(second.get(i).mask, first.get(i).mask));  // the disk round trip
    EXPECT_TRUE(torch::equal(second.get(i).latents, first.get(i).latents));
  }
  // Batches from the cache: the mask mirrored with the flipped latents.
  const BatchPlan plan(d, 99);
  BatchLoader loader(d, plan, {}, &second);
  for (long long i = 0; i < 2 * plan.batchesPerEpoch(); ++i) {
    const Batch b = loader.next();
    ASSERT_TRUE(b.lossMasks.defined());
    for (size_t k = 0; k < b.imageIndices.size(); ++k) {
      const torch::Tensor& m = second.get(b.imageIndices[k]).mask;
      EXPECT_TRUE(torch::equal(b.lossMasks[static_cast<long>(k)], b.flipped[k] ? m.flip({1}) : m));
    }
  }
  // Turning alpha_mask off again: the masked files are not reused either.
  s.alphaMask = false;
  const LatentCache plain = LatentCache::build(buildDataset({bucketed(s)}), encoder, opts, &stats);
  EXPECT_EQ(stats.encoded, 2u);
  EXPECT_FALSE(plain.get(0).mask.defined());
}

TEST(LossMask, ConfigErrorsNameTheKey) {
  TempDir dir;
  fs::create_directories(dir.path / "train/1_cat");
  fs::create_directories(dir.path / "masks");
  writeRgbaTwin(dir / "train/1_cat/a.png", 32, 32);
  writeRedMask(dir / "masks/a.png", 32, 32);
  std::vector<std::string> warnings;
  const auto errorOf = [&](const Config& config) {
    try {
      datasetSettingsFromConfig(config, warnings);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Config config;
  config.set("train_data_dir", dir / "train");
  config.set("resolution", std::string("32"));
  config.set("masked_loss", true);
  EXPECT_NE(errorOf(config).find("masked_loss needs masks"), std::string::npos) << errorOf(config);
  config.set("conditioning_data_dir", dir / "masks");
  const auto settings = datasetSettingsFromConfig(config, warnings);
  EXPECT_EQ(settings[0].subsets[0].conditioningDataDir, dir / "masks");  // the top level is every subset's
  EXPECT_EQ(buildDataset(settings).images[0].maskPath, dir / "masks/a.png");
  config.set("masked_loss", Value{});
  EXPECT_NE(errorOf(config).find("only with masked_loss"), std::string::npos) << errorOf(config);
  config.set("conditioning_data_dir", Value{});
  config.set("alpha_mask", true);
  EXPECT_TRUE(datasetSettingsFromConfig(config, warnings)[0].subsets[0].alphaMask);
  config.set("masked_loss", true);  // alpha_mask is a mask source too
  EXPECT_EQ(errorOf(config), "no error");

  // In a dataset TOML: alpha_mask and conditioning_data_dir per subset (no longer refused), but
  // not both in one subset, and no conditioning_data_dir on a fine-tuning subset.
  const std::string toml = dir / "ds.toml";
  writeText(toml, "[[datasets]]\nresolution = 32\n[[datasets.subsets]]\nimage_dir = '" + (dir / "train/1_cat") +
                      "'\nalpha_mask = true\n");
  Config withToml;
  withToml.set("dataset_config", toml);
  EXPECT_TRUE(datasetSettingsFromConfig(withToml, warnings)[0].subsets[0].alphaMask);
  writeText(toml, "[[datasets]]\nresolution = 32\n[[datasets.subsets]]\nimage_dir = '" + (dir / "train/1_cat") +
                      "'\nalpha_mask = true\nconditioning_data_dir = '" + (dir / "masks") + "'\n");
  withToml.set("masked_loss", true);
  const std::string both = errorOf(withToml);
  EXPECT_NE(both.find("alpha_mask"), std::string::npos) << both;
  EXPECT_NE(both.find("ds.toml:5"), std::string::npos) << both;
  writeText(toml, "[[datasets]]\nresolution = 32\n[[datasets.subsets]]\nimage_dir = '" + (dir / "train/1_cat") +
                      "'\nconditioning_data_dir = '" + (dir / "masks") + "'\n");
  EXPECT_EQ(datasetSettingsFromConfig(withToml, warnings)[0].subsets[0].conditioningDataDir, dir / "masks");
  withToml.set("masked_loss", Value{});
  EXPECT_NE(errorOf(withToml).find("ds.toml"), std::string::npos) << errorOf(withToml);
}
