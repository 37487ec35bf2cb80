#include "core/kohya_import_context.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/registry.h"

namespace sinter {

using nlohmann::json;

namespace {

std::optional<double> parseNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double d = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return d;
  } catch (...) {
    return std::nullopt;
  }
}

// Converts a kohya_ss JSON value (numbers are often strings there) to the option's type.
std::string convert(const OptionSpec& spec, const json& v, Value& out) {
  Value raw;
  switch (spec.type) {
    case OptionType::Bool:
      if (v.is_boolean()) raw = v.get<bool>();
      else if (v.is_string() && (v == "true" || v == "false")) raw = v == "true";
      else return "expected true or false";
      break;
    case OptionType::Int: {
      std::optional<double> d;
      if (v.is_number()) d = v.get<double>();
      else if (v.is_string()) d = parseNumber(v.get<std::string>());
      else return "expected a number";
      if (!d) return "not a number: " + v.dump();
      if (*d != std::floor(*d)) return "expected an integer, got " + v.dump();
      raw = static_cast<long long>(*d);
      break;
    }
    case OptionType::Float:
      if (v.is_number_integer()) raw = v.get<long long>();
      else if (v.is_number()) raw = v.get<double>();
      else if (v.is_string()) {
        const std::optional<double> d = parseNumber(v.get<std::string>());
        if (!d) return "not a number: " + v.dump();
        raw = *d;
      } else return "expected a number";
      break;
    case OptionType::List:
      if (v.is_string()) {
        // kohya_ss splits these fields on whitespace after dropping double quotes.
        std::string s = v.get<std::string>();
        s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
        StringList items;
        std::istringstream ss(s);
        for (std::string item; ss >> item;) items.push_back(item);
        raw = items;
      } else if (v.is_array()) {
        StringList items;
        for (const auto& item : v) items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
        raw = items;
      } else return "expected a list";
      break;
    default:
      if (v.is_string()) raw = v.get<std::string>();
      else if (v.is_number_integer()) raw = std::to_string(v.get<long long>());
      else return "expected text";
  }
  return checkValue(spec, raw, out);
}

}  // namespace

const json& KohyaImportContext::value(const std::string& key) const {
  static const json null;
  auto it = root_.find(key);
  return it == root_.end() ? null : *it;
}

std::optional<double> KohyaImportContext::number(const std::string& key) const {
  const json& v = value(key);
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_string()) return parseNumber(v.get<std::string>());
  return std::nullopt;
}

bool KohyaImportContext::flag(const std::string& key) const {
  const json& v = value(key);
  return (v.is_boolean() && v.get<bool>()) || (v.is_string() && v.get<std::string>() == "true");
}

std::string KohyaImportContext::text(const std::string& key) const {
  const json& v = value(key);
  return v.is_null() ? std::string() : pythonText(v);
}

void KohyaImportContext::add(std::vector<KohyaImportItem>& group, std::vector<std::string> keys, std::string text,
                             bool again) {
  std::vector<std::string> fresh;
  for (std::string& k : keys) {
    const bool inFile = root_.contains(k);
    const bool first = accounted_.insert(k).second;
    if (inFile && (first || again)) fresh.push_back(std::move(k));
  }
  // A line about keys the file does not have, or that other lines already cover, says nothing new.
  if (fresh.empty() && !keys.empty()) return;
  group.push_back({std::move(fresh), std::move(text)});
}

void KohyaImportContext::notCarried(std::vector<std::string> keys, std::string text, bool again) {
  add(result_.notCarried, std::move(keys), std::move(text), again);
}
void KohyaImportContext::carried(std::vector<std::string> keys, std::string text, bool again) {
  add(result_.carried, std::move(keys), std::move(text), again);
}
void KohyaImportContext::atDefaults(std::vector<std::string> keys, std::string text, bool again) {
  add(result_.atDefaults, std::move(keys), std::move(text), again);
}

std::string KohyaImportContext::setOption(const std::string& key, const json& v) {
  const OptionSpec* spec = findOption(key);
  if (!spec) return "no Sinter option " + key;
  Value out;
  if (std::string err = convert(*spec, v, out); !err.empty()) return err;
  result_.config.set(key, out, SourceLocation{fileName_, 0, 0});
  return "";
}

bool isKohyaUnset(const json& v) {
  if (v.is_null()) return true;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return s.empty() || s == "0";
  }
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number()) return v.get<double>() == 0.0;
  if (v.is_array() || v.is_object()) return v.empty();
  return false;
}

std::string pythonText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return formatDouble(v.get<double>());
  if (v.is_null()) return "None";
  return v.dump();
}

std::string shown(const json& v) { return v.dump(); }

}  // namespace sinter
