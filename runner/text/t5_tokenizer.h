#pragma once
// T5's tokenizer as sd-scripts' FLUX strategy calls it (T5TokenizerFast of google/t5-v1_1-xxl,
// max_length padding, truncation): SentencePiece pieces of the caption, "</s>" (id 1) appended,
// truncated to and padded with 0 up to max_length, with the attention mask. Reads the user's
// spiece.model through Debian's libsentencepiece, kept apart from libtorch in a module of its own
// (sentencepiece_loader.h); nothing is downloaded.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinter::text {

class T5TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The spiece.model that `location` names: the file itself, a folder holding it (as the Hugging
// Face google/t5-v1_1-xxl folder does), or a Hugging Face cache (a snapshot of
// models--google--t5-v1_1-xxl under it). T5TokenizerError listing where it looked otherwise.
std::string findT5TokenizerModel(const std::string& location);

// Whether this build has SentencePiece (its module; on unless configured with
// -DSINTER_WITH_SENTENCEPIECE=OFF). A module missing at run time is T5Tokenizer's error.
bool t5TokenizerCompiledIn();

// Row-major [batch, length] (torch::from_blob-ready), as the caching passes hand them to the encoder.
struct T5Tokens {
  int64_t batch = 0, length = 0;
  std::vector<int64_t> ids;   // piece ids, "</s>", then 0
  std::vector<int64_t> mask;  // 1 for the caption's pieces and "</s>", 0 for padding
  int64_t id(int64_t b, int64_t i) const { return ids[static_cast<size_t>(b * length + i)]; }
  int64_t tokens(int64_t b) const;  // the mask's sum for caption b
};

class T5Tokenizer {
 public:
  // `location` as findT5TokenizerModel takes it. T5TokenizerError for a missing or unreadable
  // model, a build without SentencePiece, or its module missing (naming where it looked).
  explicit T5Tokenizer(const std::string& location);
  ~T5Tokenizer();
  T5Tokenizer(T5Tokenizer&&) noexcept;
  T5Tokenizer& operator=(T5Tokenizer&&) noexcept;

  std::vector<int> pieces(const std::string& text) const;  // the caption's piece ids, no "</s>"
  T5Tokens encode(const std::vector<std::string>& captions, int64_t maxLength) const;
  const std::string& modelPath() const { return modelPath_; }

  static constexpr int kPadId = 0;
  static constexpr int kEosId = 1;

 private:
  struct Processor;
  std::unique_ptr<Processor> processor_;
  std::string modelPath_;
};

}  // namespace sinter::text
