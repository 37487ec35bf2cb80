// `sinter-runner --queue FILE` through the real binary on the tiny SDXL LoRA (CPU, a few steps a
// run): the runs in order, a broken one marked failed while the queue goes on (or stops, by
// on_failure), statuses and messages written to the file, the end command with the counts, a stop
// passed on to the run going on (interrupted, with its last state named), a run left `running` by a
// runner that died shown as interrupted, and bad queue files refused naming the file and the entry.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/run_queue.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::QueueStatus;
using sinter::RunQueue;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::readText;
using sinter::test::runRunner;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// The tiny SDXL LoRA at 64x64, batch 1, `steps` steps into `outputDir`; `extra` appended.
std::string writeRunConfig(const std::string& name, const std::string& outputDir, long long steps, const std::string& extra = "") {
  const std::string text = "model_family = \"sdxl\"\npretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\ntrain_data_dir = \"" + path("images") + "\"\n"
                           "output_dir = \"" + outputDir + "\"\noutput_name = \"t\"\nresolution = \"64,64\"\n"
                           "enable_bucket = true\nmin_bucket_reso = 64\nmax_bucket_reso = 128\nbucket_reso_steps = 32\n"
                           "caption_extension = \".txt\"\nmax_data_loader_n_workers = 0\nnetwork_dim = 4\nnetwork_alpha = 4.0\n"
                           "learning_rate = 0.01\nseed = 7\nmax_train_steps = " + std::to_string(steps) + "\n" + extra;
  writeText(path(name), text);
  return path(name);
}

std::string queueText(const std::string& onFailure, const std::vector<std::string>& configs, const std::string& extra = "") {
  std::string text = "on_failure = \"" + onFailure + "\"\n" + extra;
  for (const std::string& config : configs) text += "\n[[run]]\nconfig = \"" + config + "\"\n";
  return text;
}

class QueueCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_cli_queue_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
  // A folder of this test's own under the suite's root.
  std::string dir() const { return path(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
};

}  // namespace

TEST_F(QueueCli, ThreeRunsOneBrokenAllProcessedInOrderWithTheirStatuses) {
  const std::string d = dir();
  writeRunConfig("ThreeRunsOneBrokenAllProcessedInOrderWithTheirStatuses/runs/a.toml", d + "/out_a", 2);
  // Broken: a misspelt option, which the run refuses (exit 2) before making anything.
  writeRunConfig("ThreeRunsOneBrokenAllProcessedInOrderWithTheirStatuses/runs/b.toml", d + "/out_b", 2, "learnig_rate = 0.02\n");
  // Its output_dir comes from the queue entry (given to the run as --output_dir), read from the
  // entry's working_dir (itself relative to the queue file).
  writeRunConfig("ThreeRunsOneBrokenAllProcessedInOrderWithTheirStatuses/runs/c.toml", d + "/not_used", 2);
  fs::create_directories(d + "/work_c");
  const std::string queue = d + "/queue.toml";
  writeText(queue, queueText("continue", {"runs/a.toml", "runs/b.toml", "runs/c.toml"},
                             "on_end_command = [\"/bin/sh\", \"-c\", \"echo $SINTER_QUEUE_DONE $SINTER_QUEUE_FAILED > " + d + "/ended\"]\n") +
                       "output_dir = \"out_c\"\nworking_dir = \"work_c\"\n");

  const ProcessResult r = runRunner({"--queue", queue, "--events", "jsonl"});
  EXPECT_EQ(r.exitCode, 1) << r.err;  // one run failed
  const RunQueue after = sinter::loadRunQueueFile(queue);
  ASSERT_EQ(after.entries.size(), 3u);
  EXPECT_EQ(after.entries[0].status, QueueStatus::Done) << after.entries[0].message;
  EXPECT_EQ(after.entries[1].status, QueueStatus::Failed);
  EXPECT_EQ(after.entries[2].status, QueueStatus::Done) << after.entries[2].message;
  EXPECT_NE(after.entries[0].message.find("completed: 2 steps"), std::string::npos) << after.entries[0].message;
  EXPECT_NE(after.entries[1].message.find("exit code 2"), std::string::npos) << after.entries[1].message;
  EXPECT_NE(after.entries[1].message.find("b.toml:19:16: error: unknown key 'learnig_rate'; did you mean 'learning_rate'?"),
            std::string::npos)
      << after.entries[1].message;
  EXPECT_EQ(after.entries[0].outputDir, d + "/out_a");  // where it wrote, kept with the entry
  EXPECT_TRUE(fs::exists(d + "/out_a/t.safetensors"));
  EXPECT_FALSE(fs::exists(d + "/out_b"));
  EXPECT_TRUE(fs::exists(d + "/work_c/out_c/t.safetensors"));
  EXPECT_FALSE(fs::exists(d + "/not_used"));
  // The runs' events one run after another, in the queue's order.
  const auto done = eventsOfType<sinter::events::Done>(r);
  ASSERT_EQ(done.size(), 3u) << r.out;
  EXPECT_EQ(done[0].status, "completed");
  EXPECT_EQ(done[1].status, "failed");
  EXPECT_EQ(done[2].status, "completed");
  EXPECT_NE(r.err.find("3 run(s): 2 done, 1 failed"), std::string::npos) << r.err;
  EXPECT_EQ(readText(d + "/ended"), "2 1\n");  // the end command, with the counts
  EXPECT_FALSE(fs::exists(queue + ".lock"));   // released
}

TEST_F(QueueCli, OnFailureStopLeavesTheRunsAfterItPending) {
  const std::string d = dir();
  writeRunConfig("OnFailureStopLeavesTheRunsAfterItPending/b.toml", d + "/out_b", 2, "learnig_rate = 0.02\n");
  writeRunConfig("OnFailureStopLeavesTheRunsAfterItPending/a.toml", d + "/out_a", 2);
  const std::string queue = d + "/queue.toml";
  writeText(queue, queueText("stop", {"b.toml", "a.toml"}, "on_end_command = [\"touch\", \"" + d + "/ended\"]\n"));
  const ProcessResult r = runRunner({"--queue", queue});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const RunQueue after = sinter::loadRunQueueFile(queue);
  EXPECT_EQ(after.entries[0].status, QueueStatus::Failed);
  EXPECT_EQ(after.entries[1].status, QueueStatus::Pending);
  EXPECT_FALSE(fs::exists(d + "/out_a"));
  EXPECT_TRUE(fs::exists(d + "/ended"));  // the queue ended (by its failure): the command ran
  EXPECT_TRUE(r.out.empty()) << r.out;  // without --events, the runs' events are not shown
}

TEST_F(QueueCli, AStopReachesTheRunWhichSavesAndIsMarkedInterrupted) {
  const std::string d = dir();
  writeRunConfig("AStopReachesTheRunWhichSavesAndIsMarkedInterrupted/long.toml", d + "/out", 400);
  writeRunConfig("AStopReachesTheRunWhichSavesAndIsMarkedInterrupted/next.toml", d + "/out_next", 2);
  const std::string queue = d + "/queue.toml";
  writeText(queue, queueText("continue", {"long.toml", "next.toml"}, "on_end_command = [\"touch\", \"" + d + "/ended\"]\n"));
  // SIGTERM to the queue's runner once the first run has trained a step.
  const ProcessResult r = runRunner({"--queue", queue, "--events", "jsonl"},
                                    [](const std::string& line) { return line.find("\"type\":\"step\"") == std::string::npos; });
  EXPECT_EQ(r.exitCode, 0) << r.err;  // stopped on request
  ASSERT_EQ(eventsOfType<sinter::events::Done>(r).size(), 1u) << r.out;
  EXPECT_EQ(eventsOfType<sinter::events::Done>(r)[0].status, "stopped");
  const RunQueue after = sinter::loadRunQueueFile(queue);
  EXPECT_EQ(after.entries[0].status, QueueStatus::Interrupted);
  EXPECT_NE(after.entries[0].message.find("stopped on request at step"), std::string::npos) << after.entries[0].message;
  EXPECT_NE(after.entries[0].message.find(d + "/out/t-step"), std::string::npos) << after.entries[0].message;  // its state
  EXPECT_EQ(after.entries[1].status, QueueStatus::Pending);
  EXPECT_FALSE(fs::exists(d + "/out_next"));
  EXPECT_FALSE(fs::exists(d + "/ended"));  // a queue stopped on request has not ended
  EXPECT_EQ(r.err.find("second stop signal"), std::string::npos) << r.err;  // one stop reached the run
}

TEST_F(QueueCli, ARunLeftRunningByARunnerThatDiedIsInterruptedWithItsLastState) {
  const std::string d = dir();
  writeRunConfig("ARunLeftRunningByARunnerThatDiedIsInterruptedWithItsLastState/a.toml", d + "/out", 2);
  writeText(d + "/out/t-step00000003-state/train_state.json", "{\"format\": \"sinter-train-state\", \"version\": 1, \"global_step\": 3}\n");
  const std::string queue = d + "/queue.toml";
  writeText(queue, "[[run]]\nconfig = \"a.toml\"\nstatus = \"running\"\n");
  const ProcessResult r = runRunner({"--queue", queue});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  const RunQueue after = sinter::loadRunQueueFile(queue);
  EXPECT_EQ(after.entries[0].status, QueueStatus::Interrupted);
  EXPECT_NE(after.entries[0].message.find("resume = \"" + d + "/out/t-step00000003-state\""), std::string::npos) << after.entries[0].message;
  EXPECT_NE(r.err.find("was interrupted and is not run again"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no pending runs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d + "/out/t.safetensors"));
}

TEST_F(QueueCli, BadQueuesAreRefusedNamingTheFileAndTheEntry) {
  const std::string d = dir();
  writeRunConfig("BadQueuesAreRefusedNamingTheFileAndTheEntry/a.toml", d + "/out", 2);
  struct Case {
    std::string name, text, says;
  };
  const std::vector<Case> cases{
      {"typo.toml", "[[run]]\nconfig = \"a.toml\"\nstauts = \"done\"\n", "typo.toml:3:10: error: run 1: unknown key 'stauts'"},
      {"status.toml", "[[run]]\nconfig = \"a.toml\"\nstatus = \"later\"\n", "run 1: status \"later\" is none of"},
      {"noconfig.toml", "[[run]]\nconfig = \"a.toml\"\n\n[[run]]\nstatus = \"pending\"\n", "noconfig.toml:4:1: error: run 2: no config"},
      {"missing.toml", "[[run]]\nconfig = \"a.toml\"\n\n[[run]]\nconfig = \"gone.toml\"\n",
       "missing.toml: run 2 (line 4): config " + d + "/gone.toml is not there"},
      {"empty.toml", "on_failure = \"stop\"\n", "the queue has no runs"},
      {"syntax.toml", "[[run]\n", "syntax.toml:1:"},
  };
  for (const Case& c : cases) {
    writeText(d + "/" + c.name, c.text);
    const ProcessResult r = runRunner({"--queue", d + "/" + c.name});
    EXPECT_EQ(r.exitCode, 2) << c.name << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.name << " should say " << c.says << ":\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(d + "/out"));  // nothing ran, not even the good entries
  const ProcessResult none = runRunner({"--queue", d + "/nothing_here.toml"});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("--queue " + d + "/nothing_here.toml: no such file"), std::string::npos) << none.err;
  const ProcessResult mixed = runRunner({"--queue", d + "/missing.toml", "--learning_rate", "0.1"});
  EXPECT_EQ(mixed.exitCode, 2);
  EXPECT_NE(mixed.err.find("--learning_rate does not go with it"), std::string::npos) << mixed.err;
}
