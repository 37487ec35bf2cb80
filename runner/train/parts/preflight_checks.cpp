#include "train/parts/preflight_checks.h"

#include <sys/stat.h>

#include <exception>

#include "text/hub_cache_tokenizers.h"
#include "text/t5_tokenizer.h"
#include "train/base/run_errors.h"

namespace sinter::train {

void PreflightChecks::error(const std::string& key, const std::string& message) {
  out_.push_back(Diagnostic{Severity::Error, config_.whereSet(key), key, message});
}

void PreflightChecks::warning(const std::string& key, const std::string& message) {
  out_.push_back(Diagnostic{Severity::Warning, config_.whereSet(key), key, message});
}

bool PreflightChecks::parse(const std::string& key, const std::function<void()>& check) {
  try {
    check();
    return true;
  } catch (const ConfigError& e) {
    for (const Diagnostic& d : e.diagnostics()) out_.push_back(d);
  } catch (const std::exception& e) {
    error(key, userMessage(e));  // libtorch's backtrace left out
  }
  return false;
}

bool isDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool checkT5Tokenizer(const Config& config, PreflightChecks& k) {
  const std::string tokenizer = config.getString("t5_tokenizer").empty() ? text::findCachedT5Tokenizer().value_or("")
                                                                         : config.getString("t5_tokenizer");
  if (tokenizer.empty()) {
    k.error("t5_tokenizer", "t5_tokenizer is not set and no copy of T5's tokenizer was found (looked for " +
                                text::describeT5TokenizerSearch() +
                                "): point it at a folder with T5's spiece.model (google/t5-v1_1-xxl); nothing is downloaded");
    return false;
  }
  return k.parse("t5_tokenizer", [&] { text::T5Tokenizer checked(tokenizer); });
}

}  // namespace sinter::train
