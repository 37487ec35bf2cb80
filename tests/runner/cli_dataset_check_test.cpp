// `sinter-runner --check_dataset` (issue 57), run as a process on a small dataset folder written
// here: each kind of finding names its file, the bucket histogram and each folder's repeats are
// the run's own, a caption file a run refuses makes the check say so (exit 2) after reporting
// everything, and a bad config is the usual exit 2 with nothing checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/events.h"
#include "data_test_images.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::data::testing::writeImage;
using sinter::events::DatasetCheck;
using sinter::events::DatasetFile;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::readText;
using sinter::test::runRunner;
using sinter::test::TempDir;
using sinter::test::writeText;

namespace {

// The finding about `path` in `files`, or nullptr.
const DatasetFile* findingFor(const std::vector<DatasetFile>& files, const std::string& path) {
  const auto it = std::find_if(files.begin(), files.end(), [&](const DatasetFile& f) { return f.path == path; });
  return it == files.end() ? nullptr : &*it;
}

// A PNG of its own content: the test pattern with `mark` in its first pixel (writeImage writes the
// same pattern for every image of one size).
void writePng(const std::string& path, int width, int height, std::uint8_t mark) {
  std::vector<std::uint8_t> pixels = sinter::data::testing::makePixels(width, height);
  pixels[0] = mark;
  ASSERT_TRUE(stbi_write_png(path.c_str(), width, height, 3, pixels.data(), width * 3)) << path;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Folder mode, as a LoRA run reads it; buckets of 64 px steps between 64 and 256 around 128x128.
std::string writeConfig(const TempDir& dir, const std::string& extra = "") {
  const std::string path = dir / "check.toml";
  writeText(path, "train_data_dir = \"" + (dir / "data") + "\"\n"
                  "caption_extension = \".txt\"\n"
                  "resolution = \"128,128\"\n"
                  "enable_bucket = true\n"
                  "min_bucket_reso = 64\n"
                  "max_bucket_reso = 256\n"
                  "bucket_reso_steps = 64\n"
                  "max_data_loader_n_workers = 2\n" + extra);
  return path;
}

// The one dataset_check event of a check, and the check's exit code.
DatasetCheck reportOf(const ProcessResult& r) {
  const auto reports = eventsOfType<DatasetCheck>(r);
  EXPECT_EQ(reports.size(), 1u) << r.out << r.err;
  return reports.empty() ? DatasetCheck{} : reports.front();
}

}  // namespace

TEST(DatasetCheck, NamesEachFindingAndCountsBucketsAndRepeats) {
  TempDir dir;
  const std::string dog = dir / "data/10_dog", cat = dir / "data/2_cat";
  fs::create_directories(dog);
  fs::create_directories(cat);
  writePng(dog + "/captioned.png", 128, 128, 1);
  writeText(dog + "/captioned.txt", "a dog");
  writePng(dog + "/uncaptioned.png", 128, 128, 2);
  writeImage(dog + "/blank.png", 192, 64);
  writeText(dog + "/blank.txt", "  \n\n");  // lines, all blank: it trains with an empty caption
  writeImage(dog + "/twin_a.png", 64, 192);
  writeText(dog + "/twin_a.txt", "a dog");
  fs::copy_file(dog + "/twin_a.png", dog + "/twin_b.png");
  writeText(dog + "/twin_b.txt", "a dog");
  writeImage(dog + "/tiny.png", 16, 16);
  writeText(dog + "/tiny.txt", "a dog");
  writeText(dog + "/corrupt.png", "this is not an image");
  // A WebP cut in half: its header reads (so a run takes it), its pixels do not decode.
  writeImage(dir / "whole.webp", 128, 128);
  const std::string webp = readText(dir / "whole.webp");
  writeText(dog + "/cut.webp", webp.substr(0, webp.size() / 2));
  writeText(dog + "/cut.txt", "a dog");
  writePng(dog + "/foldered.png", 128, 128, 3);
  fs::create_directories(dog + "/foldered.txt");
  writeImage(cat + "/cat.png", 256, 64);
  writeText(cat + "/cat.txt", "a cat");

  const ProcessResult r = runRunner({"--config_file", writeConfig(dir), "--check_dataset", "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const DatasetCheck report = reportOf(r);
  EXPECT_TRUE(report.contents_compared);
  EXPECT_TRUE(report.pixels_decoded);
  EXPECT_TRUE(report.refusals.empty()) << ::testing::PrintToString(report.refusals);
  EXPECT_EQ(report.images, 9);  // all but corrupt.png

  ASSERT_EQ(report.missing_captions.size(), 2u);
  ASSERT_TRUE(findingFor(report.missing_captions, dog + "/uncaptioned.png"));
  EXPECT_TRUE(contains(findingFor(report.missing_captions, dog + "/uncaptioned.png")->reason, "no .txt caption file"));
  ASSERT_TRUE(findingFor(report.missing_captions, dog + "/foldered.png"));
  EXPECT_TRUE(contains(findingFor(report.missing_captions, dog + "/foldered.png")->reason, dog + "/foldered.txt is a folder"));

  ASSERT_EQ(report.empty_captions.size(), 1u);
  EXPECT_EQ(report.empty_captions[0].path, dog + "/blank.png");
  EXPECT_TRUE(contains(report.empty_captions[0].reason, "blank lines"));

  ASSERT_EQ(report.duplicates.size(), 1u);
  EXPECT_EQ(report.duplicates[0], (std::vector<std::string>{dog + "/twin_a.png", dog + "/twin_b.png"}));

  ASSERT_EQ(report.too_small.size(), 1u);
  EXPECT_EQ(report.too_small[0].path, dog + "/tiny.png");
  EXPECT_TRUE(contains(report.too_small[0].reason, "16x16 is smaller than the smallest bucket side, min_bucket_reso 64"))
      << report.too_small[0].reason;

  ASSERT_EQ(report.unreadable.size(), 2u);
  ASSERT_TRUE(findingFor(report.unreadable, dog + "/corrupt.png"));
  EXPECT_TRUE(contains(findingFor(report.unreadable, dog + "/corrupt.png")->reason, "not a PNG, JPEG, WebP or BMP image"));
  ASSERT_TRUE(findingFor(report.unreadable, dog + "/cut.webp"));
  EXPECT_TRUE(contains(findingFor(report.unreadable, dog + "/cut.webp")->reason, "pixels do not decode"));

  // Each folder: its images x num_repeats; the reading's buckets (sd-scripts' for these sizes).
  ASSERT_EQ(report.folders.size(), 2u);
  EXPECT_EQ(report.folders[0].path, dog);  // folders in name order
  EXPECT_EQ(report.folders[0].images, 8);
  EXPECT_EQ(report.folders[0].repeats, 10);
  EXPECT_EQ(report.folders[0].with_repeats, 80);
  EXPECT_EQ(report.folders[1].path, cat);
  EXPECT_EQ(report.folders[1].images, 1);
  EXPECT_EQ(report.folders[1].repeats, 2);
  EXPECT_EQ(report.folders[1].with_repeats, 2);
  std::map<std::string, std::pair<long long, long long>> buckets;
  for (const auto& b : report.buckets) buckets[std::to_string(b.width) + "x" + std::to_string(b.height)] = {b.images, b.with_repeats};
  // sd-scripts' buckets for 128x128 in steps of 64 from 64 to 256 are 64x192, 64x256, 128x128, 192x64
  // and 256x64: the square images (tiny.png enlarged) in 128x128, each other at its own aspect ratio.
  const std::map<std::string, std::pair<long long, long long>> expected = {
      {"128x128", {5, 50}}, {"192x64", {1, 10}}, {"64x192", {2, 20}}, {"256x64", {1, 2}}};
  EXPECT_EQ(buckets, expected) << r.out;

  // The findings the reading did not already say are warnings, in the log and as events.
  std::string warnings;
  for (const auto& w : eventsOfType<sinter::events::Warning>(r)) warnings += w.message + "\n";
  for (const std::string& named : {dog + "/blank.png", dog + "/twin_a.png = " + dog + "/twin_b.png", dog + "/tiny.png",
                                   dog + "/cut.webp", dog + "/corrupt.png", dog + "/foldered.png"}) {
    EXPECT_TRUE(contains(warnings, named)) << named << " in\n" << warnings;
    EXPECT_TRUE(contains(r.err, named)) << named << " in\n" << r.err;
  }
  EXPECT_TRUE(contains(warnings, "its caption path " + dog + "/foldered.txt is a folder, not a file")) << warnings;
  EXPECT_TRUE(contains(warnings, "1 image(s) in " + dog + " have no .txt caption file")) << warnings;
}

// Without --events the report is printed for a person, every finding with its file.
TEST(DatasetCheck, PrintsTheReport) {
  TempDir dir;
  const std::string dog = dir / "data/3_dog";
  fs::create_directories(dog);
  writeImage(dog + "/a.png", 128, 128);
  writeImage(dog + "/b.png", 128, 128);
  writeText(dog + "/b.txt", "a dog");
  const ProcessResult r = runRunner({"--config_file", writeConfig(dir), "--check_dataset"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const std::string& line : {std::string("dataset check: 2 image file(s) in use"), "  " + dog + ": 2 x 3 = 6", std::string("  128x128: 2, 6"),
                                  std::string("images without a caption file (1):"), "  " + dog + "/a.png: no .txt caption file",
                                  std::string("image files with the same content (1 group(s)):"), dog + "/a.png = " + dog + "/b.png"})
    EXPECT_TRUE(contains(r.out, line)) << line << " in\n" << r.out;
}

// A caption file with no lines at all is refused by a run (sd-scripts asserts): the check still
// reports everything, and says why a run would refuse it, exiting 2.
TEST(DatasetCheck, ACaptionFileARunRefusesIsReportedWithTheRest) {
  TempDir dir;
  const std::string dog = dir / "data/1_dog";
  fs::create_directories(dog);
  writeImage(dog + "/a.png", 128, 128);
  writeText(dog + "/a.txt", "");
  writeImage(dog + "/b.png", 128, 128);
  writeText(dog + "/b.txt", "caf\xE9");
  writeImage(dog + "/c.png", 16, 16);
  writeText(dog + "/c.txt", "a dog");
  const ProcessResult r = runRunner({"--config_file", writeConfig(dir), "--check_dataset", "--events", "jsonl"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  const DatasetCheck report = reportOf(r);
  ASSERT_EQ(report.refusals.size(), 2u);
  EXPECT_TRUE(contains(report.refusals[0], "caption file is empty: " + dog + "/a.txt")) << report.refusals[0];
  EXPECT_TRUE(contains(report.refusals[1], "caption file is not UTF-8")) << report.refusals[1];
  ASSERT_EQ(report.empty_captions.size(), 1u);
  EXPECT_EQ(report.empty_captions[0].path, dog + "/a.png");
  ASSERT_EQ(report.unreadable.size(), 1u);
  EXPECT_EQ(report.unreadable[0].path, dog + "/b.txt");
  ASSERT_EQ(report.too_small.size(), 1u);
  EXPECT_TRUE(contains(r.err, "caption file is empty: " + dog + "/a.txt")) << r.err;

  // A run names both files in one refusal (it named the first before).
  const ProcessResult dry = runRunner({"--config_file", writeConfig(dir, "pretrained_model_name_or_path = \"" + (dir / "none.safetensors") +
                                                                            "\"\noutput_dir = \"" + (dir / "out") + "\"\n"),
                                       "--dry_run"});
  EXPECT_EQ(dry.exitCode, 2);
  EXPECT_TRUE(contains(dry.err, "2 caption files cannot be used")) << dry.err;
  EXPECT_TRUE(contains(dry.err, dog + "/a.txt") && contains(dry.err, dog + "/b.txt")) << dry.err;
}

// A config the check cannot read: exit 2 naming the problem, and no report.
TEST(DatasetCheck, ABadConfigIsRefusedWithoutAReport) {
  TempDir dir;
  const ProcessResult missing = runRunner({"--config_file", writeConfig(dir), "--check_dataset", "--events", "jsonl"});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_TRUE(contains(missing.err, dir / "data")) << missing.err;
  EXPECT_TRUE(eventsOfType<DatasetCheck>(missing).empty());
  EXPECT_EQ(sinter::test::doneStatus(missing), "failed");

  writeText(dir / "empty.toml", "resolution = \"128\"\n");
  const ProcessResult noData = runRunner({"--config_file", dir / "empty.toml", "--check_dataset"});
  EXPECT_EQ(noData.exitCode, 2);
  EXPECT_TRUE(contains(noData.err, "set train_data_dir or dataset_config")) << noData.err;
}
