#pragma once
// UTF-8 validation shared by the config, caption and JSON readers.
#include <cstddef>
#include <string>

namespace sinter {

struct Utf8Problem {
  bool valid = true;
  std::size_t offset = 0;  // byte offset of the first invalid sequence
  int line = 0, column = 0;  // 1-based position of it
};

Utf8Problem checkUtf8(const std::string& bytes);

// Removes a leading UTF-8 byte-order mark (Windows editors write one).
std::string stripUtf8Bom(const std::string& text);

}  // namespace sinter
