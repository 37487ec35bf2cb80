// Dataset discovery: folder mode, dataset_config (validation with line numbers, overrides),
// captions, buckets on a mixed-size folder, regularisation balancing and bad inputs; the dataset
// check's findings on what it read (cli_dataset_check_test runs it as --check_dataset).
#include <gtest/gtest.h>

#include "core/config.h"
#include "data/dataset.h"
#include "data/dataset_check.h"
#include "data/dataset_config.h"
#include "data_test_images.h"

using namespace sinter;
using namespace sinter::data;
using namespace sinter::data::testing;

namespace {

ParamLayer layer(std::initializer_list<std::pair<const char*, Value>> values) {
  ParamLayer l;
  for (const auto& [k, v] : values) l[k] = {v, {}};
  return l;
}

Dataset folderDataset(const TempDir& dir, const ParamLayer& cmd, const std::string& reg = "") {
  std::vector<std::string> warnings;
  auto subsets = folderModeSubsets(dir / "train", reg, warnings);
  Dataset d = buildDataset(resolveDatasetSettings(nullptr, subsets, cmd));
  d.warnings.insert(d.warnings.begin(), warnings.begin(), warnings.end());
  return d;
}

std::string errorOf(const std::string& toml) {
  try {
    parseDatasetConfigToml(toml, "ds.toml");
  } catch (const ConfigError& e) {
    return formatAll(e.diagnostics());
  }
  return "";
}

}  // namespace

TEST(Dataset, FolderModeWithCaptionsAndBuckets) {
  TempDir dir;
  fs::create_directories(dir.path / "train/3_sks dog");
  fs::create_directories(dir.path / "train/notes");
  writeImage(dir / "train/3_sks dog/a.png", 96, 64);
  writeImage(dir / "train/3_sks dog/b.JPG", 64, 96);
  writeImage(dir / "train/3_sks dog/c.webp", 64, 64);
  writeImage(dir / "train/3_sks dog/d.bmp", 128, 32);
  writeText(dir / "train/3_sks dog/a.txt", "\xEF\xBB\xBF" "a photo, of sks dog\nignored second line\n");
  writeText(dir / "train/3_sks dog/readme.md", "not an image");
  const Dataset d = folderDataset(dir, layer({{"resolution", std::string("64")}, {"enable_bucket", true},
                                              {"min_bucket_reso", 32LL}, {"max_bucket_reso", 128LL},
                                              {"bucket_reso_steps", 16LL}, {"caption_extension", std::string(".txt")}}));
  ASSERT_EQ(d.images.size(), 4u);
  EXPECT_EQ(d.numTrainImages, 12);
  EXPECT_EQ(d.images[0].caption, "a photo, of sks dog");
  EXPECT_EQ(d.images[1].caption, "sks dog");  // class tokens from the folder name
  EXPECT_EQ(d.images[0].repeats, 3);
  // Buckets as sd-scripts assigns them (see data_buckets_test for the derivation).
  EXPECT_EQ(toString(d.images[0].choice.bucket), "80x48");
  EXPECT_EQ(toString(d.images[1].choice.bucket), "48x80");
  EXPECT_EQ(toString(d.images[2].choice.bucket), "64x64");
  EXPECT_EQ(toString(d.images[3].choice.bucket), "128x32");
  bool warnedNotes = false;
  for (const auto& w : d.warnings) warnedNotes |= w.find("notes") != std::string::npos;
  EXPECT_TRUE(warnedNotes) << d.report();
}

TEST(Dataset, RegImagesAreBalancedToTrainImages) {
  TempDir dir;
  fs::create_directories(dir.path / "train/5_sks dog");
  fs::create_directories(dir.path / "reg/1_dog");
  for (int i = 0; i < 2; ++i) writeImage(dir / ("train/5_sks dog/" + std::to_string(i) + ".png"), 16, 16);
  for (int i = 0; i < 3; ++i) writeImage(dir / ("reg/1_dog/" + std::to_string(i) + ".png"), 16, 16);
  const Dataset d = folderDataset(dir, layer({{"resolution", std::string("16")}}), dir / "reg");
  EXPECT_EQ(d.numTrainImages, 10);
  EXPECT_EQ(d.numRegImages, 3);
  // 10 train samples: the 3 reg images get 1 each, then round-robin +1 until 10: 4, 3, 3.
  std::vector<int> regRepeats;
  for (const auto& e : d.images)
    if (e.isReg) regRepeats.push_back(e.repeats);
  EXPECT_EQ(regRepeats, (std::vector<int>{4, 3, 3}));
}

TEST(Dataset, MoreRegThanTrainLeavesSomeUnused) {
  TempDir dir;
  fs::create_directories(dir.path / "train/1_a");
  fs::create_directories(dir.path / "reg/1_b");
  writeImage(dir / "train/1_a/x.png", 16, 16);
  for (int i = 0; i < 3; ++i) writeImage(dir / ("reg/1_b/" + std::to_string(i) + ".png"), 16, 16);
  const Dataset d = folderDataset(dir, layer({{"resolution", std::string("16")}}), dir / "reg");
  std::vector<int> regRepeats;
  for (const auto& e : d.images)
    if (e.isReg) regRepeats.push_back(e.repeats);
  EXPECT_EQ(regRepeats, (std::vector<int>{1, 0, 0}));
}

TEST(Dataset, CorruptImagesAreListedAndSkipped) {
  TempDir dir;
  fs::create_directories(dir.path / "train/1_x");
  writeImage(dir / "train/1_x/good.png", 16, 16);
  writeText(dir / "train/1_x/bad.png", "garbage");
  writeText(dir / "train/1_x/empty.jpg", "");
  const Dataset d = folderDataset(dir, layer({{"resolution", std::string("16")}}));
  ASSERT_EQ(d.images.size(), 1u);
  ASSERT_EQ(d.skipped.size(), 2u);
  EXPECT_NE(d.report().find("bad.png"), std::string::npos);
  EXPECT_NE(d.report().find("empty.jpg"), std::string::npos);
}

TEST(Dataset, NothingLeftIsAnErrorListingTheFiles) {
  TempDir dir;
  fs::create_directories(dir.path / "train/1_x");
  writeText(dir / "train/1_x/bad.png", "garbage");
  try {
    folderDataset(dir, layer({{"resolution", std::string("16")}}));
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to train on"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bad.png"), std::string::npos);
  }
}

TEST(Dataset, TooSmallForNoUpscaleIsSkipped) {
  TempDir dir;
  fs::create_directories(dir.path / "train/1_x");
  writeImage(dir / "train/1_x/tiny.png", 8, 40);
  writeImage(dir / "train/1_x/ok.png", 64, 64);
  const Dataset d = folderDataset(dir, layer({{"resolution", std::string("64")}, {"enable_bucket", true},
                                              {"min_bucket_reso", 32LL}, {"max_bucket_reso", 128LL},
                                              {"bucket_reso_steps", 16LL}, {"bucket_no_upscale", true}}));
  ASSERT_EQ(d.images.size(), 1u);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_NE(d.skipped[0].reason.find("8x40"), std::string::npos);
}

TEST(Dataset, NonUtf8CaptionNamesTheFile) {
  TempDir dir;
  fs::create_directories(dir.path / "train/1_x");
  writeImage(dir / "train/1_x/a.png", 16, 16);
  writeText(dir / "train/1_x/a.caption", "caf\xE9 latin-1");
  try {
    folderDataset(dir, layer({{"resolution", std::string("16")}}));
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("a.caption"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos) << e.what();
  }
}

TEST(Dataset, EmptyAndMissingFolders) {
  TempDir dir;
  std::vector<std::string> w;
  EXPECT_THROW(folderModeSubsets(dir / "nope", "", w), DatasetError);
  fs::create_directories(dir.path / "train");
  writeImage(dir / "train/loose.png", 16, 16);
  try {
    folderModeSubsets(dir / "train", "", w);
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("subfolder"), std::string::npos) << e.what();
  }
  fs::create_directories(dir.path / "train/2_empty");
  EXPECT_THROW(folderDataset(dir, layer({{"resolution", std::string("16")}})), DatasetError);
  EXPECT_THROW(folderModeSubsets(dir / "train", dir / "missing_reg", w), DatasetError);
}

TEST(DatasetConfig, ParsesWithOverrides) {
  TempDir dir;
  fs::create_directories(dir.path / "a");
  fs::create_directories(dir.path / "r");
  writeImage(dir / "a/1.png", 32, 32);
  writeImage(dir / "r/1.png", 32, 32);
  const std::string toml = "[general]\nshuffle_caption = true\ncaption_extension = '.txt'\nkeep_tokens = 1\n\n"
                           "[[datasets]]\nresolution = [32, 48]\nbatch_size = 2\n\n"
                           "  [[datasets.subsets]]\n  image_dir = '" + (dir / "a") + "'\n  class_tokens = 'sks girl'\n"
                           "  num_repeats = 10\n  keep_tokens = 2\n\n"
                           "  [[datasets.subsets]]\n  is_reg = true\n  image_dir = '" + (dir / "r") + "'\n"
                           "  class_tokens = 'girl'\n";
  const DatasetConfigFile file = parseDatasetConfigToml(toml, "ds.toml");
  const auto settings = resolveDatasetSettings(&file, {}, layer({{"prior_loss_weight", 0.5}, {"flip_aug", true}}));
  ASSERT_EQ(settings.size(), 1u);
  EXPECT_EQ(toString(settings[0].buckets.resolution), "32x48");
  EXPECT_EQ(settings[0].batchSize, 2);
  EXPECT_DOUBLE_EQ(settings[0].priorLossWeight, 0.5);
  ASSERT_EQ(settings[0].subsets.size(), 2u);
  EXPECT_EQ(settings[0].subsets[0].numRepeats, 10);
  EXPECT_EQ(settings[0].subsets[0].caption.keepTokens, 2);  // subset overrides [general]
  EXPECT_EQ(settings[0].subsets[1].caption.keepTokens, 1);
  EXPECT_TRUE(settings[0].subsets[1].caption.shuffleCaption);
  EXPECT_TRUE(settings[0].subsets[1].flipAug);  // from the training config
  EXPECT_EQ(settings[0].subsets[1].captionExtension, ".txt");
  EXPECT_TRUE(settings[0].subsets[1].isReg);
  const Dataset d = buildDataset(settings);
  EXPECT_EQ(d.numTrainImages, 10);
  EXPECT_EQ(d.images[1].repeats, 10);  // the one reg image balanced to 10
}

TEST(DatasetConfig, ErrorsNameFileLineAndColumn) {
  const std::string e1 = errorOf("[general]\nshufle_caption = true\n[[datasets]]\n[[datasets.subsets]]\nimage_dir='x'\n");
  EXPECT_NE(e1.find("ds.toml:2:1"), std::string::npos) << e1;
  EXPECT_NE(e1.find("did you mean 'shuffle_caption'"), std::string::npos) << e1;
  const std::string e2 = errorOf("[[datasets]]\nbatch_size = \"2\"\n  [[datasets.subsets]]\n  image_dir = 'x'\n"
                                 "  num_repeats = 1.5\n");
  EXPECT_NE(e2.find("ds.toml:2:1"), std::string::npos) << e2;
  EXPECT_NE(e2.find("'batch_size' must be an integer, got a string"), std::string::npos) << e2;
  EXPECT_NE(e2.find("ds.toml:5:3"), std::string::npos) << e2;
  const std::string e3 = errorOf("[[datasets]]\n  [[datasets.subsets]]\n  is_reg = true\n");
  EXPECT_NE(e3.find("no image_dir"), std::string::npos) << e3;
  const std::string e4 = errorOf("[[datasets]]\nimage_dir = 'x'\n[[datasets.subsets]]\nimage_dir='y'\n");
  EXPECT_NE(e4.find("only in [[datasets.subsets]]"), std::string::npos) << e4;
  const std::string e5 = errorOf("[general]\nresolution = 1024\nresolution = 512\n");
  EXPECT_NE(e5.find("ds.toml:3"), std::string::npos) << e5;
  EXPECT_NE(e5.find("syntax"), std::string::npos) << e5;
  const std::string e6 = errorOf("[[datasets]]\nprior_loss_weight = 1.0\n[[datasets.subsets]]\nimage_dir='y'\n");
  EXPECT_NE(e6.find("training config"), std::string::npos) << e6;
  const std::string e7 = errorOf("[[datasets]]\nface_crop_aug_range = [2.0, 4.0]\ncaption_dropout_rate = 1.5\n"
                                 "[[datasets.subsets]]\nimage_dir='y'\n");
  EXPECT_NE(e7.find("face_crop_aug_range is not supported"), std::string::npos) << e7;
  EXPECT_NE(e7.find("ds.toml:3:1"), std::string::npos) << e7;
  EXPECT_NE(errorOf("[general]\ncaption_extension = 'caf\xE9'\n").find("UTF-8"), std::string::npos);
  EXPECT_NE(errorOf("").find("empty"), std::string::npos);
  EXPECT_NE(errorOf("[general]\n").find("no [[datasets]]"), std::string::npos);
  EXPECT_NE(errorOf("datasetz = 1\n").find("did you mean 'datasets'"), std::string::npos);
}

TEST(DatasetConfig, MissingResolutionAndMissingImageDir) {
  const DatasetConfigFile file = parseDatasetConfigToml("[[datasets]]\n[[datasets.subsets]]\nimage_dir = '/no/such'\n", "ds.toml");
  EXPECT_THROW(resolveDatasetSettings(&file, {}, {}), ConfigError);
  const auto settings = resolveDatasetSettings(&file, {}, layer({{"resolution", std::string("64")}}));
  try {
    buildDataset(settings);
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("ds.toml:3"), std::string::npos) << e.what();
  }
}

TEST(Dataset, FromTrainingConfig) {
  TempDir dir;
  fs::create_directories(dir.path / "train/2_cat");
  writeImage(dir / "train/2_cat/a.png", 24, 24);
  Config config;
  config.set("train_data_dir", dir / "train");
  config.set("resolution", std::string("32"));
  config.set("train_batch_size", 4LL);
  std::vector<std::string> warnings;
  const auto settings = datasetSettingsFromConfig(config, warnings);
  ASSERT_EQ(settings.size(), 1u);
  EXPECT_EQ(settings[0].batchSize, 4);
  EXPECT_EQ(settings[0].subsets[0].captionExtension, ".caption");  // sd-scripts' default
  const Dataset d = buildDataset(settings);
  EXPECT_EQ(d.images[0].caption, "cat");
  EXPECT_EQ(toString(d.images[0].choice.bucket), "32x32");
}

// Fine-tuning subsets: sd-scripts' metadata JSON (keys with or without the extension, relative to
// image_dir or absolute; caption, then the separator, then the tags) and its JSON lines form.
TEST(Dataset, FineTuningSubsetsReadCaptionsFromTheMetadataFile) {
  TempDir dir;
  fs::create_directories(dir.path / "img");
  writeImage(dir / "img/a.png", 64, 64);
  writeImage(dir / "img/b.jpg", 64, 64);
  writeImage(dir / "img/c.webp", 64, 64);
  writeText(dir / "img/a.txt", "a caption file the metadata overrides");
  writeText(dir / "meta.json", "{\"a\": {\"caption\": \"a cat\", \"tags\": \"cat, sitting\"},\n"
                               " \"b.jpg\": {\"tags\": \"dog\"},\n"
                               " \"" + (dir / "img/c") + "\": {\"caption\": \"a bird\", \"train_resolution\": [64, 64]}}");
  const ParamLayer cmd = layer({{"resolution", std::string("64")}});
  ParamLayer subset = layer({{"image_dir", dir / "img"}, {"metadata_file", dir / "meta.json"}, {"num_repeats", 2LL}});
  Dataset d = buildDataset(resolveDatasetSettings(nullptr, {subset}, cmd));
  ASSERT_EQ(d.images.size(), 3u);
  EXPECT_EQ(d.images[0].caption, "a cat,cat, sitting");  // caption_separator "," as sd-scripts joins them
  EXPECT_EQ(d.images[1].caption, "dog");
  EXPECT_EQ(d.images[2].caption, "a bird");
  EXPECT_EQ(d.numTrainImages, 6);

  writeText(dir / "meta.jsonl", "{\"image_path\": \"a.png\", \"caption\": \"one\"}\n\n{\"image_path\": \"b\", \"caption\": \"two\"}\n");
  subset["metadata_file"] = {dir / "meta.jsonl", {}};
  d = buildDataset(resolveDatasetSettings(nullptr, {subset}, cmd));
  ASSERT_EQ(d.images.size(), 2u);
  EXPECT_EQ(d.images[1].caption, "two");

  // Bad metadata: each error names the file and the key or line.
  auto errorWith = [&](const std::string& name, const std::string& text) {
    writeText(dir / name, text);
    ParamLayer bad = subset;
    bad["metadata_file"] = {dir / name, {}};
    try {
      buildDataset(resolveDatasetSettings(nullptr, {bad}, cmd));
    } catch (const DatasetError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(errorWith("missing.json", "{\"zzz\": {\"caption\": \"x\"}}").find("missing.json: \"zzz\": no image"), std::string::npos);
  EXPECT_NE(errorWith("list.json", "[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(errorWith("broken.json", "{\"a\": ").find("broken.json: not valid JSON"), std::string::npos);
  EXPECT_NE(errorWith("tags.json", "{\"a\": {\"tags\": 3}}").find("\"tags\" must be a string"), std::string::npos);
  EXPECT_NE(errorWith("bad.jsonl", "{\"caption\": \"no path\"}\n").find("bad.jsonl:1: \"image_path\""), std::string::npos);
  EXPECT_NE(errorWith("empty.jsonl", "").find("nothing to train on"), std::string::npos);
}

TEST(Dataset, FineTuningAndFolderSubsetsDoNotMix) {
  TempDir dir;
  fs::create_directories(dir.path / "img");
  writeImage(dir / "img/a.png", 64, 64);
  writeText(dir / "meta.json", "{\"a\": {\"caption\": \"a cat\"}}");
  const ParamLayer cmd = layer({{"resolution", std::string("64")}});
  const ParamLayer fineTuning = layer({{"image_dir", dir / "img"}, {"metadata_file", dir / "meta.json"}});
  const ParamLayer folder = layer({{"image_dir", dir / "img"}});
  EXPECT_THROW(resolveDatasetSettings(nullptr, {fineTuning, folder}, cmd), DatasetError);
  ParamLayer reg = fineTuning;
  reg["is_reg"] = {true, {}};
  EXPECT_THROW(resolveDatasetSettings(nullptr, {reg}, cmd), DatasetError);
}

// The check as a run makes it at its start (no decoding): a fine-tuning subset's empty caption,
// images below the resolution without buckets, and content hashed only where a size is shared.
TEST(DatasetCheck, FindingsOfAFineTuningSubsetWithoutBuckets) {
  TempDir dir;
  fs::create_directories(dir.path / "img");
  writeImage(dir / "img/a.png", 64, 64);
  writeImage(dir / "img/b.png", 48, 64);
  fs::copy_file(dir / "img/a.png", dir / "img/c.png");
  writeText(dir / "meta.json", "{\"a\": {\"caption\": \"a cat\"}, \"b\": {\"caption\": \" \"}, \"c\": {\"caption\": \"a cat\"}}");
  const ParamLayer cmd = layer({{"resolution", std::string("64")}});
  const ParamLayer subset = layer({{"image_dir", dir / "img"}, {"metadata_file", dir / "meta.json"}, {"num_repeats", 3LL}});
  const Dataset d = buildDataset(resolveDatasetSettings(nullptr, {subset}, cmd));
  DatasetCheckOptions options;
  const DatasetCheckResult result = checkDataset(d, {"a warning of the reading"}, options);
  const events::DatasetCheck& r = result.report;
  EXPECT_EQ(r.images, 3);
  EXPECT_TRUE(r.missing_captions.empty());
  ASSERT_EQ(r.empty_captions.size(), 1u);
  EXPECT_EQ(r.empty_captions[0].path, dir / "img/b.png");
  EXPECT_EQ(r.empty_captions[0].reason, "its caption in metadata_file " + (dir / "meta.json") + " is empty");
  ASSERT_EQ(r.too_small.size(), 1u);
  EXPECT_EQ(r.too_small[0].path, dir / "img/b.png");
  EXPECT_NE(r.too_small[0].reason.find("48x64 is smaller than the resolution 64x64"), std::string::npos) << r.too_small[0].reason;
  ASSERT_EQ(r.duplicates.size(), 1u);
  EXPECT_EQ(r.duplicates[0], (std::vector<std::string>{dir / "img/a.png", dir / "img/c.png"}));
  EXPECT_EQ(result.filesHashed, 2);  // b.png's size is its own: never read
  EXPECT_EQ(r.warnings, std::vector<std::string>{"a warning of the reading"});
  ASSERT_EQ(r.folders.size(), 1u);
  EXPECT_EQ(r.folders[0].path, dir / "meta.json");
  EXPECT_EQ(r.folders[0].with_repeats, 9);
  ASSERT_EQ(r.buckets.size(), 1u);
  EXPECT_EQ(r.buckets[0].width, 64);
  EXPECT_EQ(r.buckets[0].with_repeats, 9);
  // Each kind of new finding is one warning line, naming its files.
  ASSERT_EQ(result.warnings.size(), 3u);
  EXPECT_NE(result.warnings[0].find("images with an empty caption (1): " + (dir / "img/b.png")), std::string::npos) << result.warnings[0];
  EXPECT_NE(result.warnings[1].find("images smaller than the smallest bucket (1)"), std::string::npos) << result.warnings[1];
  EXPECT_NE(result.warnings[2].find((dir / "img/a.png") + " = " + (dir / "img/c.png")), std::string::npos) << result.warnings[2];

  options.compareContents = false;
  const DatasetCheckResult unhashed = checkDataset(d, {}, options);
  EXPECT_TRUE(unhashed.report.duplicates.empty());
  EXPECT_EQ(unhashed.filesHashed, 0);
  EXPECT_FALSE(unhashed.report.contents_compared);
}
