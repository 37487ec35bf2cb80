#include "train/loop/run_folders.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "train/base/run_errors.h"

namespace sinter::train {

namespace fs = std::filesystem;

const std::vector<std::string>& foldersTheRunCreates() {
  static const std::vector<std::string> keys{"output_dir", "logging_dir"};
  return keys;
}

std::optional<std::string> whyFolderCannotBeCreated(const std::string& key, const std::string& dir) {
  std::error_code ec;
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path()) existing = existing.parent_path();
  struct stat st {};
  if (::stat(existing.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return key + " '" + dir + "' cannot be created: '" + existing.string() + "' is not a folder";
  if (::access(existing.c_str(), W_OK) != 0)
    return key + " '" + dir + "' cannot be written: '" + existing.string() + "' is not writable";
  return std::nullopt;
}

void createRunFolder(const std::string& key, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(key + " '" + dir + "' cannot be created: " + ec.message());
  const fs::path probe = fs::path(dir) / (".sinter-write-test-" + std::to_string(::getpid()));
  FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw InputError(key + " '" + dir + "' is not writable: " + std::error_code(errno, std::generic_category()).message());
  std::fclose(f);
  fs::remove(probe, ec);
}

}  // namespace sinter::train
