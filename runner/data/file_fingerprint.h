#pragma once
// What identifies an image file's content cheaply for cache reuse: size and modification time.
#include <string>

namespace sinter::data {

struct FileFingerprint {
  unsigned long long size = 0;
  long long mtimeNs = 0;
  std::string toString() const { return std::to_string(size) + ":" + std::to_string(mtimeNs); }
};

// Throws std::runtime_error naming the path when the file cannot be inspected.
FileFingerprint fingerprintOf(const std::string& path);

}  // namespace sinter::data
