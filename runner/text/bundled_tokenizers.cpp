#include "text/bundled_tokenizers.h"

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace sinter::text {

std::vector<std::string> bundledTokenizerCandidates(const std::string& name) {
  std::vector<std::string> candidates;
  std::error_code ec;
  const fs::path exeDir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec) candidates.push_back((exeDir / SINTER_BUNDLED_TOKENIZERS_FROM_BINDIR / name).lexically_normal().string());
  candidates.push_back((fs::path(SINTER_BUNDLED_TOKENIZERS_SOURCE_DIR) / name).string());
  return candidates;
}

std::optional<std::string> findBundledTokenizer(const std::string& name) {
  for (const std::string& candidate : bundledTokenizerCandidates(name)) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

}  // namespace sinter::text
