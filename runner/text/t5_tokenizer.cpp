#include "text/t5_tokenizer.h"

#include <algorithm>
#include <filesystem>

#if SINTER_WITH_SENTENCEPIECE
#include <sentencepiece_processor.h>
#endif

namespace sinter::text {

namespace fs = std::filesystem;

bool t5TokenizerCompiledIn() { return SINTER_WITH_SENTENCEPIECE != 0; }

std::string findT5TokenizerModel(const std::string& location) {
  const fs::path root(location);
  if (fs::is_regular_file(root)) return root.string();
  std::vector<fs::path> candidates{root / "spiece.model"};
  // A Hugging Face cache: <cache>/models--google--t5-v1_1-xxl/snapshots/<revision>/spiece.model
  for (const fs::path& repo : {root, root / "models--google--t5-v1_1-xxl"}) {
    const fs::path snapshots = repo / "snapshots";
    std::error_code ec;
    if (!fs::is_directory(snapshots, ec)) continue;
    std::vector<fs::path> revisions;
    for (const auto& entry : fs::directory_iterator(snapshots, ec)) revisions.push_back(entry.path());
    std::sort(revisions.begin(), revisions.end());
    for (const fs::path& r : revisions) candidates.push_back(r / "spiece.model");
  }
  for (const fs::path& c : candidates)
    if (fs::is_regular_file(c)) return c.string();
  std::string looked;
  for (const fs::path& c : candidates) looked += "\n  " + c.string();
  throw T5TokenizerError("t5_tokenizer: no spiece.model at '" + location + "'; looked for:" + looked);
}

#if SINTER_WITH_SENTENCEPIECE

struct T5Tokenizer::Processor {
  sentencepiece::SentencePieceProcessor sp;
};

T5Tokenizer::T5Tokenizer(const std::string& location)
    : processor_(std::make_unique<Processor>()), modelPath_(findT5TokenizerModel(location)) {
  const auto status = processor_->sp.Load(modelPath_);
  if (!status.ok()) throw T5TokenizerError("t5_tokenizer: cannot read " + modelPath_ + ": " + status.ToString());
}

std::vector<int> T5Tokenizer::pieces(const std::string& text) const {
  std::vector<int> ids;
  const auto status = processor_->sp.Encode(text, &ids);
  if (!status.ok()) throw T5TokenizerError("t5_tokenizer: cannot encode '" + text + "': " + status.ToString());
  return ids;
}

#else

struct T5Tokenizer::Processor {};

T5Tokenizer::T5Tokenizer(const std::string& location) : modelPath_(findT5TokenizerModel(location)) {
  throw T5TokenizerError("t5_tokenizer: this build has no SentencePiece (configure with -DSINTER_WITH_SENTENCEPIECE=ON and "
                         "Debian's libsentencepiece-dev), so it cannot read " + modelPath_);
}

std::vector<int> T5Tokenizer::pieces(const std::string&) const {
  throw T5TokenizerError("t5_tokenizer: this build has no SentencePiece");
}

#endif

T5Tokenizer::~T5Tokenizer() = default;
T5Tokenizer::T5Tokenizer(T5Tokenizer&&) noexcept = default;
T5Tokenizer& T5Tokenizer::operator=(T5Tokenizer&&) noexcept = default;

int64_t T5Tokens::tokens(int64_t b) const {
  int64_t n = 0;
  for (int64_t i = 0; i < length; ++i) n += mask[static_cast<size_t>(b * length + i)];
  return n;
}

T5Tokens T5Tokenizer::encode(const std::vector<std::string>& captions, int64_t maxLength) const {
  if (maxLength < 1) throw T5TokenizerError("t5xxl_max_token_length must be at least 1, got " + std::to_string(maxLength));
  T5Tokens t;
  t.batch = static_cast<int64_t>(captions.size());
  t.length = maxLength;
  t.ids.assign(static_cast<size_t>(t.batch * maxLength), kPadId);
  t.mask.assign(static_cast<size_t>(t.batch * maxLength), 0);
  for (int64_t b = 0; b < t.batch; ++b) {
    std::vector<int> p = pieces(captions[static_cast<size_t>(b)]);
    // Truncation keeps room for "</s>", as the tokenizer's special-token post-processing does.
    if (static_cast<int64_t>(p.size()) > maxLength - 1) p.resize(static_cast<size_t>(maxLength - 1));
    p.push_back(kEosId);
    for (size_t i = 0; i < p.size(); ++i) {
      t.ids[static_cast<size_t>(b * maxLength) + i] = p[i];
      t.mask[static_cast<size_t>(b * maxLength) + i] = 1;
    }
  }
  return t;
}

}  // namespace sinter::text
