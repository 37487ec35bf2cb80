// validation_split: how many images each subset holds out (sd-scripts' ceil(n * (1 - split)) train),
// which ones (fixed by the seed), per dataset and never regularisation images; the dataset_config
// key and its errors; and the training and validation batch plans over the split.
#include <gtest/gtest.h>

#include <set>

#include "core/config.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "data/dataset_config.h"
#include "data/validation_split.h"
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

void writeImages(const TempDir& dir, const std::string& folder, int count) {
  fs::create_directories(dir.path / folder);
  for (int i = 0; i < count; ++i) writeImage(dir / (folder + "/img" + std::to_string(10 + i) + ".png"), 64, 64);
}

Dataset fromToml(const TempDir& dir, const std::string& toml, std::uint64_t seed) {
  const DatasetConfigFile file = parseDatasetConfigToml(toml, dir / "ds.toml");
  DiscoveryOptions options;
  options.validationSeed = seed;
  return buildDataset(resolveDatasetSettings(&file, {}, layer({{"resolution", std::string("64")}})), options);
}

std::set<std::string> heldOut(const Dataset& d) {
  std::set<std::string> out;
  for (const ImageEntry& e : d.images)
    if (e.validation) out.insert(e.path);
  return out;
}

std::string errorOf(const TempDir& dir, const std::string& toml) {
  try {
    fromToml(dir, toml, 0);
  } catch (const ConfigError& e) {
    return formatAll(e.diagnostics());
  }
  return "";
}

}  // namespace

TEST(ValidationSplit, TrainingShareIsSdScriptsCeiling) {
  EXPECT_EQ(trainingShare(10, 0.25), 8u);  // ceil(7.5)
  EXPECT_EQ(trainingShare(10, 0.2), 8u);
  EXPECT_EQ(trainingShare(12, 0.25), 9u);
  EXPECT_EQ(trainingShare(3, 0.5), 2u);    // ceil(1.5)
  EXPECT_EQ(trainingShare(1, 0.9), 1u);    // a subset always keeps one training image
  EXPECT_EQ(trainingShare(7, 0.0), 7u);
}

TEST(ValidationSplit, CountsPerSubsetAndDatasetNeverRegImages) {
  TempDir dir;
  writeImages(dir, "a", 10);
  writeImages(dir, "b", 4);
  writeImages(dir, "reg", 4);
  writeImages(dir, "c", 5);
  // Dataset 1 splits a quarter of each image subset; dataset 2 splits nothing.
  const std::string toml = "[[datasets]]\nvalidation_split = 0.25\n"
                           "[[datasets.subsets]]\nimage_dir = '" + dir / "a" + "'\nnum_repeats = 2\n"
                           "[[datasets.subsets]]\nimage_dir = '" + dir / "b" + "'\n"
                           "[[datasets.subsets]]\nimage_dir = '" + dir / "reg" + "'\nis_reg = true\n"
                           "[[datasets]]\n"
                           "[[datasets.subsets]]\nimage_dir = '" + dir / "c" + "'\n";
  const Dataset d = fromToml(dir, toml, 5);
  std::map<std::string, int> held;
  for (const ImageEntry& e : d.images)
    if (e.validation) ++held[fs::path(e.path).parent_path().filename().string()];
  EXPECT_EQ(held["a"], 2);    // 10 - ceil(7.5)
  EXPECT_EQ(held["b"], 1);    // 4 - ceil(3.0)
  EXPECT_EQ(held["reg"], 0);  // regularisation images are never held out
  EXPECT_EQ(held["c"], 0);    // dataset 2 sets no split
  EXPECT_EQ(d.numTrainImages, 8 * 2 + 3 + 5);
  EXPECT_EQ(d.numValidationImages, 2 * 2 + 1);
  // Regularisation images balance against the training images that remain (19 in dataset 1).
  int regRepeats = 0;
  for (const ImageEntry& e : d.images)
    if (e.isReg) regRepeats += e.repeats;
  EXPECT_EQ(regRepeats, 19);
}

TEST(ValidationSplit, TheSeedFixesWhichImagesAreHeldOut) {
  TempDir dir;
  writeImages(dir, "a", 20);
  const std::string toml = "[[datasets]]\nvalidation_split = 0.3\n[[datasets.subsets]]\nimage_dir = '" + dir / "a" + "'\n";
  const std::set<std::string> first = heldOut(fromToml(dir, toml, 11));
  EXPECT_EQ(first.size(), 6u);
  EXPECT_EQ(heldOut(fromToml(dir, toml, 11)), first);  // the same seed: the same images
  // Other seeds hold out other images (20 choose 6 ways: not all of nine seeds agree).
  std::set<std::set<std::string>> seen{first};
  for (std::uint64_t seed = 12; seed < 20; ++seed) seen.insert(heldOut(fromToml(dir, toml, seed)));
  EXPECT_GT(seen.size(), 1u);
  // A dataset's own validation_seed wins over the run's seed.
  const std::string seeded = "[[datasets]]\nvalidation_split = 0.3\nvalidation_seed = 11\n[[datasets.subsets]]\nimage_dir = '" +
                             dir / "a" + "'\n";
  for (std::uint64_t seed : {1, 2, 3}) EXPECT_EQ(heldOut(fromToml(dir, seeded, seed)), first);
  // Marking again with another seed changes which, never how many.
  Dataset d = fromToml(dir, toml, 11);
  markValidationImages(d, 12);
  EXPECT_EQ(heldOut(d).size(), 6u);
  EXPECT_EQ(heldOut(d), heldOut(fromToml(dir, toml, 12)));
}

TEST(ValidationSplit, ValuesOutsideZeroToOneAreRefusedWithTheKey) {
  TempDir dir;
  writeImages(dir, "a", 2);
  const std::string subset = "[[datasets.subsets]]\nimage_dir = '" + dir / "a" + "'\n";
  for (const char* value : {"1.0", "1.5", "-0.1"}) {
    const std::string e = errorOf(dir, std::string("[[datasets]]\nvalidation_split = ") + value + "\n" + subset);
    EXPECT_NE(e.find("validation_split"), std::string::npos) << value << ": " << e;
    EXPECT_NE(e.find("below 1"), std::string::npos) << value << ": " << e;
  }
  EXPECT_NE(errorOf(dir, "[[datasets]]\nvalidation_seed = -3\n" + subset).find("validation_seed"), std::string::npos);
  EXPECT_EQ(errorOf(dir, "[[datasets]]\nvalidation_split = 0.5\n" + subset), "");
  // validation_split is a dataset-level key, as in sd-scripts' schema.
  try {
    parseDatasetConfigToml("[[datasets]]\n[[datasets.subsets]]\nimage_dir = 'x'\nvalidation_split = 0.5\n", "ds.toml");
    FAIL() << "validation_split in a subset was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(formatAll(e.diagnostics()).find("validation_split"), std::string::npos);
  }
}

TEST(ValidationSplit, TrainingPlanSkipsHeldOutImagesValidationPlanIsFixed) {
  TempDir dir;
  writeImages(dir, "a", 8);
  const std::string toml = "[[datasets]]\nvalidation_split = 0.25\nbatch_size = 1\n[[datasets.subsets]]\nimage_dir = '" + dir / "a" +
                           "'\nnum_repeats = 3\n";
  const Dataset d = fromToml(dir, toml, 4);
  const BatchPlan training(d, 9);
  EXPECT_EQ(training.batchesPerEpoch(), 6 * 3);
  for (long long epoch : {0, 1})
    for (const PlannedBatch& b : training.epochBatches(epoch))
      for (size_t i : b.imageIndices) EXPECT_FALSE(d.images[i].validation);
  const BatchPlan validation(d, 9, {}, PlanImages::Validation);
  EXPECT_EQ(validation.batchesPerEpoch(), 2 * 3);  // the held-out images with their repeats
  const std::vector<PlannedBatch> first = validation.epochBatches(0);
  for (const PlannedBatch& b : first)
    for (size_t i : b.imageIndices) EXPECT_TRUE(d.images[i].validation);
  // Every pass sees the same batches in the same order.
  const std::vector<PlannedBatch> later = validation.epochBatches(5);
  ASSERT_EQ(later.size(), first.size());
  for (size_t k = 0; k < first.size(); ++k) EXPECT_EQ(later[k].imageIndices, first[k].imageIndices);
}
