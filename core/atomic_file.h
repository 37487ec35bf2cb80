#pragma once
// Atomic file writes: a crash leaves either the old file or the new one, never half of one.
#include <string>

namespace sinter {

// Writes `bytes` to a temporary file beside `path`, flushes it to disk and renames it over `path`.
// Throws std::runtime_error naming the path and the system's reason.
void writeFileAtomically(const std::string& path, const std::string& bytes);

// Reads a whole file; throws std::runtime_error naming the path on failure.
std::string readWholeFile(const std::string& path);

}  // namespace sinter
