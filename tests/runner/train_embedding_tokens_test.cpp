// The one place new embedding tokens are added (train/methods/embedding_tokens.h, issue 58), which
// textual inversion, pivotal tuning and --module_outputs' embedding share: each embedding's ids
// follow the vocabulary in order, each encoder's rows are laid out under its file key, and a token
// the tokenizer has or a token table that does not end where the vocabulary does is refused naming
// the key. Tiny CLIP encoders with the real vocabulary (the bundled CLIP tokenizer), on the CPU.
#include <gtest/gtest.h>

#include <functional>

#include "models/text_encoders/clip_text_model.h"
#include "text/bundled_tokenizers.h"
#include "text/clip_tokenizer.h"
#include "train/base/run_errors.h"
#include "train/methods/embedding_tokens.h"

using namespace sinter;
using namespace sinter::train;

namespace {

text::ClipTokenizer bundledClipTokenizer() { return text::ClipTokenizer::fromPath(text::tokenizerFolder("clip_tokenizer", "", "clip")); }

// SDXL's two encoders at test size: CLIP-L 32 wide, the second 16 wide; `vocabulary` rows each.
struct TwoEncoders {
  models::ClipTextTransformer clipL{nullptr}, clipG{nullptr};
  explicit TwoEncoders(int64_t vocabulary) {
    models::ClipTextConfig l = models::ClipTextConfig::tinyClipL();
    l.vocabSize = vocabulary;
    models::ClipTextConfig g = l;
    g.width = 16;
    g.mlpWidth = 32;
    clipL = models::ClipTextTransformer(l);
    clipG = models::ClipTextTransformer(g);
  }
  TextualInversionTargets targets(text::ClipTokenizer& tokenizer) {
    return TextualInversionTargets{&tokenizer, {{"clip_l", clipL.get()}, {"clip_g", clipG.get()}}};
  }
};

std::string errorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

}  // namespace

// The real vocabulary has short strings ("zz"): the tokens here are longer.
TEST(EmbeddingTokens, IdsFollowTheVocabularyAndEachEncodersRowsAreLaidOut) {
  text::ClipTokenizer tokenizer = bundledClipTokenizer();
  const int32_t first = tokenizer.firstAddedId();
  TwoEncoders encoders(first);
  const std::vector<AddedEmbeddingTokens> added = addEmbeddingTokens(encoders.targets(tokenizer), {{"sinterzz", "sinterzz1"}, {"sinterqq"}}, "embeddings");
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].ids, (std::vector<int32_t>{first, first + 1}));
  EXPECT_EQ(added[1].ids, (std::vector<int32_t>{first + 2}));
  EXPECT_EQ(tokenizer.encode("sinterqq sinterzz sinterzz1"), (std::vector<int32_t>{first + 2, first, first + 1}));
  for (size_t e = 0; e < added.size(); ++e) {
    const int64_t vectors = static_cast<int64_t>(added[e].ids.size());
    ASSERT_EQ(added[e].layout.size(), 2u);
    EXPECT_EQ(added[e].layout[0].key, "clip_l");
    EXPECT_EQ(added[e].layout[0].shape, (std::vector<int64_t>{vectors, 32}));
    EXPECT_EQ(added[e].layout[1].key, "clip_g");
    EXPECT_EQ(added[e].layout[1].shape, (std::vector<int64_t>{vectors, 16}));
  }
}

TEST(EmbeddingTokens, ATokenTheTokenizerHasOrAnotherModelsTableIsRefusedNamingTheKey) {
  {
    text::ClipTokenizer tokenizer = bundledClipTokenizer();
    TwoEncoders encoders(tokenizer.firstAddedId());
    const std::string error = errorOf([&] { addEmbeddingTokens(encoders.targets(tokenizer), {{"a"}}, "token_string"); });
    EXPECT_EQ(error.rfind("token_string: the tokenizer (", 0), 0u) << error;
    EXPECT_NE(error.find("already has the token \"a\"; choose a token_string it does not have"), std::string::npos) << error;
  }
  {
    text::ClipTokenizer tokenizer = bundledClipTokenizer();
    TwoEncoders encoders(49000);  // a table of another vocabulary than the tokenizer's
    const std::string error = errorOf([&] { addEmbeddingTokens(encoders.targets(tokenizer), {{"sinterzz"}}, "embeddings"); });
    EXPECT_EQ(error.rfind("embeddings: the tokenizer (", 0), 0u) << error;
    EXPECT_NE(error.find("ends at id " + std::to_string(tokenizer.firstAddedId() - 1) +
                         " but the clip_l text encoder's token table has 49000 rows"),
              std::string::npos)
        << error;
  }
}
