#pragma once
// UTF-8 <-> code points. Invalid UTF-8 is an error that says where, so a caption file that is not
// UTF-8 can be reported by name rather than silently mangled.
#include <stdexcept>
#include <string>

namespace sinter::text {

class Utf8Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Utf8Error naming the byte offset of the first malformed sequence.
std::u32string decodeUtf8(const std::string& bytes);
std::string encodeUtf8(const std::u32string& codePoints);
void appendUtf8(std::string& out, char32_t codePoint);

}  // namespace sinter::text
