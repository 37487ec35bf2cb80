#pragma once
// User text inside messages: control characters (a NUL from "\u0000" in a TOML string, a line
// break) written as \xNN, so what is printed is what the file holds and stays on its line.
#include <string>

namespace sinter {

// Line breaks and tabs are kept when `keepLineBreaks` (multi-line messages).
std::string escapeControlCharacters(const std::string& text, bool keepLineBreaks);
// A user's value for a message: in double quotes, on one line.
std::string quoteValue(const std::string& value);

}  // namespace sinter
