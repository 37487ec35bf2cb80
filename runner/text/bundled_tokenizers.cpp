#include "text/bundled_tokenizers.h"

#include "text/hub_cache_tokenizers.h"

#include <filesystem>
#include <stdexcept>
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

std::string tokenizerFolder(const std::string& optionKey, const std::string& configured, const std::string& name) {
  if (!configured.empty()) return configured;
  if (std::optional<std::string> bundled = findBundledTokenizer(name)) return *bundled;
  std::string looked;
  for (const std::string& c : bundledTokenizerCandidates(name)) looked += (looked.empty() ? "" : ", ") + c;
  throw std::runtime_error(optionKey + " is not set and the tokenizer that ships with Sinter is missing (looked in " + looked +
                           "): reinstall Sinter, or point " + optionKey + " at a tokenizer folder");
}

std::string describeTokenizer(const std::string& optionKey, const std::string& folder, const std::string& name) {
  std::error_code ec;
  const std::optional<std::string> bundled = findBundledTokenizer(name);
  if (bundled && fs::equivalent(folder, *bundled, ec)) return optionKey + ": bundled with Sinter (" + folder + ")";
  for (const std::string& root : hubCacheRoots())
    if (folder.rfind(root, 0) == 0) return optionKey + ": the copy sd-scripts downloaded (Hugging Face cache, " + folder + ")";
  return optionKey + ": " + folder;
}

}  // namespace sinter::text
