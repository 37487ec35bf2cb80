// T5's tokenizer against SentencePiece's own command-line encoder: a small unigram model made at
// test time with Debian's spm_train (T5's special ids: pad 0, </s> 1, unk 2), the same text
// encoded by spm_encode and by the runner; then "</s>", padding, truncation, the mask and errors.
// The SentencePiece tests need a build with -DSINTER_WITH_SENTENCEPIECE=ON (off by default:
// runner/CMakeLists.txt says why) and Debian's sentencepiece tools; they skip, saying so, otherwise.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "text/t5_tokenizer.h"

namespace fs = std::filesystem;
using sinter::text::T5Tokenizer;
using sinter::text::T5TokenizerError;

namespace {

std::string output(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

class T5TokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sinter::text::t5TokenizerCompiledIn()) GTEST_SKIP() << "this build has no SentencePiece";
    if (std::system("command -v spm_train >/dev/null 2>&1 && command -v spm_encode >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "Debian's sentencepiece tools (spm_train, spm_encode) are not installed";
    dir = fs::temp_directory_path() / ("sinter_t5_tok_" + std::to_string(::getpid()));
    fs::create_directories(dir / "model");
    std::ofstream corpus(dir / "corpus.txt");
    const char* lines[] = {"a photo of a cat sitting on a red chair", "a painting of a dog in the snow",
                           "the quick brown fox jumps over the lazy dog", "a close-up photo of a blue flower",
                           "an old castle on a hill at sunset", "two cats and a dog playing in the garden",
                           "a watercolor painting of mountains and a lake", "sks person wearing a hat, smiling"};
    for (int repeat = 0; repeat < 20; ++repeat)
      for (const char* l : lines) corpus << l << "\n";
    corpus.close();
    const std::string train = "spm_train --input=" + (dir / "corpus.txt").string() + " --model_prefix=" +
                              (dir / "model" / "spiece").string() +
                              " --vocab_size=90 --model_type=unigram --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 "
                              "--hard_vocab_limit=false >/dev/null 2>&1";
    ASSERT_EQ(std::system(train.c_str()), 0);
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  std::vector<int> spmEncode(const std::string& text) {
    std::ofstream(dir / "in.txt") << text << "\n";
    std::istringstream ids(output("spm_encode --model=" + (dir / "model" / "spiece.model").string() +
                                  " --output_format=id < " + (dir / "in.txt").string()));
    std::vector<int> out;
    for (int id; ids >> id;) out.push_back(id);
    return out;
  }
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
    }
  }
  fs::remove_all(dir);
}

TEST_F(T5TokenizerTest, AnUnreadableModelIsAnError) {
  std::ofstream(dir / "bad.model") << "not a sentencepiece model";
  EXPECT_THROW(T5Tokenizer((dir / "bad.model").string()), T5TokenizerError);
}
