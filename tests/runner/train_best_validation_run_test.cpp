// save_best_k and early_stop_patience end to end through the real sinter-runner on the tiny SDXL
// checkpoint, on the CPU. Every expectation is computed from the run's own `validation` events
// (never from hard-coded losses): the files kept are those of the k lowest logged losses, the run
// ends at the pass the logged losses imply, and both keys are refused without validation_split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/events.h"
#include "io/safetensors.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::test::doneStatus;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// The tiny SDXL LoRA on the generated shapes (12 images, one repeat, batch size 1); `extra` appended.
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\npretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\ntrain_data_dir = \"" + path("images") + "\"\n"
                           "output_dir = \"" + outputDir + "\"\noutput_name = \"t\"\nresolution = \"128,128\"\n"
                           "enable_bucket = true\nmin_bucket_reso = 64\nmax_bucket_reso = 256\nbucket_reso_steps = 32\n"
                           "caption_extension = \".txt\"\nmax_data_loader_n_workers = 0\nnetwork_dim = 4\nnetwork_alpha = 4.0\n"
                           "learning_rate = 0.01\nseed = 7\n" + extra;
  writeText(path(name), text);
  return path(name);
}

// The passes that count: the first at each step (an epoch's pass at a step that had a step pass
// sees the same weights and is not one of its own).
std::vector<sinter::events::Validation> distinctPasses(const ProcessResult& r) {
  std::vector<sinter::events::Validation> out;
  for (const auto& v : eventsOfType<sinter::events::Validation>(r))
    if (out.empty() || out.back().step != v.step) out.push_back(v);
  return out;
}

std::string bestName(long long step, double loss) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "t-best-step%08lld-loss%.6f.safetensors", step, loss);
  return buf;
}

std::set<std::string> bestFilesIn(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("t-best-", 0) == 0) out.insert(e.path().filename().string());
  return out;
}

// The step early_stop_patience ends the run at, by the rule applied to the logged losses (the last
// step when it never runs out).
long long impliedStopStep(const std::vector<sinter::events::Validation>& passes, long long patience, double minDelta,
                          long long lastStep) {
  std::optional<double> best;
  long long since = 0;
  for (const auto& v : passes) {
    if (!best || v.loss < *best - minDelta) {
      best = v.loss, since = 0;
    } else if (++since >= patience) {
      return v.step;
    }
  }
  return lastStep;
}

class BestValidationRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_best_validation_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(BestValidationRun, KeepsTheFilesOfTheKLowestLoggedLossesAndStopsWhereTheyImply) {
  const long long patience = 3;
  const std::string cfg = writeConfig("best.toml", path("out_best"),
                                      "max_train_steps = 10\nvalidation_split = 0.25\nvalidate_every_n_steps = 1\nmax_validation_steps = 1\n"
                                      "save_best_k = 2\nearly_stop_patience = 3\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const auto passes = distinctPasses(r);
  ASSERT_GE(passes.size(), 2u) << r.err;

  // The run ends where the logged losses say; the done event says why when that is early.
  const auto done = eventsOfType<sinter::events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  const long long stop = impliedStopStep(passes, patience, 0.0, 10);
  EXPECT_EQ(done[0].steps, stop) << r.err;
  EXPECT_EQ(passes.back().step, stop);
  EXPECT_EQ(done[0].reason, stop < 10 ? "early_stop" : "");

  // The two lowest logged losses (the earlier step among equal ones) are the files that stay.
  auto ranked = passes;
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.loss < b.loss; });
  const std::set<std::string> expected{bestName(ranked[0].step, ranked[0].loss), bestName(ranked[1].step, ranked[1].loss)};
  EXPECT_EQ(bestFilesIn(path("out_best")), expected) << r.err;

  // Each best file's saved event: its step and loss are a logged pass's, and the last one lists the two kept.
  std::map<long long, double> lossAt;
  for (const auto& v : passes) lossAt[v.step] = v.loss;
  std::vector<sinter::events::Saved> bestSaves;
  for (const auto& s : eventsOfType<sinter::events::Saved>(r))
    if (s.kind == "best") bestSaves.push_back(s);
  ASSERT_GE(bestSaves.size(), 2u);
  for (const auto& s : bestSaves) {
    EXPECT_EQ(fs::path(s.path).filename().string(), bestName(s.step, lossAt.at(s.step)));
    EXPECT_EQ(s.loss, lossAt.at(s.step));
    EXPECT_LE(s.best.size(), 2u);
    EXPECT_NE(std::find(s.best.begin(), s.best.end(), s.path), s.best.end());
    // A file that was once best and is no longer is gone; the others, and only they, are on disk.
    EXPECT_EQ(fs::exists(s.path), expected.count(fs::path(s.path).filename().string()) == 1) << s.path;
  }
  std::set<std::string> lastKept;
  for (const auto& p : bestSaves.back().best) lastKept.insert(fs::path(p).filename().string());
  EXPECT_EQ(lastKept, expected);
  // Written as the other saves, with the validation loss in the metadata (as the event's number, printed %.9g).
  for (const auto& p : bestSaves.back().best) {
    const sinter::io::SafetensorsFile f(p);
    const long long step = std::stoll(fs::path(p).filename().string().substr(11, 8));
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", lossAt.at(step));
    EXPECT_EQ(f.metadata().at("ss_validation_loss"), text);
    EXPECT_EQ(f.metadata().at("ss_steps"), std::to_string(step));
  }
  // The final save as a completed run's; no other file was deleted.
  EXPECT_TRUE(fs::exists(path("out_best/t.safetensors")));
}

TEST_F(BestValidationRun, EarlyStopEndsAsACompletedRunAndSaysWhy) {
  // A min_delta no loss can beat: no pass after the first is a new best, so the second pass after
  // it (patience 2) ends the run: passes at steps 2, 4 and 6 of 20.
  const std::string cfg = writeConfig("stop.toml", path("out_stop"),
                                      "max_train_steps = 20\nvalidation_split = 0.25\nvalidate_every_n_steps = 2\nmax_validation_steps = 1\n"
                                      "early_stop_patience = 2\nearly_stop_min_delta = 1000000\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto passes = distinctPasses(r);
  const long long stop = impliedStopStep(passes, 2, 1e6, 20);
  EXPECT_EQ(stop, 6);
  const auto done = eventsOfType<sinter::events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "completed");
  EXPECT_EQ(done[0].steps, stop);
  EXPECT_EQ(done[0].reason, "early_stop");
  EXPECT_NE(done[0].message.find("early_stop_patience"), std::string::npos) << done[0].message;
  EXPECT_EQ(sinter::test::losses(r).size(), static_cast<size_t>(stop));
  EXPECT_NE(r.err.find("early stop at step " + std::to_string(stop)), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(path("out_stop/t.safetensors")));  // the final save, as at a run's end
  EXPECT_TRUE(bestFilesIn(path("out_stop")).empty());        // save_best_k is off
}

TEST_F(BestValidationRun, RefusedWithoutValidation) {
  for (const std::string key : {"save_best_k", "early_stop_patience"}) {
    const std::string out = path("out_refused_" + key);
    const std::string cfg = writeConfig("refused.toml", out, "max_train_steps = 2\n" + key + " = 2\n");
    sinter::test::expectRefusedBeforeLoading(key, {"--config_file", cfg}, key + " needs a validation loss", out);
  }
}
