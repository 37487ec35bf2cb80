// The CLIP tokenizer on the real CLIP vocabulary that ships with Sinter (resources/tokenizers/clip,
// found as the runner finds it: share/sinter/tokenizers beside bin/): ids against the reference
// encodings (tests/data/tokenizers/clip_reference.jsonl), text cleaning, special tokens, padding, truncation and sd-scripts'
// max_token_length chunks, and the file layouts it is found in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "text/bundled_tokenizers.h"
#include "text/clip_token_chunks.h"
#include "text/clip_tokenizer.h"
#include "text/utf8.h"

namespace fs = std::filesystem;
using sinter::text::ClipPadding;
using sinter::text::ClipTokenizer;
using sinter::text::ClipTokenizerError;
using sinter::text::clipTokenChunks;
using Ids = std::vector<int32_t>;

namespace {

const fs::path kClipDir = sinter::text::findBundledTokenizer("clip").value_or("bundled CLIP tokenizer not found");
const fs::path kReferenceEncodings = fs::path(SINTER_TEST_DATA_DIR) / "tokenizers" / "clip_reference.jsonl";
constexpr int32_t kBos = 49406, kEos = 49407, kCat = 2368;

const ClipTokenizer& tokenizer() {
  static const ClipTokenizer instance = ClipTokenizer::fromPath(kClipDir.string());
  return instance;
}

Ids withSpecials(const Ids& ids) {
  Ids out{kBos};
  out.insert(out.end(), ids.begin(), ids.end());
  out.push_back(kEos);
  return out;
}

std::string repeated(const std::string& word, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += word + " ";
  return text;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / ("sinter_text_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void writeFile(const fs::path& file, const std::string& content) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

std::string readFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// The build copies the bundled files beside bin/ (as an install does under its prefix), and that
// copy, relative to the running binary, is the one found.
TEST(ClipTokenizerFiles, BundledFilesAreFoundBesideTheBinary) {
  const std::vector<std::string> candidates = sinter::text::bundledTokenizerCandidates("clip");
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(fs::path(candidates[0]).lexically_relative(fs::read_symlink("/proc/self/exe").parent_path()),
            fs::path("../share/sinter/tokenizers/clip"));
  EXPECT_EQ(kClipDir, fs::path(candidates[0]));
  EXPECT_TRUE(fs::is_regular_file(kClipDir / "vocab.json"));
  EXPECT_TRUE(fs::is_regular_file(kClipDir / "merges.txt"));
  EXPECT_TRUE(fs::is_regular_file(kClipDir / "LICENSE"));
  EXPECT_FALSE(sinter::text::findBundledTokenizer("no_such_tokenizer").has_value());
}

TEST(ClipTokenizer, SpecialTokenIdsComeFromTheVocabulary) {
  EXPECT_EQ(tokenizer().bosId(), kBos);
  EXPECT_EQ(tokenizer().eosId(), kEos);
}

TEST(ClipTokenizer, KnownEncoding) {
  EXPECT_EQ(tokenizer().encode("a photo of a cat"), (Ids{320, 1125, 539, 320, 2368}));
}

TEST(ClipTokenizer, MatchesEveryReferenceEncoding) {
  std::ifstream in(kReferenceEncodings);
  ASSERT_TRUE(in) << "missing reference.jsonl";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto entry = nlohmann::json::parse(line);
    const std::string text = entry["text"];
    EXPECT_EQ(withSpecials(tokenizer().encode(text)), entry["ids"].get<Ids>()) << "text: " << text;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(ClipTokenizer, CleansTextLikeFtfyAndWhitespaceClean) {
  const Ids expected = tokenizer().encode("a photo of a cat");
  EXPECT_EQ(tokenizer().encode("A\u00a0PHOTO\u3000of\t\t a\r\n\v cat \u2029"), expected);  // odd white space
  EXPECT_EQ(tokenizer().encode("\uff21 photo of a cat"), expected);  // full-width A
  // NFC: e + combining acute is the same as the precomposed é.
  EXPECT_EQ(tokenizer().encode("cafe\u0301"), tokenizer().encode("caf\u00e9"));
  EXPECT_EQ(tokenizer().encode("\u201cquoted\u201d it\u2019s"), tokenizer().encode("\"quoted\" it's"));
  EXPECT_EQ(tokenizer().encode("tom &amp; jerry &#33;"), tokenizer().encode("tom & jerry !"));
  EXPECT_EQ(tokenizer().encode("\ufb01ne"), tokenizer().encode("fine"));  // ligature fi
  EXPECT_EQ(tokenizer().encode("a\x01 b\x7f"), tokenizer().encode("a b"));
  EXPECT_TRUE(tokenizer().encode("   \t\n ").empty());
}

TEST(ClipTokenizer, PreTokenizerPiecesBehaveAsTheRegex) {
  // Contractions split off; runs of punctuation stay together; digits are single pieces.
  EXPECT_EQ(tokenizer().encode("it's"), (Ids{585, 568}));
  const Ids digits = tokenizer().encode("2024");
  ASSERT_EQ(digits.size(), 4u);
  EXPECT_EQ(digits, (Ids{273, 271, 273, 275}));
  EXPECT_EQ(tokenizer().encode("cat!!!"), [] {
    Ids ids = tokenizer().encode("cat");
    const Ids bang = tokenizer().encode("!!!");
    ids.insert(ids.end(), bang.begin(), bang.end());
    return ids;
  }());
  // Non-Latin letters are letters: one piece, no split at every character.
  const Ids greek = tokenizer().encode("\u03b3\u03ac\u03c4\u03b1");
  EXPECT_FALSE(greek.empty());
  EXPECT_EQ(tokenizer().encode("\u0393\u0386\u03a4\u0391"), greek);  // upper case lower-cased
  // Emoji are byte-level encoded, never unknown.
  EXPECT_FALSE(tokenizer().encode("\U0001F431").empty());
}

TEST(ClipTokenizer, SpecialTokensWrittenInTheText) {
  EXPECT_EQ(tokenizer().encode("cat<|endoftext|>"), (Ids{kCat, kEos}));
  EXPECT_EQ(tokenizer().encode("<|startoftext|> cat"), (Ids{kBos, kCat}));
}

TEST(ClipTokenizer, RejectsTextThatIsNotUtf8) {
  EXPECT_THROW(tokenizer().encode("caf\xe9"), sinter::text::Utf8Error);
  EXPECT_THROW(tokenizer().encode("\xc0\xaf"), sinter::text::Utf8Error);  // overlong '/'
}

TEST(ClipTokenChunks, PadsToContextLength) {
  const auto clipL = clipTokenChunks(tokenizer(), "a photo of a cat", ClipPadding::EndOfText, 0);
  ASSERT_EQ(clipL.size(), 1u);
  ASSERT_EQ(clipL[0].size(), 77u);
  EXPECT_EQ(Ids(clipL[0].begin(), clipL[0].begin() + 7), (Ids{kBos, 320, 1125, 539, 320, 2368, kEos}));
  for (std::size_t i = 7; i < 77; ++i) EXPECT_EQ(clipL[0][i], kEos);

  const auto bigG = clipTokenChunks(tokenizer(), "a photo of a cat", ClipPadding::Zero, 0);
  ASSERT_EQ(bigG.size(), 1u);
  EXPECT_EQ(bigG[0][6], kEos);
  for (std::size_t i = 7; i < 77; ++i) EXPECT_EQ(bigG[0][i], 0);
}

TEST(ClipTokenChunks, TruncatesLongTextTo75Tokens) {
  const std::string text = repeated("cat", 100);
  for (ClipPadding padding : {ClipPadding::EndOfText, ClipPadding::Zero}) {
    const auto chunks = clipTokenChunks(tokenizer(), text, padding, 0);
    ASSERT_EQ(chunks.size(), 1u);
    Ids expected(77, kCat);
    expected.front() = kBos;
    expected.back() = kEos;
    EXPECT_EQ(chunks[0], expected);
  }
}

TEST(ClipTokenChunks, MaxTokenLength150ClipL) {
  const auto chunks = clipTokenChunks(tokenizer(), repeated("cat", 100), ClipPadding::EndOfText, 150);
  ASSERT_EQ(chunks.size(), 2u);
  Ids first(77, kCat);
  first.front() = kBos;
  first.back() = kEos;
  EXPECT_EQ(chunks[0], first);
  Ids second(77, kEos);
  second[0] = kBos;
  for (int i = 1; i <= 25; ++i) second[i] = kCat;
  EXPECT_EQ(chunks[1], second);
}

TEST(ClipTokenChunks, MaxTokenLength225BigG) {
  const auto chunks = clipTokenChunks(tokenizer(), repeated("cat", 100), ClipPadding::Zero, 225);
  ASSERT_EQ(chunks.size(), 3u);
  for (const auto& chunk : chunks) ASSERT_EQ(chunk.size(), 77u);
  // Text filling the first chunk to its end gets an eos in place of the sequence's last id (a pad).
  Ids first(77, kCat);
  first.front() = kBos;
  first.back() = kEos;
  EXPECT_EQ(chunks[0], first);
  // The second: 25 tokens, the sequence's eos, then pads.
  Ids second(77, 0);
  second[0] = kBos;
  for (int i = 1; i <= 25; ++i) second[i] = kCat;
  second[26] = kEos;
  EXPECT_EQ(chunks[1], second);
  // The third holds no text: bos, eos, pads.
  Ids third(77, 0);
  third[0] = kBos;
  third[1] = kEos;
  EXPECT_EQ(chunks[2], third);
}

TEST(ClipTokenChunks, TextEndingAtAChunkBoundary) {
  const Ids tokens(75, kCat);
  const auto bigG = clipTokenChunks(tokens, kBos, kEos, ClipPadding::Zero, 150);
  ASSERT_EQ(bigG.size(), 2u);
  EXPECT_EQ(bigG[0].back(), kEos);
  Ids empty(77, 0);
  empty[0] = kBos;
  empty[1] = kEos;
  EXPECT_EQ(bigG[1], empty);

  const auto clipL = clipTokenChunks(tokens, kBos, kEos, ClipPadding::EndOfText, 150);
  Ids allEos(77, kEos);
  allEos[0] = kBos;
  EXPECT_EQ(clipL[1], allEos);
}

TEST(ClipTokenChunks, LongerThanMaxTokenLengthIsTruncated) {
  const auto chunks = clipTokenChunks(Ids(300, kCat), kBos, kEos, ClipPadding::Zero, 225);
  ASSERT_EQ(chunks.size(), 3u);
  Ids full(77, kCat);
  full.front() = kBos;
  full.back() = kEos;
  for (const auto& chunk : chunks) EXPECT_EQ(chunk, full);
}

TEST(ClipTokenChunks, RealLongCaptionSplitsIntoChunks) {
  // 22 x "a photo of a cat, " is 132 tokens: 75 in the first chunk, 57 in the second.
  const std::string caption = repeated("a photo of a cat,", 22);
  const Ids tokens = tokenizer().encode(caption);
  ASSERT_EQ(tokens.size(), 132u);
  const auto both = sinter::text::sdxlTokenChunks(tokenizer(), caption, 150);
  ASSERT_EQ(both.clipL.size(), 2u);
  ASSERT_EQ(both.bigG.size(), 2u);
  EXPECT_EQ(both.clipL, clipTokenChunks(tokenizer(), caption, ClipPadding::EndOfText, 150));
  EXPECT_EQ(both.bigG, clipTokenChunks(tokenizer(), caption, ClipPadding::Zero, 150));
  for (const auto* chunks : {&both.clipL, &both.bigG}) {
    Ids text((*chunks)[0].begin() + 1, (*chunks)[0].begin() + 76);
    text.insert(text.end(), (*chunks)[1].begin() + 1, (*chunks)[1].begin() + 58);
    EXPECT_EQ(text, tokens);
    EXPECT_EQ((*chunks)[0].front(), kBos);
    EXPECT_EQ((*chunks)[0].back(), kEos);  // text runs to the end of the first chunk
    EXPECT_EQ((*chunks)[1][58], kEos);
  }
  EXPECT_EQ(both.clipL[1].back(), kEos);
  EXPECT_EQ(both.bigG[1].back(), 0);
  EXPECT_EQ(both.bigG[1][59], 0);
}

TEST(ClipTokenChunks, RejectsOtherLengths) {
  EXPECT_THROW(clipTokenChunks(Ids{kCat}, kBos, kEos, ClipPadding::Zero, 100), std::invalid_argument);
  EXPECT_EQ(clipTokenChunks(Ids{kCat}, kBos, kEos, ClipPadding::Zero, 75).size(), 1u);
}

TEST(ClipTokenizerFiles, FindsTheFilesInUsualLayouts) {
  TempDir dir("layouts");
  const std::string vocab = readFile(kClipDir / "vocab.json"), merges = readFile(kClipDir / "merges.txt");
  const Ids expected = tokenizer().encode("portrait of a woman, art nouveau");

  // Hugging Face cache: <cache>/models--openai--clip-vit-large-patch14/snapshots/<rev>/
  const fs::path repo = dir.path / "hub" / "models--openai--clip-vit-large-patch14";
  writeFile(repo / "refs" / "main", "abc123");
  writeFile(repo / "snapshots" / "abc123" / "vocab.json", vocab);
  writeFile(repo / "snapshots" / "abc123" / "merges.txt", merges);
  EXPECT_EQ(ClipTokenizer::fromPath(dir.path.string()).encode("portrait of a woman, art nouveau"), expected);
  EXPECT_EQ(ClipTokenizer::fromPath((dir.path / "hub").string()).encode("portrait of a woman, art nouveau"), expected);
  EXPECT_EQ(ClipTokenizer::fromPath(repo.string()).encode("portrait of a woman, art nouveau"), expected);

  // A diffusers model folder with tokenizer/
  const fs::path diffusers = dir.path / "sdxl-diffusers";
  writeFile(diffusers / "tokenizer" / "vocab.json", vocab);
  writeFile(diffusers / "tokenizer" / "merges.txt", merges);
  EXPECT_EQ(ClipTokenizer::fromPath(diffusers.string()).encode("portrait of a woman, art nouveau"), expected);
  // The vocab.json file itself
  EXPECT_EQ(ClipTokenizer::fromPath((diffusers / "tokenizer" / "vocab.json").string()).encode("portrait of a woman, art nouveau"),
            expected);
}

TEST(ClipTokenizerFiles, ReadsTokenizerJson) {
  TempDir dir("tokenizer_json");
  const auto vocab = nlohmann::json::parse(readFile(kClipDir / "vocab.json"));
  std::istringstream mergeLines(readFile(kClipDir / "merges.txt"));
  nlohmann::json merges = nlohmann::json::array(), pairMerges = nlohmann::json::array();
  std::string line;
  std::getline(mergeLines, line);  // #version
  while (std::getline(mergeLines, line)) {
    if (line.empty()) continue;
    merges.push_back(line);
    const auto space = line.find(' ');
    pairMerges.push_back({line.substr(0, space), line.substr(space + 1)});
  }
  nlohmann::json root = {{"version", "1.0"}, {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
  writeFile(dir.path / "old" / "tokenizer.json", root.dump());
  root["model"]["merges"] = pairMerges;
  writeFile(dir.path / "new" / "tokenizer.json", root.dump());
  const std::string text = "supercalifragilisticexpialidocious, caf\u00e9";
  const Ids expected = tokenizer().encode(text);
  EXPECT_EQ(ClipTokenizer::fromPath((dir.path / "old").string()).encode(text), expected);
  EXPECT_EQ(ClipTokenizer::fromPath((dir.path / "new" / "tokenizer.json").string()).encode(text), expected);
}

TEST(ClipTokenizerFiles, ClearErrorsForMissingOrInvalidFiles) {
  TempDir dir("errors");
  auto expectError = [](const fs::path& path, const std::string& fragment) {
    try {
      ClipTokenizer::fromPath(path.string());
      ADD_FAILURE() << "no error for " << path;
    } catch (const ClipTokenizerError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expectError(dir.path / "nowhere", "does not exist");
  expectError(dir.path, "no CLIP tokenizer files");

  writeFile(dir.path / "only_vocab" / "vocab.json", "{}");
  expectError(dir.path / "only_vocab", "no merges.txt");

  writeFile(dir.path / "bad_json" / "vocab.json", "{\"a\": 1,");
  writeFile(dir.path / "bad_json" / "merges.txt", "#version: 0.2\na b\n");
  expectError(dir.path / "bad_json", "vocab.json' is not valid JSON");

  writeFile(dir.path / "bad_merge" / "vocab.json", "{\"a\": 0, \"<|startoftext|>\": 1, \"<|endoftext|>\": 2}");
  writeFile(dir.path / "bad_merge" / "merges.txt", "#version: 0.2\na b\nabc\n");
  expectError(dir.path / "bad_merge", "merges.txt line 3");

  writeFile(dir.path / "no_specials" / "vocab.json", "{\"a\": 0, \"b\": 1}");
  writeFile(dir.path / "no_specials" / "merges.txt", "#version: 0.2\na b\n");
  expectError(dir.path / "no_specials", "no <|startoftext|> token");

  writeFile(dir.path / "bad_id" / "vocab.json", "{\"a\": \"zero\"}");
  writeFile(dir.path / "bad_id" / "merges.txt", "a b\n");
  expectError(dir.path / "bad_id", "token 'a' has id \"zero\"");

  writeFile(dir.path / "unigram" / "tokenizer.json", "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}");
  expectError(dir.path / "unigram", "model.type is \"Unigram\"");
}

// The folder a run reads: the given one wins; unset is the bundled one; neither is an error naming the
// option and where it looked.
TEST(ClipTokenizerFiles, TokenizerFolderPrefersTheGivenOne) {
  EXPECT_EQ(sinter::text::tokenizerFolder("clip_tokenizer", "/my/tokenizer", "clip"), "/my/tokenizer");
  EXPECT_EQ(fs::path(sinter::text::tokenizerFolder("clip_tokenizer", "", "clip")), kClipDir);
  try {
    sinter::text::tokenizerFolder("t9_tokenizer", "", "no_such_tokenizer");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t9_tokenizer is not set"), std::string::npos) << what;
    EXPECT_NE(what.find("share/sinter/tokenizers/no_such_tokenizer"), std::string::npos) << what;
  }
  EXPECT_EQ(sinter::text::describeTokenizer("clip_tokenizer", kClipDir.string(), "clip"),
            "clip_tokenizer: bundled with Sinter (" + kClipDir.string() + ")");
  EXPECT_EQ(sinter::text::describeTokenizer("clip_tokenizer", "/my/tokenizer", "clip"), "clip_tokenizer: /my/tokenizer");
}
