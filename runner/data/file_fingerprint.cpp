#include "data/file_fingerprint.h"

#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace sinter::data {

FileFingerprint fingerprintOf(const std::string& path) {
  std::error_code ec;
  FileFingerprint f;
  f.size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error(path + ": " + ec.message());
  const auto t = std::filesystem::last_write_time(path, ec);
  if (ec) throw std::runtime_error(path + ": " + ec.message());
  f.mtimeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  return f;
}

}  // namespace sinter::data
