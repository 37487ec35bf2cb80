#include "text/utf8.h"

namespace sinter::text {

std::u32string decodeUtf8(const std::string& bytes) {
  std::u32string out;
  out.reserve(bytes.size());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  auto fail = [&](const char* why) {
    throw Utf8Error("text is not valid UTF-8 (" + std::string(why) + " at byte " + std::to_string(i) + ")");
  };
  while (i < n) {
    const unsigned char lead = static_cast<unsigned char>(bytes[i]);
    int length = 0;
    char32_t cp = 0;
    if (lead < 0x80) { out.push_back(lead); ++i; continue; }
    if ((lead & 0xE0) == 0xC0) { length = 2; cp = lead & 0x1F; }
    else if ((lead & 0xF0) == 0xE0) { length = 3; cp = lead & 0x0F; }
    else if ((lead & 0xF8) == 0xF0) { length = 4; cp = lead & 0x07; }
    else fail("invalid lead byte");
    if (i + length > n) fail("truncated sequence");
    for (int k = 1; k < length; ++k) {
      const unsigned char c = static_cast<unsigned char>(bytes[i + k]);
      if ((c & 0xC0) != 0x80) fail("invalid continuation byte");
      cp = (cp << 6) | (c & 0x3F);
    }
    static const char32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kSmallest[length]) fail("overlong encoding");
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail("invalid code point");
    out.push_back(cp);
    i += length;
  }
  return out;
}

void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encodeUtf8(const std::u32string& codePoints) {
  std::string out;
  out.reserve(codePoints.size());
  for (char32_t cp : codePoints) appendUtf8(out, cp);
  return out;
}

}  // namespace sinter::text
