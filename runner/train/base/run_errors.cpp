#include "train/base/run_errors.h"

#include <c10/util/Exception.h>

namespace sinter::train {

std::string withoutBacktrace(const std::string& message) {
  // c10::Error::what() is its message, then "\nException raised from <function> at <file>:<line>
  // (most recent call first):\nframe #0: ..." (or, in some builds, the frames alone).
  std::string out = message;
  for (const char* start : {"Exception raised from ", "frame #0: "})
    if (const size_t at = out.find(start); at != std::string::npos) out.erase(at);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string userMessage(const std::exception& e) {
  if (const auto* torchError = dynamic_cast<const c10::Error*>(&e)) {
    // libtorch's text: its first line is the message; the rest is context for its developers.
    std::string message = withoutBacktrace(torchError->what_without_backtrace());
    if (const size_t newline = message.find('\n'); newline != std::string::npos) message.erase(newline);
    return "libtorch: " + message;
  }
  return withoutBacktrace(e.what());
}

}  // namespace sinter::train
