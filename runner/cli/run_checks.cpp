#include "cli/run_checks.h"

#include <sys/stat.h>

#include "core/model_family_detect.h"
#include "core/registry.h"

namespace sinter::runner {

namespace {

bool isDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool isFile(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<Diagnostic> checkRunInputs(const Config& config) {
  std::vector<Diagnostic> diags;
  auto error = [&](const std::string& key, const std::string& msg) {
    diags.push_back(Diagnostic{Severity::Error, config.whereSet(key), key, msg});
  };
  const Tab tab = config.tab();
  const std::optional<Family> family = config.family();

  // Every path option that is set must exist and be of the right kind.
  for (const auto& spec : optionRegistry()) {
    if (spec.type != OptionType::Path || !spec.appliesToTab(tab)) continue;
    if (family && !spec.appliesToFamily(*family)) continue;
    const std::string p = config.getString(spec.key);
    if (p.empty() || std::string(spec.key) == "output_dir") continue;
    if (spec.pathKind == PathKind::Directory && !isDir(p)) error(spec.key, std::string(spec.key) + ": folder '" + p + "' does not exist");
    if (spec.pathKind == PathKind::File && !isFile(p)) error(spec.key, std::string(spec.key) + ": file '" + p + "' does not exist");
  }

  const std::string model = config.getString("pretrained_model_name_or_path");
  if (model.empty()) {
    error("pretrained_model_name_or_path", "pretrained_model_name_or_path is not set");
  } else if (isFile(model)) {
    try {
      std::optional<Family> detected = detectModelFamily(model);
      if (!detected) {
        error("pretrained_model_name_or_path", "cannot tell the model family of '" + model +
                                                   "' from its tensor names; set model_family");
      } else if (family && *family != *detected) {
        error("model_family", "model_family is " + std::string(toString(*family)) + " but '" + model +
                                  "' is a " + toString(*detected) + " checkpoint");
      }
    } catch (const std::exception& e) {
      error("pretrained_model_name_or_path", e.what());
    }
  }
  if (config.getString("train_data_dir").empty() && config.getString("dataset_config").empty())
    error("train_data_dir", "no training data: set train_data_dir or dataset_config");
  if (config.getString("output_dir").empty()) error("output_dir", "output_dir is not set");
  return diags;
}

}  // namespace sinter::runner
