// The controls during a run (`--control stdin`, train/loop/run_controls.h) end to end through the
// real sinter-runner on the tiny SDXL checkpoint, on the CPU: commands written to its stdin while
// it trains are acknowledged by `control` events and acted on at a step boundary (a sample PNG, a
// saved LoRA and state, the run's end after an epoch, a pause whose time is no step's), a line that
// is no command is a warning naming it, the channel's end is no command, and two ranks act at the
// same step. Nothing here depends on how fast a step is: events are waited for, not times.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/events.h"
#include "distributed/process_group.h"
#include "io/safetensors.h"
#include "runner_process.h"
#include "train/loop/control_commands.h"

namespace fs = std::filesystem;
using sinter::test::doneStatus;
using sinter::test::eventsOf;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::RunnerInput;
using sinter::test::runRunner;
using sinter::test::writeText;
namespace events = sinter::events;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// The tiny model on five pictures at 64x64, batch size 1: five steps an epoch; `extra` appended.
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + path("five") + "\"\n"
                           "output_dir = \"" + outputDir + "\"\n"
                           "output_name = \"t\"\n"
                           "resolution = \"64,64\"\n"
                           "caption_extension = \".txt\"\n"
                           "max_data_loader_n_workers = 0\n"
                           "cache_latents = true\n"
                           "network_train_unet_only = true\n"
                           "network_dim = 4\n"
                           "network_alpha = 4.0\n"
                           "learning_rate = 0.01\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

std::vector<std::string> runArgs(const std::string& config) {
  return {"--config_file", config, "--events", "jsonl", "--control", "stdin"};
}

std::optional<events::Event> eventOf(const std::string& line) { return events::parseJsonLine(line); }

template <typename T>
const T* asType(const std::optional<events::Event>& e) {
  return e ? std::get_if<T>(&*e) : nullptr;
}

// The acknowledgements of `command`, in order.
std::vector<events::Control> acksOf(const ProcessResult& r, const std::string& command) {
  std::vector<events::Control> out;
  for (const auto& c : eventsOfType<events::Control>(r))
    if (c.command == command) out.push_back(c);
  return out;
}

std::string stepStem(long long step) {
  char stem[32];
  std::snprintf(stem, sizeof stem, "t-step%08lld", step);
  return stem;
}

// Where in the run's events the first of type T that `match` accepts is (events.size() when none).
template <typename T>
size_t indexOf(const std::vector<events::Event>& all, const std::function<bool(const T&)>& match) {
  for (size_t i = 0; i < all.size(); ++i)
    if (const T* t = std::get_if<T>(&all[i]); t && match(*t)) return i;
  return all.size();
}

class RunControlsRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_run_controls_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    std::vector<fs::path> pictures;
    for (const auto& folder : fs::directory_iterator(path("images")))
      for (const auto& e : fs::directory_iterator(folder.path()))
        if (e.path().extension() != ".txt") pictures.push_back(e.path());
    std::sort(pictures.begin(), pictures.end());
    ASSERT_GE(pictures.size(), 5u);
    const fs::path to = g_root / "five" / "1_shapes";
    fs::create_directories(to);
    for (size_t i = 0; i < 5; ++i) {
      fs::copy_file(pictures[i], to / pictures[i].filename());
      fs::copy_file(fs::path(pictures[i]).replace_extension(".txt"), to / fs::path(pictures[i]).replace_extension(".txt").filename());
    }
    writeText(path("prompts.txt"), "a red circle on white --w 64 --h 64 --d 1 --s 2\n");
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST(ControlCommands, LinesAreWordsInAnyCaseAndAnythingElseIsNamed) {
  using namespace sinter::train;
  EXPECT_EQ(parseControlLine("sample").command, ControlCommand::Sample);
  EXPECT_EQ(parseControlLine("  Save\r").command, ControlCommand::Save);
  EXPECT_EQ(parseControlLine("STOP_AFTER_EPOCH").command, ControlCommand::StopAfterEpoch);
  EXPECT_EQ(parseControlLine("\tpause ").command, ControlCommand::Pause);
  EXPECT_EQ(parseControlLine("resume").command, ControlCommand::Resume);
  // A blank line is nothing; the words the ranks use among themselves are not commands.
  const ParsedControlLine blank = parseControlLine(" \t\r");
  EXPECT_FALSE(blank.command);
  EXPECT_TRUE(blank.problem.empty());
  for (const std::string line : {"stop_signal", "channel_closed", "sample now", "save;", "pause\x01"}) {
    const ParsedControlLine bad = parseControlLine(line);
    EXPECT_FALSE(bad.command) << line;
    EXPECT_NE(bad.problem.find("is not a command"), std::string::npos) << line;
  }
  EXPECT_NE(parseControlLine("bogus").problem.find("'bogus'"), std::string::npos);
  EXPECT_NE(parseControlLine(std::string(300, 'x')).problem.find("..."), std::string::npos);
  const std::vector<ControlCommand> all{ControlCommand::Save, ControlCommand::Pause, ControlCommand::StopSignal,
                                        ControlCommand::ChannelClosed, ControlCommand::StopAfterEpoch};
  EXPECT_EQ(decodeControlCommands(encodeControlCommands(all)), all);
  EXPECT_TRUE(decodeControlCommands("").empty());
  EXPECT_THROW(decodeControlCommands("save nonsense"), std::runtime_error);
}

TEST_F(RunControlsRun, SampleAndSaveNowActAtTheNextStepAndABadLineIsAWarning) {
  const std::string out = path("out_now");
  const std::string cfg = writeConfig("now.toml", out, "max_train_steps = 20\nsave_state = true\nsample_prompts = \"" +
                                                           path("prompts.txt") + "\"\n");
  const std::string longLine(5000, 'x');
  const ProcessResult r = runRunner(runArgs(cfg), nullptr, [&](const std::string& line, RunnerInput& input) {
    if (const auto* s = asType<events::Step>(eventOf(line)); s && s->step == 1) {
      input.send("sample\nsave\nbogus command\n\n");
      input.send(longLine + "\n");
    }
  });
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const auto all = eventsOf(r);

  const auto sampled = acksOf(r, "sample");
  ASSERT_EQ(sampled.size(), 1u) << r.out;
  EXPECT_EQ(sampled[0].result, "done");
  const long long at = sampled[0].step;
  EXPECT_GT(at, 1);
  EXPECT_LE(at, 20);
  // The samples at that step, their PNG written; the step's own event before the acknowledgement.
  const auto samples = eventsOfType<events::Sample>(r);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].step, at);
  EXPECT_TRUE(fs::exists(samples[0].path)) << samples[0].path;
  EXPECT_LT(indexOf<events::Step>(all, [&](const events::Step& s) { return s.step == at; }),
            indexOf<events::Control>(all, [](const events::Control& c) { return c.command == "sample"; }));

  // Saved as save_every_n_steps names it, with its state (save_state), at the same boundary.
  const auto saved = acksOf(r, "save");
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].result, "done");
  EXPECT_EQ(saved[0].step, at);
  EXPECT_TRUE(fs::exists(out + "/" + stepStem(at) + ".safetensors")) << r.err;
  EXPECT_TRUE(fs::exists(out + "/" + stepStem(at) + "-state/train_state.json")) << r.err;
  bool savedEvent = false;
  for (const auto& s : eventsOfType<events::Saved>(r)) savedEvent |= s.kind == "requested" && s.path == out + "/" + stepStem(at) + ".safetensors";
  EXPECT_TRUE(savedEvent) << r.out;
  EXPECT_TRUE(fs::exists(out + "/t.safetensors"));

  // The lines that are no command: a warning each, naming it; the blank line is nothing.
  std::vector<std::string> warnings;
  for (const auto& w : eventsOfType<events::Warning>(r))
    if (w.message.rfind("control line", 0) == 0) warnings.push_back(w.message);
  ASSERT_EQ(warnings.size(), 2u) << r.out;
  EXPECT_NE(warnings[0].find("control line 3: 'bogus command' is not a command"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("control line 5: 'xxxx"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("904 more bytes"), std::string::npos) << warnings[1];
}

TEST_F(RunControlsRun, StopAfterThisEpochEndsTheRunAtTheEpochsLastStepSavedAsItsEnd) {
  const std::string out = path("out_epoch");
  const std::string cfg = writeConfig("epoch.toml", out, "max_train_epochs = 6\nsave_every_n_epochs = 1\n");
  const ProcessResult r = runRunner(runArgs(cfg), nullptr, [&](const std::string& line, RunnerInput& input) {
    if (const auto* s = asType<events::Step>(eventOf(line)); s && s->step == 2) input.send("stop_after_epoch\n");
  });
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto acks = acksOf(r, "stop_after_epoch");
  ASSERT_EQ(acks.size(), 2u) << r.out;
  EXPECT_EQ(acks[0].result, "pending");
  EXPECT_EQ(acks[1].result, "done");
  const long long epoch = acks[0].epoch;
  EXPECT_GE(epoch, 1);
  EXPECT_LT(epoch, 6);
  EXPECT_EQ(acks[1].epoch, epoch);
  // Completed at that epoch's last step (five steps an epoch), with the end's save and no epoch save for it.
  const auto done = eventsOfType<events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "completed");
  EXPECT_EQ(done[0].steps, epoch * 5);
  EXPECT_EQ(eventsOfType<events::Step>(r).back().step, epoch * 5);
  EXPECT_EQ(eventsOfType<events::Epoch>(r).back().epoch, epoch);
  EXPECT_TRUE(fs::exists(out + "/t.safetensors"));
  char last[32];
  std::snprintf(last, sizeof last, "t-%06lld.safetensors", epoch);
  EXPECT_FALSE(fs::exists(out + "/" + last));
  for (long long e = 1; e < epoch; ++e) {
    std::snprintf(last, sizeof last, "t-%06lld.safetensors", e);
    EXPECT_TRUE(fs::exists(out + "/" + last)) << last;
  }
}

TEST_F(RunControlsRun, APauseWaitsWithNoStepsAndItsTimeIsNoStepsTime) {
  const std::string cfg = writeConfig("pause.toml", path("out_pause"), "max_train_steps = 12\n");
  double slowestStepMs = 0, pausedFor = 0;
  const auto runStart = std::chrono::steady_clock::now();
  const ProcessResult r = runRunner(runArgs(cfg), nullptr, [&](const std::string& line, RunnerInput& input) {
    const auto e = eventOf(line);
    if (const auto* s = asType<events::Step>(e)) {
      slowestStepMs = std::max(slowestStepMs, s->step_ms);
      if (s->step == 3) input.send("pause\n");
    }
    // Paused: wait well beyond any step's time, then resume.
    if (const auto* c = asType<events::Control>(e); c && c->command == "pause" && c->result == "done") {
      pausedFor = std::max(1.5, 4 * slowestStepMs / 1000);
      std::this_thread::sleep_for(std::chrono::duration<double>(pausedFor));
      input.send("pause\nresume\nresume\n");
    }
  });
  const double runSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - runStart).count();
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const auto pauses = acksOf(r, "pause"), resumes = acksOf(r, "resume");
  ASSERT_EQ(pauses.size(), 2u) << r.out;
  ASSERT_EQ(resumes.size(), 2u) << r.out;
  EXPECT_EQ(pauses[0].result, "done");
  EXPECT_EQ(pauses[1].result, "ignored");  // paused already
  EXPECT_EQ(resumes[0].result, "done");
  EXPECT_EQ(resumes[1].result, "ignored");  // not paused any more
  const long long at = pauses[0].step;
  EXPECT_EQ(resumes[0].step, at);
  EXPECT_GE(resumes[0].seconds, pausedFor);

  // No step while paused; the next step's time, it/s and the total leave the pause out.
  const auto all = eventsOf(r);
  const size_t paused = indexOf<events::Control>(all, [](const events::Control& c) { return c.command == "pause"; });
  const size_t resumed = indexOf<events::Control>(all, [](const events::Control& c) { return c.command == "resume"; });
  ASSERT_LT(paused, resumed);
  for (size_t i = paused; i < resumed; ++i) EXPECT_FALSE(std::holds_alternative<events::Step>(all[i]));
  const size_t next = indexOf<events::Step>(all, [&](const events::Step& s) { return s.step == at + 1; });
  ASSERT_LT(next, all.size());
  EXPECT_GT(next, resumed);
  EXPECT_LT(std::get<events::Step>(all[next]).step_ms, resumes[0].seconds * 1000);
  const auto done = eventsOfType<events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_LT(done[0].seconds, runSeconds - pausedFor);
}

TEST_F(RunControlsRun, AChannelThatEndsDuringAPauseLetsTheRunGoOn) {
  const std::string cfg = writeConfig("closed.toml", path("out_closed"), "max_train_steps = 6\n");
  const ProcessResult r = runRunner(runArgs(cfg), nullptr, [&](const std::string& line, RunnerInput& input) {
    const auto e = eventOf(line);
    if (const auto* s = asType<events::Step>(e); s && s->step == 2) input.send("pause\n");
    if (const auto* c = asType<events::Control>(e); c && c->command == "pause") input.close();
  });
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  EXPECT_EQ(eventsOfType<events::Step>(r).back().step, 6);
  bool warned = false;
  for (const auto& w : eventsOfType<events::Warning>(r))
    warned |= w.message.find("the control channel ended while the run was paused") != std::string::npos;
  EXPECT_TRUE(warned) << r.out;
}

TEST_F(RunControlsRun, AStopSignalDuringAPauseStopsAndSaves) {
  const std::string out = path("out_stop");
  const std::string cfg = writeConfig("stop.toml", out, "max_train_steps = 40\n");
  const ProcessResult r = runRunner(runArgs(cfg), nullptr, [&](const std::string& line, RunnerInput& input) {
    const auto e = eventOf(line);
    if (const auto* s = asType<events::Step>(e); s && s->step == 2) input.send("pause\n");
    if (const auto* c = asType<events::Control>(e); c && c->command == "pause") ::kill(sinter::test::lastRunnerPid(), SIGTERM);
  });
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto pauses = acksOf(r, "pause");
  ASSERT_EQ(pauses.size(), 1u);
  const auto done = eventsOfType<events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "stopped");
  EXPECT_EQ(done[0].steps, pauses[0].step);
  EXPECT_TRUE(fs::exists(out + "/" + stepStem(pauses[0].step) + ".safetensors")) << r.err;
  EXPECT_TRUE(fs::exists(out + "/" + stepStem(pauses[0].step) + "-state")) << r.err;
}

// Without --control, stdin is not read: a shell user's terminal is left alone.
TEST_F(RunControlsRun, WithoutTheOptionStdinIsNotRead) {
  const std::string cfg = writeConfig("plain.toml", path("out_plain"), "max_train_steps = 4\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"}, nullptr, [&](const std::string& line, RunnerInput& input) {
    if (const auto* s = asType<events::Step>(eventOf(line)); s && s->step == 1) input.send("pause\nbogus\n");
  });
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  EXPECT_TRUE(eventsOfType<events::Control>(r).empty());
  for (const auto& w : eventsOfType<events::Warning>(r)) EXPECT_EQ(w.message.find("control"), std::string::npos) << w.message;
}

TEST_F(RunControlsRun, OnlyStdinIsAChannel) {
  const std::string cfg = writeConfig("file.toml", path("out_file"), "max_train_steps = 4\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--control", "commands.txt"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--control takes 'stdin', not 'commands.txt'"), std::string::npos) << r.err;
}

// Two ranks (two processes on the CPU over Gloo): rank 0 reads the commands, both act at the same
// step. The ranks wait for each other at most 4 s here, and the pause lasts longer: its heartbeats
// keep the other rank waiting. The requested state holds both ranks' noise states.
TEST_F(RunControlsRun, TwoRanksActAtTheSameStep) {
  if (!sinter::distributed::distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const std::string out = path("out_ranks");
  const std::string cfg = writeConfig("ranks.toml", out, "max_train_epochs = 20\nsave_state = true\n");
  ::setenv("SINTER_DISTRIBUTED_TIMEOUT", "4", 1);
  std::vector<std::string> args = runArgs(cfg);
  args.insert(args.end(), {"--nproc_per_node", "2"});
  const ProcessResult r = runRunner(args, nullptr, [&](const std::string& line, RunnerInput& input) {
    const auto e = eventOf(line);
    if (const auto* s = asType<events::Step>(e); s && s->step == 2) input.send("save\npause\n");
    if (const auto* c = asType<events::Control>(e); c && c->command == "pause" && c->result == "done") {
      std::this_thread::sleep_for(std::chrono::seconds(6));
      input.send("resume\nstop_after_epoch\n");
    }
  });
  ::unsetenv("SINTER_DISTRIBUTED_TIMEOUT");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto saved = acksOf(r, "save"), pauses = acksOf(r, "pause"), resumes = acksOf(r, "resume");
  ASSERT_EQ(saved.size(), 1u) << r.out;
  ASSERT_EQ(pauses.size(), 1u) << r.out;
  ASSERT_EQ(resumes.size(), 1u) << r.out;
  EXPECT_EQ(pauses[0].step, saved[0].step);
  EXPECT_EQ(resumes[0].result, "done");
  EXPECT_GE(resumes[0].seconds, 6.0);
  const std::string state = out + "/" + stepStem(saved[0].step) + "-state";
  ASSERT_TRUE(fs::exists(state)) << r.err;
  bool rank1Noise = false;
  for (const auto& e : fs::recursive_directory_iterator(state)) {
    if (e.path().extension() != ".safetensors") continue;
    for (const auto& k : sinter::io::SafetensorsFile(e.path().string()).keys()) rank1Noise |= k.find("device_rank1") != std::string::npos;
  }
  EXPECT_TRUE(rank1Noise) << "rank 1's noise state was not saved";
  // Five batches on two ranks: three steps an epoch; the run ends with the epoch of the pause.
  const auto epochAcks = acksOf(r, "stop_after_epoch");
  ASSERT_EQ(epochAcks.size(), 2u) << r.out;
  const auto done = eventsOfType<events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "completed");
  EXPECT_EQ(done[0].steps, epochAcks[0].epoch * 3);
  EXPECT_NE(r.err.find("the trained weights are identical on all 2 ranks"), std::string::npos) << r.err;
}
