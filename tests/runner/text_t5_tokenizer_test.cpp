// T5's tokenizer against SentencePiece's own command-line encoder: a small unigram model made at
// test time with Debian's spm_train (spiece_test_model.h), the same text encoded by spm_encode and
// by the runner; then "</s>", padding, truncation, the mask and errors. The SentencePiece tests
// run in every build with SentencePiece (the default) and skip only in one configured without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "spiece_test_model.h"
#include "text/t5_tokenizer.h"

namespace fs = std::filesystem;
using sinter::text::T5Tokenizer;
using sinter::text::T5TokenizerError;

namespace {

class T5TokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sinter::text::t5TokenizerCompiledIn()) GTEST_SKIP() << "configured with -DSINTER_WITH_SENTENCEPIECE=OFF";
    model = std::make_unique<sinter::text::testing::SpieceTestModel>();
    dir = model->dir();
  }
  std::vector<int> spmEncode(const std::string& text) { return model->spmEncode(text); }
  std::unique_ptr<sinter::text::testing::SpieceTestModel> model;
  fs::path dir;
};

}  // namespace

TEST_F(T5TokenizerTest, PiecesAreSentencePiecesOwn) {
  const T5Tokenizer tokenizer((dir / "model").string());  // the folder holding spiece.model
  for (const char* text : {"a photo of a cat", "The Quick brown FOX, jumping!", "sks person in a garden at sunset",
                           "zebra xylophone"}) {
    const std::vector<int> expected = spmEncode(text);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(tokenizer.pieces(text), expected) << text;
  }
}

TEST_F(T5TokenizerTest, EosPaddingTruncationAndMask) {
  const T5Tokenizer tokenizer((dir / "model" / "spiece.model").string());  // the file itself
  const std::vector<int> cat = spmEncode("a photo of a cat");
  const int64_t n = static_cast<int64_t>(cat.size());
  const sinter::text::T5Tokens t = tokenizer.encode({"a photo of a cat", ""}, n + 3);
  ASSERT_EQ(t.batch, 2);
  ASSERT_EQ(t.length, n + 3);
  ASSERT_EQ(t.ids.size(), static_cast<size_t>(2 * (n + 3)));
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(t.id(0, i), cat[static_cast<size_t>(i)]);
  EXPECT_EQ(t.id(0, n), 1);  // </s>
  EXPECT_EQ(t.id(0, n + 1), 0);
  EXPECT_EQ(t.tokens(0), n + 1);
  EXPECT_EQ(t.id(1, 0), 1);  // an empty caption is "</s>" alone
  EXPECT_EQ(t.tokens(1), 1);
  // Truncated to max_length with "</s>" kept last.
  const sinter::text::T5Tokens cut = tokenizer.encode({"a photo of a cat"}, 3);
  EXPECT_EQ(cut.id(0, 0), cat[0]);
  EXPECT_EQ(cut.id(0, 1), cat[1]);
  EXPECT_EQ(cut.id(0, 2), 1);
  EXPECT_EQ(cut.tokens(0), 3);
}

// Finding spiece.model needs no SentencePiece: a folder, the file, a Hugging Face cache.
TEST(T5TokenizerModel, FoundInAFolderAFileOrAHuggingFaceCacheWithWhereItLooked) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_t5_find_" + std::to_string(::getpid()));
  const fs::path snapshot = dir / "hub" / "models--google--t5-v1_1-xxl" / "snapshots" / "abc123";
  fs::create_directories(snapshot);
  fs::create_directories(dir / "folder");
  std::ofstream(snapshot / "spiece.model") << "model";
  std::ofstream(dir / "folder" / "spiece.model") << "model";
  EXPECT_EQ(sinter::text::findT5TokenizerModel((dir / "hub").string()), (snapshot / "spiece.model").string());
  EXPECT_EQ(sinter::text::findT5TokenizerModel((dir / "hub" / "models--google--t5-v1_1-xxl").string()),
            (snapshot / "spiece.model").string());
  EXPECT_EQ(sinter::text::findT5TokenizerModel((dir / "folder").string()), (dir / "folder" / "spiece.model").string());
  EXPECT_EQ(sinter::text::findT5TokenizerModel((dir / "folder" / "spiece.model").string()),
            (dir / "folder" / "spiece.model").string());
  try {
    sinter::text::findT5TokenizerModel((dir / "nowhere").string());
    FAIL() << "a missing tokenizer was accepted";
  } catch (const T5TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("nowhere/spiece.model"), std::string::npos) << e.what();
  }
  // A build without SentencePiece says so, naming the model it was given.
  if (!sinter::text::t5TokenizerCompiledIn()) {
    try {
      T5Tokenizer tokenizer((dir / "folder").string());
      FAIL() << "tokenizing without SentencePiece";
    } catch (const T5TokenizerError& e) {
      EXPECT_NE(std::string(e.what()).find("no SentencePiece"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("folder/spiece.model"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST_F(T5TokenizerTest, AnUnreadableModelIsAnError) {
  std::ofstream(dir / "bad.model") << "not a sentencepiece model";
  try {
    T5Tokenizer tokenizer((dir / "bad.model").string());
    FAIL() << "an unreadable model was accepted";
  } catch (const T5TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read " + (dir / "bad.model").string()), std::string::npos) << e.what();
  }
  // The tokenizer still reads a good model afterwards.
  EXPECT_EQ(T5Tokenizer(dir.string() + "/model").pieces("a cat"), spmEncode("a cat"));
}
