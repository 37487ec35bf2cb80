#pragma once
// What the parts of the kohya_ss import share: the file's JSON, the config being built, the family
// and training type read from the file, and the report's three groups. Each key is reported once.
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/kohya_import_result.h"

namespace sinter {

class KohyaImportContext {
 public:
  KohyaImportContext(nlohmann::json root, std::string fileName, KohyaImportResult& result)
      : root_(std::move(root)), fileName_(std::move(fileName)), result_(result) {}

  const nlohmann::json& root() const { return root_; }
  const std::string& fileName() const { return fileName_; }
  Config& config() { return result_.config; }
  KohyaImportResult& result() { return result_; }

  bool has(const std::string& key) const { return root_.contains(key); }
  // The key's value, or null when the file does not have it.
  const nlohmann::json& value(const std::string& key) const;
  // kohya_ss's JSON holds numbers as numbers or as strings ("1234"); "" and null read as `fallback`.
  std::optional<double> number(const std::string& key) const;
  double numberOr(const std::string& key, double fallback) const { return number(key).value_or(fallback); }
  // A checkbox: true, or the string "true".
  bool flag(const std::string& key) const;
  // A text field; numbers are written as kohya_ss's Python would print them.
  std::string text(const std::string& key) const;

  // The model family and training type, once read (nullopt: not one Sinter trains, or not said).
  std::optional<Family> family;
  std::string familyName;  // kohya_ss's family, Sinter's or not ("SDXL", "FLUX.1", "SD3"); "" when unsaid
  Tab tab = Tab::LoRA;

  // Report lines. Each marks its keys as accounted for. A line is dropped when none of its keys is
  // in the file, or all of them are already accounted for, unless `again` (one field that holds
  // several settings, such as additional_parameters, gets a line for each).
  void notCarried(std::vector<std::string> keys, std::string text, bool again = false);
  void carried(std::vector<std::string> keys, std::string text, bool again = false);
  void atDefaults(std::vector<std::string> keys, std::string text, bool again = false);
  bool accounted(const std::string& key) const { return accounted_.count(key) != 0; }

  // Sets a registry option, checked as a file value would be; "" when it was set, else why not.
  std::string setOption(const std::string& key, const nlohmann::json& v);

 private:
  void add(std::vector<KohyaImportItem>& group, std::vector<std::string> keys, std::string text, bool again);

  nlohmann::json root_;
  std::string fileName_;
  KohyaImportResult& result_;
  std::set<std::string> accounted_;
};

// kohya_ss's values that mean "not set": null, "", false, 0, an empty list, "0".
bool isKohyaUnset(const nlohmann::json& v);
// How kohya_ss's Python prints a value into a command line or network_args: True/False, 8, 0.1, text.
std::string pythonText(const nlohmann::json& v);
// A value for the report: strings quoted, numbers and booleans as JSON writes them.
std::string shown(const nlohmann::json& v);

}  // namespace sinter
