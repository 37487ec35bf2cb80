#pragma once
// Errors and warnings about configs, each naming where it comes from.
#include <stdexcept>
#include <string>
#include <vector>

namespace sinter {

struct SourceLocation {
  std::string file;  // empty for values from the command line or the app
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;
  bool operator==(const SourceLocation& o) const { return file == o.file && line == o.line && column == o.column; }
};

enum class Severity { Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation where;
  std::string key;      // the option concerned, if any
  std::string message;  // without the location prefix
  // "file:line:col: error: message" (or "key: message" when there is no file)
  std::string format() const;
};

bool hasErrors(const std::vector<Diagnostic>& diags);
std::string formatAll(const std::vector<Diagnostic>& diags);

// Thrown by loaders when a config cannot be read at all; carries every error found.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diags);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace sinter
