#pragma once
// Where Sinter keeps what it learns about a machine between runs (GEMM tuning results, memory-plan
// corrections): $SINTER_CACHE_DIR, else $XDG_CACHE_HOME/sinter, else ~/.cache/sinter, else the
// temporary folder's sinter/.
#include <cstdlib>
#include <filesystem>

namespace sinter {

inline std::filesystem::path sinterCacheDir() {
  namespace fs = std::filesystem;
  if (const char* own = std::getenv("SINTER_CACHE_DIR"); own && *own) return own;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "sinter";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "sinter";
  return fs::temp_directory_path() / "sinter";
}

}  // namespace sinter
