// SentencePiece's module as the runner finds and loads it: where it looks, what it says when the
// module is missing or is not the module, and a model read through it from several threads at
// once agreeing with spm_encode.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "spiece_test_model.h"
#include "text/sentencepiece_loader.h"

namespace fs = std::filesystem;
using sinter::text::SentencePieceError;
using sinter::text::SentencePieceModel;

namespace {

std::string errorOf(const std::string& model, const std::vector<std::string>& candidates) {
  try {
    SentencePieceModel m(model, candidates);
  } catch (const SentencePieceError& e) {
    return e.what();
  }
  return "";
}

class SentencePieceLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sinter::text::sentencePieceModuleBuilt()) GTEST_SKIP() << "configured with -DSINTER_WITH_SENTENCEPIECE=OFF";
  }
};

}  // namespace

TEST_F(SentencePieceLoaderTest, LooksBesideTheExecutableThenInstalledThenInTheBuildTree) {
  const std::vector<std::string> candidates = sinter::text::sentencePieceModuleCandidates();
  ASSERT_EQ(candidates.size(), 3u);
  const fs::path exeDir = fs::read_symlink("/proc/self/exe").parent_path();
  EXPECT_EQ(fs::path(candidates[0]).parent_path(), exeDir);
  EXPECT_NE(candidates[1].find("/sinter/"), std::string::npos) << candidates[1];
  // The tests run from the build tree's bin/, where the module is built.
  EXPECT_TRUE(fs::is_regular_file(candidates[0])) << candidates[0];
  EXPECT_TRUE(fs::is_regular_file(candidates[2])) << candidates[2];
}

TEST_F(SentencePieceLoaderTest, AMissingModuleNamesEveryPathTried) {
  const std::string message = errorOf("/some/spiece.model", {"/nowhere/a/libsinter_sentencepiece.so", "/nowhere/b.so"});
  EXPECT_NE(message.find("cannot read /some/spiece.model"), std::string::npos) << message;
  EXPECT_NE(message.find("missing"), std::string::npos) << message;
  EXPECT_NE(message.find("/nowhere/a/libsinter_sentencepiece.so"), std::string::npos) << message;
  EXPECT_NE(message.find("/nowhere/b.so"), std::string::npos) << message;
}

TEST_F(SentencePieceLoaderTest, AFileThatIsNotTheModuleIsNamed) {
  const sinter::text::testing::SpieceTestModel model;
  const std::string text = (model.dir() / "libsinter_sentencepiece.so").string();
  std::ofstream(text) << "not a shared object";
  std::string message = errorOf(model.file().string(), {text});
  EXPECT_NE(message.find("cannot load SentencePiece's module " + text), std::string::npos) << message;
  // A shared object without the module's entry points.
  const std::string libm = "/lib/x86_64-linux-gnu/libm.so.6";
  if (fs::exists(libm)) {
    message = errorOf(model.file().string(), {libm});
    EXPECT_NE(message.find("is not Sinter's SentencePiece module"), std::string::npos) << message;
  }
}

TEST_F(SentencePieceLoaderTest, OneModelFromSeveralThreadsAgreesWithSpmEncode) {
  const sinter::text::testing::SpieceTestModel model;
  const SentencePieceModel spm(model.file().string());
  EXPECT_TRUE(fs::equivalent(spm.modulePath(), sinter::text::sentencePieceModuleCandidates().front()));
  const std::vector<std::string> texts{"a photo of a cat", "two dogs in the snow", "zebra xylophone", ""};
  std::vector<std::vector<int>> expected;
  for (const std::string& t : texts) expected.push_back(model.spmEncode(t));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round)
        for (size_t i = 0; i < texts.size(); ++i) mismatches[t] += spm.encode(texts[i]) != expected[i];
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  // More pieces than the loader's first guess (one per two bytes): it asks again with room for all.
  const std::string longText(5000, 'x');
  EXPECT_EQ(spm.encode(longText), model.spmEncode(longText));
}
