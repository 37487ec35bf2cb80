#pragma once
// The preflight's report (loop/run_preflight.h): errors and warnings on the options that caused
// them, and running one of the run's own parsers so that what it throws becomes such an error.
// Here, below the families, so a family's registration (family_registration.h) checks its own
// options and files with it.
#include <functional>
#include <string>
#include <vector>

#include "core/config.h"

namespace sinter::train {

class PreflightChecks {
 public:
  PreflightChecks(const Config& config, std::vector<Diagnostic>& out) : config_(config), out_(out) {}

  void error(const std::string& key, const std::string& message);
  void warning(const std::string& key, const std::string& message);
  // Runs one of the parsers the run uses; what it throws becomes an error on `key`. True when it passed.
  bool parse(const std::string& key, const std::function<void()>& check);

 private:
  const Config& config_;
  std::vector<Diagnostic>& out_;
};

// Whether `path` is an existing folder / regular file (stat, following links).
bool isDir(const std::string& path);
bool isFile(const std::string& path);

// The T5 tokenizer a FLUX or SD 3 run reads: t5_tokenizer, or where unset the copy sd-scripts
// downloaded (text/hub_cache_tokenizers.h); an error on t5_tokenizer when there is none or it does not load.
bool checkT5Tokenizer(const Config& config, PreflightChecks& k);

}  // namespace sinter::train
