#include "core/diagnostics.h"

#include "core/text_escape.h"

namespace sinter {

std::string Diagnostic::format() const {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) {
      out += ":" + std::to_string(where.line);
      if (where.column > 0) out += ":" + std::to_string(where.column);
    }
    out += ": ";
  }
  out += severity == Severity::Error ? "error: " : "warning: ";
  // A value quoted in the message may hold control characters (a NUL from "\u0000" in a TOML
  // string): write them out, so what is printed is what the file holds.
  out += escapeControlCharacters(message, true);
  return out;
}

bool hasErrors(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags)
    if (d.severity == Severity::Error) return true;
  return false;
}

std::string formatAll(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) out += (out.empty() ? "" : "\n") + d.format();
  return out;
}

ConfigError::ConfigError(std::vector<Diagnostic> diags) : std::runtime_error(formatAll(diags)), diags_(std::move(diags)) {}

}  // namespace sinter
