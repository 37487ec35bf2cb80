#pragma once
// UTF-8 checks for caption files and configs (sd-scripts reads them as UTF-8 and fails otherwise).
#include <string>

namespace sinter::data {

// Byte offset of the first invalid UTF-8 sequence, or std::string::npos when valid.
size_t findInvalidUtf8(const std::string& bytes);
// Removes a leading UTF-8 byte-order mark.
std::string stripUtf8Bom(const std::string& text);

}  // namespace sinter::data
