// The run queue's file (core/run_queue.h), shared by the app and `sinter-runner --queue`, and the
// search for a run's last saved state (core/saved_train_state.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/run_queue.h"
#include "core/saved_train_state.h"

using namespace sinter;
namespace fs = std::filesystem;

namespace {

// The message of the ConfigError that reading `text` throws, or "" when it reads.
std::string errorOf(const std::string& text) {
  try {
    parseRunQueue(text, "q.toml");
  } catch (const ConfigError& e) {
    return formatAll(e.diagnostics());
  }
  return "";
}

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("sinter_run_queue_" + std::to_string(::getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void writeState(const fs::path& folder, long long step) {
  writeFile(folder / "train_state.json", "{\"format\": \"sinter-train-state\", \"version\": 1, \"global_step\": " + std::to_string(step) + "}\n");
}

}  // namespace

TEST(RunQueue, ReadsEveryKeyAndWritesThemBack) {
  const std::string text =
      "on_failure = \"stop\"\n"
      "on_end_command = [\"notify-send\", \"Sinter\", \"done \\\"now\\\"\"]\n"
      "\n[[run]]\nconfig = \"runs/0001.toml\"\n"
      "\n[[run]]\nconfig = \"/abs/b.toml\"\nstatus = \"interrupted\"\noutput_dir = \"/out/b\"\nworking_dir = \"work\"\n"
      "resume = \"/out/b/b-step00000004-state\"\nmessage = \"stopped on request at step 4\"\n";
  const RunQueue queue = parseRunQueue(text, "q.toml");
  EXPECT_EQ(queue.onFailure, QueueOnFailure::Stop);
  EXPECT_EQ(queue.onEndCommand, (std::vector<std::string>{"notify-send", "Sinter", "done \"now\""}));
  ASSERT_EQ(queue.entries.size(), 2u);
  EXPECT_EQ(queue.entries[0].config, "runs/0001.toml");
  EXPECT_EQ(queue.entries[0].status, QueueStatus::Pending);  // the default
  EXPECT_EQ(queue.entries[0].line, 4);
  const QueueEntry& b = queue.entries[1];
  EXPECT_EQ(b.status, QueueStatus::Interrupted);
  EXPECT_EQ(b.outputDir, "/out/b");
  EXPECT_EQ(b.workingDir, "work");
  EXPECT_EQ(b.resume, "/out/b/b-step00000004-state");
  EXPECT_EQ(b.message, "stopped on request at step 4");
  EXPECT_EQ(describeQueueEntry(queue, 1), "run 2 (line 7)");

  // Written and read again: the same queue, and the same bytes the second time.
  const std::string written = writeRunQueue(queue);
  const RunQueue again = parseRunQueue(written, "again.toml");
  EXPECT_EQ(again.onFailure, queue.onFailure);
  EXPECT_EQ(again.onEndCommand, queue.onEndCommand);
  ASSERT_EQ(again.entries.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again.entries[i].config, queue.entries[i].config);
    EXPECT_EQ(again.entries[i].status, queue.entries[i].status);
    EXPECT_EQ(again.entries[i].outputDir, queue.entries[i].outputDir);
    EXPECT_EQ(again.entries[i].workingDir, queue.entries[i].workingDir);
    EXPECT_EQ(again.entries[i].resume, queue.entries[i].resume);
    EXPECT_EQ(again.entries[i].message, queue.entries[i].message);
  }
  EXPECT_EQ(writeRunQueue(again), written);
}

TEST(RunQueue, AnEmptyFileIsAnEmptyQueueThatGoesOnAfterAFailure) {
  const RunQueue queue = parseRunQueue("", "q.toml");
  EXPECT_TRUE(queue.entries.empty());
  EXPECT_EQ(queue.onFailure, QueueOnFailure::Continue);
  EXPECT_TRUE(queue.onEndCommand.empty());
}

TEST(RunQueue, BadFilesAreRefusedNamingFileLineAndEntry) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"[[run]]\nconfig = \"a.toml\"\n\n[[run]]\nstatus = \"done\"\n", "q.toml:4:1: error: run 2: no config"},
      {"[[run]]\nconfig = \"a.toml\"\nstauts = \"done\"\n", "q.toml:3:10: error: run 1: unknown key 'stauts'"},
      {"[[run]]\nconfig = \"a.toml\"\nstatus = \"finished\"\n", "q.toml:3:10: error: run 1: status \"finished\" is none of"},
      {"[[run]]\nconfig = 3\n", "q.toml:2:10: error: run 1: config must be a string"},
      {"[[run]]\nconfig = \"\"\n", "run 1: config is empty"},
      {"on_failure = \"retry\"\n", "q.toml:1:14: error: on_failure \"retry\" is neither \"continue\" nor \"stop\""},
      {"on_end_command = \"notify-send done\"\n", "on_end_command must be a list"},
      {"on_end_command = [\"\", \"x\"]\n", "on_end_command names no program"},
      {"onfailure = \"stop\"\n", "unknown key 'onfailure'"},
      {"run = \"a.toml\"\n", "run must be a list of tables"},
      {"[[run]\nconfig = \"a.toml\"\n", "q.toml:1:"},
  };
  for (const Case& c : cases) {
    const std::string error = errorOf(c.text);
    EXPECT_NE(error.find(c.says), std::string::npos) << c.text << "\n-> " << error;
  }
  EXPECT_NE(errorOf("[[run]]\nconfig = \"a\xff.toml\"\n").find("not valid UTF-8"), std::string::npos);
}

TEST(RunQueue, AMissingFileIsNamed) {
  try {
    loadRunQueueFile("/nonexistent/queue.toml");
    FAIL() << "read a file that is not there";
  } catch (const ConfigError& e) {
    EXPECT_NE(formatAll(e.diagnostics()).find("/nonexistent/queue.toml"), std::string::npos) << formatAll(e.diagnostics());
  }
}

TEST(RunQueue, PathsAreReadFromTheQueueFilesFolder) {
  EXPECT_EQ(resolveQueuePath("/data/queues/q.toml", "runs/a.toml"), "/data/queues/runs/a.toml");
  EXPECT_EQ(resolveQueuePath("/data/queues/q.toml", "../a.toml"), "/data/a.toml");
  EXPECT_EQ(resolveQueuePath("/data/queues/q.toml", "/elsewhere/a.toml"), "/elsewhere/a.toml");
  EXPECT_EQ(resolveQueuePath("q.toml", "a.toml"), "a.toml");
}

TEST(RunQueue, RunsLeftRunningBecomeInterruptedAndTheNextPendingIsFound) {
  RunQueue queue;
  for (QueueStatus s : {QueueStatus::Done, QueueStatus::Running, QueueStatus::Failed, QueueStatus::Pending, QueueStatus::Pending})
    queue.entries.push_back(QueueEntry{"x.toml", s, "", "", "", "", 0});
  EXPECT_EQ(markInterruptedRuns(queue, "the app ended during this run"), 1);
  EXPECT_EQ(queue.entries[1].status, QueueStatus::Interrupted);
  EXPECT_EQ(queue.entries[1].message, "the app ended during this run");
  EXPECT_EQ(markInterruptedRuns(queue, "again"), 0);
  EXPECT_EQ(nextPendingRun(queue), std::optional<std::size_t>(3));
  EXPECT_EQ(nextPendingRun(queue, 4), std::optional<std::size_t>(4));
  EXPECT_EQ(nextPendingRun(queue, 5), std::nullopt);
}

TEST(RunQueue, SavedAtomicallyAndReadBack) {
  ScratchDir dir;
  const std::string path = (dir.path / "queue.toml").string();
  RunQueue queue;
  queue.entries.push_back(QueueEntry{"runs/0001.toml", QueueStatus::Done, "/out", "", "", "completed: 2 steps in 1.0 s", 0});
  saveRunQueueFile(path, queue);
  const RunQueue read = loadRunQueueFile(path);
  ASSERT_EQ(read.entries.size(), 1u);
  EXPECT_EQ(read.entries[0].message, "completed: 2 steps in 1.0 s");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary file left beside it
}

TEST(SavedTrainState, TheHighestStepOfTheRunsOwnStateFoldersIsFound) {
  ScratchDir dir;
  const fs::path out = dir.path / "out";
  EXPECT_FALSE(findLastSavedTrainState(out.string(), "lora"));  // no folder yet
  fs::create_directories(out);
  EXPECT_FALSE(findLastSavedTrainState(out.string(), "lora"));
  writeState(out / "lora-step00000004-state", 4);
  writeState(out / "lora-000001-state", 6);
  writeState(out / "lora-step00000002-state", 2);
  writeState(out / "lora-extra-step00000099-state", 99);       // another output name's
  writeState(out / "lora-step00000050-state.tmp-123", 50);     // a save in progress
  writeFile(out / "lora-step00000070-state" / "train_state.json", "{\"format\": \"other\", \"global_step\": 70}");
  writeFile(out / "lora-step00000080-state" / "train_state.json", "not json");
  auto last = findLastSavedTrainState(out.string(), "lora");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->folder, (out / "lora-000001-state").string());
  EXPECT_EQ(last->step, 6);
  writeState(out / "lora-state", 10);  // the end of a run's save_state
  last = findLastSavedTrainState(out.string(), "lora");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->folder, (out / "lora-state").string());
  // Any output name when none is given.
  last = findLastSavedTrainState(out.string(), "");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->step, 99);
}
