#include "text/hub_cache_tokenizers.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace fs = std::filesystem;

namespace sinter::text {

namespace {

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool hasAny(const fs::path& folder, const std::vector<std::string>& files) {
  std::error_code ec;
  for (const std::string& f : files)
    if (fs::is_regular_file(folder / f, ec)) return true;
  return false;
}

}  // namespace

std::vector<std::string> hubCacheRoots() {
  std::vector<std::string> roots;
  if (const std::string v = envOr("HF_HUB_CACHE"); !v.empty()) roots.push_back(v);
  if (const std::string v = envOr("HF_HOME"); !v.empty()) roots.push_back((fs::path(v) / "hub").string());
  if (const std::string v = envOr("XDG_CACHE_HOME"); !v.empty()) roots.push_back((fs::path(v) / "huggingface" / "hub").string());
  if (const std::string v = envOr("HOME"); !v.empty())
    roots.push_back((fs::path(v) / ".cache" / "huggingface" / "hub").string());
  return roots;
}

std::optional<std::string> findHubCacheSnapshot(const std::string& repoId, const std::vector<std::string>& files) {
  // huggingface_hub's layout: models--<owner>--<name>/{refs/main, snapshots/<revision>/<file>}.
  std::string folderName = "models--" + repoId;
  for (std::size_t p = 0; (p = folderName.find('/', p)) != std::string::npos;) folderName.replace(p, 1, "--");
  for (const std::string& root : hubCacheRoots()) {
    const fs::path repo = fs::path(root) / folderName;
    std::error_code ec;
    if (!fs::is_directory(repo / "snapshots", ec)) continue;
    std::string revision;
    if (std::ifstream ref(repo / "refs" / "main"); ref) std::getline(ref, revision);
    if (!revision.empty() && hasAny(repo / "snapshots" / revision, files)) return (repo / "snapshots" / revision).string();
    // No usable main ref (a pinned revision was downloaded): the first snapshot, by name, that has the files.
    std::vector<fs::path> snapshots;
    for (const fs::directory_entry& e : fs::directory_iterator(repo / "snapshots", ec))
      if (e.is_directory(ec)) snapshots.push_back(e.path());
    std::sort(snapshots.begin(), snapshots.end());
    for (const fs::path& s : snapshots)
      if (hasAny(s, files)) return s.string();
  }
  return std::nullopt;
}

std::optional<std::string> findCachedT5Tokenizer() {
  return findHubCacheSnapshot(kT5TokenizerRepo, {"spiece.model"});
}

std::string describeT5TokenizerSearch() {
  std::string looked;
  for (const std::string& root : hubCacheRoots()) looked += (looked.empty() ? "" : ", ") + root;
  return std::string(kT5TokenizerRepo) + " in the Hugging Face cache (" + (looked.empty() ? "no cache folder: HOME is not set" : looked) +
         ")";
}

}  // namespace sinter::text
