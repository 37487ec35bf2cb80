// The TensorBoard log of real sinter-runner runs on the tiny SDXL checkpoint, read back with the
// tests' own event-file reader (tfevents_reader.h): sd-scripts' folder layout and tags at the same
// steps as the step and epoch events, log_config, log_tracker_config, D-Adaptation's d*lr, and the
// logging options this build refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "core/events.h"
#include "runner_process.h"
#include "tfevents_reader.h"

namespace fs = std::filesystem;
using sinter::test::writeText;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::readEventFile;
using sinter::test::runRunner;
using sinter::test::scalarsByStep;
using sinter::test::TfEvent;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// Two images at one repeat: an epoch is two steps at batch size 1.
std::string writeConfig(const std::string& name, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + path("two") + "\"\n"
                           "output_dir = \"" + path("out_" + name) + "\"\n"
                           "output_name = \"t\"\n"
                           "resolution = \"128,128\"\n"
                           "caption_extension = \".txt\"\n"
                           "max_data_loader_n_workers = 0\n"
                           "network_dim = 4\n"
                           "network_alpha = 4.0\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name + ".toml");
  writeText(p, text);
  return p;
}

// The one event file under `logs`, at <logs>/<prefix><YYYYmmddHHMMSS>/<tracker>/.
std::string onlyEventFile(const std::string& logs, const std::string& prefix, const std::string& tracker) {
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(logs)) runs.push_back(e.path());
  EXPECT_EQ(runs.size(), 1u) << logs;
  if (runs.size() != 1) return "";
  EXPECT_TRUE(std::regex_match(runs[0].filename().string(), std::regex(prefix + R"(\d{14})"))) << runs[0];
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(runs[0] / tracker))
    if (e.is_regular_file()) files.push_back(e.path());
  EXPECT_EQ(files.size(), 1u);
  if (files.size() != 1) return "";
  EXPECT_EQ(files[0].filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];
  return files[0].string();
}

std::vector<std::int64_t> stepsOf(const std::map<std::int64_t, float>& m) {
  std::vector<std::int64_t> v;
  for (const auto& [step, value] : m) v.push_back(step);
  return v;
}

class TensorboardLogRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_tensorboard_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    fs::create_directories(path("two/1_x"));
    for (const char* name : {"shape_000", "shape_001"}) {
      fs::copy_file(path(std::string("images/10_demo shapes/") + name + ".png"), path(std::string("two/1_x/") + name + ".png"),
                    fs::copy_options::overwrite_existing);
      writeText(path(std::string("two/1_x/") + name + ".txt"), "a shape");
    }
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

// logging_dir alone means TensorBoard (sd-scripts' prepare_accelerator): train_network.py's tags,
// loss/current and loss/average at every step as the step events report them, lr/<group> after the
// scheduler's step, loss/epoch_average at step = epoch; log_config writes the config without paths.
TEST_F(TensorboardLogRun, LoraRunLogsSdScriptsTagsAtEveryStep) {
  const std::string cfg = writeConfig("lora", "max_train_steps = 6\nlearning_rate = 0.01\nlr_scheduler = \"linear\"\n"
                                              "logging_dir = \"" + path("logs_lora") + "\"\nlog_prefix = \"pre-\"\nlog_config = true\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string file = onlyEventFile(path("logs_lora"), "pre-", "network_train");
  ASSERT_FALSE(file.empty());
  const std::vector<TfEvent> events = readEventFile(file);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].fileVersion, "brain.Event:2");

  const auto steps = eventsOfType<sinter::events::Step>(r);
  ASSERT_EQ(steps.size(), 6u);
  const auto current = scalarsByStep(events, "loss/current"), average = scalarsByStep(events, "loss/average");
  EXPECT_EQ(stepsOf(current), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  for (const auto& s : steps) {
    EXPECT_FLOAT_EQ(current.at(s.step), static_cast<float>(s.loss)) << s.step;
    EXPECT_FLOAT_EQ(average.at(s.step), static_cast<float>(s.avg_loss)) << s.step;
    // linear, no warm-up: lr_scheduler.get_last_lr() after step s is lr * (6 - s) / 6.
    for (const char* group : {"lr/unet", "lr/textencoder"})
      EXPECT_NEAR(scalarsByStep(events, group).at(s.step), 0.01 * (6 - s.step) / 6, 1e-8) << group << " " << s.step;
  }
  const auto epochs = eventsOfType<sinter::events::Epoch>(r);
  const auto epochAverage = scalarsByStep(events, "loss/epoch_average");
  ASSERT_EQ(epochs.size(), 3u);
  EXPECT_EQ(stepsOf(epochAverage), (std::vector<std::int64_t>{1, 2, 3}));
  for (const auto& e : epochs) EXPECT_FLOAT_EQ(epochAverage.at(e.epoch), static_cast<float>(e.avg_loss)) << e.epoch;
  EXPECT_TRUE(scalarsByStep(events, "loss").empty());  // full weights' tag

  std::string config;
  for (const TfEvent& e : events)
    for (const auto& v : e.values)
      if (v.tag == "config/text_summary" && !v.strings.empty()) config = v.strings[0];
  EXPECT_NE(config.find("| network_dim | 4 |"), std::string::npos) << config;
  EXPECT_NE(config.find("| lr_scheduler | linear |"), std::string::npos) << config;
  EXPECT_EQ(config.find("pretrained_model_name_or_path"), std::string::npos) << config;
  EXPECT_EQ(config.find(g_root.string()), std::string::npos) << config;  // no path of output_dir, train_data_dir...

  // And as hyperparameters, in a folder named by the time beside the event file (add_hparams).
  std::vector<fs::path> hparamsFiles;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(file).parent_path()))
    if (e.is_regular_file() && e.path().parent_path() != fs::path(file).parent_path()) hparamsFiles.push_back(e.path());
  ASSERT_EQ(hparamsFiles.size(), 1u);
  EXPECT_TRUE(std::regex_match(hparamsFiles[0].parent_path().filename().string(), std::regex(R"(\d{10}\.\d{6})")))
      << hparamsFiles[0];
  std::vector<std::string> tags;
  for (const TfEvent& e : readEventFile(hparamsFiles[0].string()))
    for (const auto& v : e.values) {
      EXPECT_EQ(v.pluginName, "hparams");
      tags.push_back(v.tag);
      if (v.tag == "_hparams_/session_start_info") {
        EXPECT_NE(v.pluginContent.find("network_dim"), std::string::npos);
        EXPECT_EQ(v.pluginContent.find(g_root.string()), std::string::npos);
      }
    }
  EXPECT_EQ(tags, (std::vector<std::string>{"_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"}));
}

// Full weights (sdxl_train.py's tags: loss, lr/unet, loss/epoch) under the default tracker name
// "finetuning"; log_tracker_config's [tensorboard] table names and flushes the file.
TEST_F(TensorboardLogRun, FullWeightsRunLogsFineTuneTagsWithTheTrackerConfig) {
  writeText(path("tracker.toml"), "[tensorboard]\nfilename_suffix = \".sinter\"\nflush_secs = 0\nmax_queue = 1\n");
  const std::string cfg = writeConfig("db", "training_type = \"dreambooth\"\nmax_train_steps = 4\nlearning_rate = 0.001\n"
                                            "log_with = \"tensorboard\"\nlogging_dir = \"" + path("logs_db") + "\"\n"
                                            "log_tracker_config = \"" + path("tracker.toml") + "\"\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string file = onlyEventFile(path("logs_db"), "", "finetuning");
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(file.substr(file.size() - 7), ".sinter");
  const std::vector<TfEvent> events = readEventFile(file);
  const auto loss = scalarsByStep(events, "loss");
  EXPECT_EQ(stepsOf(loss), (std::vector<std::int64_t>{1, 2, 3, 4}));
  for (const auto& s : eventsOfType<sinter::events::Step>(r)) EXPECT_FLOAT_EQ(loss.at(s.step), static_cast<float>(s.loss));
  EXPECT_EQ(stepsOf(scalarsByStep(events, "lr/unet")), (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_FLOAT_EQ(scalarsByStep(events, "lr/unet").at(4), 0.001f);
  EXPECT_EQ(stepsOf(scalarsByStep(events, "loss/epoch")), (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(scalarsByStep(events, "loss/current").empty());
}

// Prodigy: lr/d*lr/<group> at every step, d times the group's lr; Prodigy's d never shrinks.
// log_tracker_name names the tracker's folder.
TEST_F(TensorboardLogRun, ProdigyLogsDTimesLr) {
  const std::string cfg = writeConfig("prodigy", "max_train_steps = 4\nlearning_rate = 1.0\noptimizer_type = \"Prodigy\"\n"
                                                 "network_train_unet_only = true\nlogging_dir = \"" + path("logs_prodigy") + "\"\n"
                                                 "log_tracker_name = \"mine\"\n");
  const ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string file = onlyEventFile(path("logs_prodigy"), "", "mine");
  ASSERT_FALSE(file.empty());
  const std::vector<TfEvent> events = readEventFile(file);
  const auto dlr = scalarsByStep(events, "lr/d*lr/unet");
  ASSERT_EQ(stepsOf(dlr), (std::vector<std::int64_t>{1, 2, 3, 4}));
  float previous = 0;
  for (const auto& [step, value] : dlr) {
    EXPECT_GT(value, 0.0f) << step;
    EXPECT_GE(value, previous) << step;
    previous = value;
  }
  EXPECT_FLOAT_EQ(scalarsByStep(events, "lr/unet").at(4), 1.0f);
  EXPECT_TRUE(scalarsByStep(events, "lr/textencoder").empty());
}

// What this build does not log to is refused before anything loads (the dry run says the same),
// naming the option; "all" logs to TensorBoard and says W&B is not there.
TEST_F(TensorboardLogRun, RefusedLoggingOptionsSayWhy) {
  writeText(path("bad_key.toml"), "[tensorboard]\nflush_sec = 10\n");
  writeText(path("bad_tracker.toml"), "[mlflow]\nexperiment = \"x\"\n");
  writeText(path("not_toml.toml"), "[tensorboard\n");
  struct Case {
    std::string name, extra, says;
  };
  const std::string logs = "logging_dir = \"" + path("logs_refused") + "\"\n";
  const std::vector<Case> cases{
      {"wandb", logs + "log_with = \"wandb\"\n", "no W&B client"},
      {"no_dir", "log_with = \"tensorboard\"\n", "needs logging_dir"},
      {"bad_key", logs + "log_tracker_config = \"" + path("bad_key.toml") + "\"\n", "[tensorboard] flush_sec is not a setting"},
      {"bad_tracker", logs + "log_tracker_config = \"" + path("bad_tracker.toml") + "\"\n", "'mlflow' is not a tracker"},
      {"not_toml", logs + "log_tracker_config = \"" + path("not_toml.toml") + "\"\n", "log_tracker_config '" + path("not_toml.toml") + "': "},
  };
  for (const Case& c : cases)
    for (const bool dryRun : {true, false}) {
      std::vector<std::string> args{"--config_file", writeConfig("refused_" + c.name, "max_train_steps = 1\n" + c.extra)};
      if (dryRun) args.push_back("--dry_run");
      const ProcessResult r = runRunner(args);
      EXPECT_EQ(r.exitCode, 2) << c.name << (dryRun ? " (dry run)" : "") << ":\n" << r.err;
      EXPECT_NE(r.err.find(c.says), std::string::npos) << c.name << " should say " << c.says << ":\n" << r.err;
    }
  EXPECT_FALSE(fs::exists(path("logs_refused")));

  // Without logging_dir nothing is logged, and the options that shape the log say so.
  const ProcessResult unused = runRunner({"--config_file", writeConfig("unused", "max_train_steps = 1\nlog_config = true\n"), "--dry_run"});
  EXPECT_EQ(unused.exitCode, 0) << unused.err;
  EXPECT_NE(unused.err.find("log_config is set but nothing is logged"), std::string::npos) << unused.err;

  writeText(path("with_wandb.toml"), "[tensorboard]\nflush_secs = 5\n[wandb]\nentity = \"me\"\n");
  const ProcessResult all = runRunner({"--config_file", writeConfig("all", "max_train_steps = 1\nnetwork_train_unet_only = true\n" + logs +
                                                                               "log_with = \"all\"\nwandb_run_name = \"r\"\n"
                                                                               "log_tracker_config = \"" + path("with_wandb.toml") + "\"\n")});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_NE(all.err.find("the [wandb] table is for W&B"), std::string::npos) << all.err;
  EXPECT_NE(all.err.find("W&B is not in this build; the run logs to TensorBoard only"), std::string::npos) << all.err;
  EXPECT_NE(all.err.find("wandb_run_name"), std::string::npos) << all.err;
  const std::string file = onlyEventFile(path("logs_refused"), "", "network_train");
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(stepsOf(scalarsByStep(readEventFile(file), "loss/current")), (std::vector<std::int64_t>{1}));
}
