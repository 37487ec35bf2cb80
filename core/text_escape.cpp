#include "core/text_escape.h"

#include <cstdio>

namespace sinter {

std::string escapeControlCharacters(const std::string& text, bool keepLineBreaks) {
  std::string out;
  for (unsigned char ch : text) {
    if ((ch < 0x20 && !(keepLineBreaks && (ch == '\n' || ch == '\t'))) || ch == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string quoteValue(const std::string& value) { return "\"" + escapeControlCharacters(value, false) + "\""; }

}  // namespace sinter
