#include "text/t5_tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "text/sentencepiece_loader.h"

namespace sinter::text {

namespace fs = std::filesystem;

bool t5TokenizerCompiledIn() { return sentencePieceModuleBuilt(); }

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

struct T5Tokenizer::Processor {
  SentencePieceModel model;
};

T5Tokenizer::T5Tokenizer(const std::string& location) : modelPath_(findT5TokenizerModel(location)) {
  try {
    processor_ = std::make_unique<Processor>(Processor{SentencePieceModel(modelPath_)});
  } catch (const SentencePieceError& e) {
    throw T5TokenizerError("t5_tokenizer: " + std::string(e.what()));
  }
}

std::vector<int> T5Tokenizer::pieces(const std::string& text) const {
  try {
    return processor_->model.encode(text);
  } catch (const SentencePieceError& e) {
    throw T5TokenizerError("t5_tokenizer: " + std::string(e.what()));
  }
}

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
