// The lock a run holds on its output (<output_dir>/<output_name>.lock): one holder at a time, the
// holder's pid in the refusal, a file nobody holds taken over, the file gone once released.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "train/loop/output_lock.h"

namespace fs = std::filesystem;
using sinter::train::OutputLock;
using sinter::train::OutputLockHeld;
using sinter::train::outputLockPath;

namespace {

class OutputLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sinter_output_lock_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string lockPath(const std::string& name) const { return outputLockPath(dir_.string(), name); }
  fs::path dir_;
};

std::string contents(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_F(OutputLockTest, TheFileIsNamedAfterTheOutputAndHoldsThePid) {
  EXPECT_EQ(outputLockPath("/data/out", "my-lora"), "/data/out/my-lora.lock");
  const std::string path = lockPath("t");
  {
    OutputLock lock(path);
    EXPECT_EQ(lock.path(), path);
    EXPECT_FALSE(lock.takenOverFrom());
    EXPECT_EQ(contents(path), std::to_string(::getpid()) + "\n");
  }
  EXPECT_FALSE(fs::exists(path));  // removed on release
  OutputLock again(path);           // and free for the next run
  EXPECT_FALSE(again.takenOverFrom());
}

TEST_F(OutputLockTest, ASecondHolderIsRefusedWithTheFirstOnesPid) {
  const std::string path = lockPath("t");
  OutputLock first(path);
  try {
    OutputLock second(path);
    FAIL() << "a second lock on " << path << " was granted";
  } catch (const OutputLockHeld& e) {
    EXPECT_EQ(std::string(e.what()), "'" + path + "' is locked by another run (pid " + std::to_string(::getpid()) + ")");
  }
  EXPECT_TRUE(fs::exists(path));  // the refusal leaves the holder's file alone
  EXPECT_EQ(contents(path), std::to_string(::getpid()) + "\n");
  OutputLock otherName(lockPath("t2"));  // another output_name in the same folder
}

TEST_F(OutputLockTest, AHolderInAnotherProcessRefusesThisOne) {
  const std::string path = lockPath("t");
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 0;
    try {
      OutputLock held(path);
      char c = 1;
      (void)!::write(ready[1], &c, 1);
      (void)!::read(release[0], &c, 1);
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_THROW(
      {
        try {
          OutputLock mine(path);
        } catch (const OutputLockHeld& e) {
          EXPECT_NE(std::string(e.what()).find("(pid " + std::to_string(child) + ")"), std::string::npos) << e.what();
          throw;
        }
      },
      OutputLockHeld);
  (void)!::write(release[1], &c, 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  OutputLock mine(path);  // released when the holder ended
  EXPECT_FALSE(mine.takenOverFrom());
}

TEST_F(OutputLockTest, AFileThatNobodyHoldsIsTakenOverNamingThePidItHeld) {
  const std::string path = lockPath("t");
  // A run killed without removing its file: the kernel dropped its lock, its pid stayed.
  const pid_t killed = ::fork();
  if (killed == 0) {
    (void)new OutputLock(path);  // never released: the process ends holding it
    ::_exit(0);
  }
  ::waitpid(killed, nullptr, 0);
  ASSERT_EQ(contents(path), std::to_string(killed) + "\n");
  OutputLock lock(path);
  ASSERT_TRUE(lock.takenOverFrom());
  EXPECT_EQ(*lock.takenOverFrom(), std::to_string(killed));
  EXPECT_EQ(contents(path), std::to_string(::getpid()) + "\n");
}

TEST_F(OutputLockTest, AFolderWhereNoFileCanBeMadeIsAPlainError) {
  const std::string path = (dir_ / "absent" / "t.lock").string();
  try {
    OutputLock lock(path);
    FAIL();
  } catch (const OutputLockHeld&) {
    FAIL() << "not held by anyone";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the lock file '" + path + "'"), std::string::npos) << e.what();
  }
}
