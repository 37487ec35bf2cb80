#include "core/config.h"

#include <cmath>
#include <stdexcept>

#include "core/registry.h"

namespace sinter {

Value Config::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it != values_.end()) return it->second;
  const OptionSpec* spec = findOption(key);
  if (!spec) throw std::out_of_range("unknown option '" + key + "'");
  return spec->defaultValue;
}

bool Config::isSet(const std::string& key) const {
  const OptionSpec* spec = findOption(key);
  if (!spec) throw std::out_of_range("unknown option '" + key + "'");
  return !spec->isUnsetValue(get(key));
}

void Config::set(const std::string& key, Value v, SourceLocation where) {
  if (isUnset(v)) {
    erase(key);
    return;
  }
  values_[key] = std::move(v);
  where_[key] = std::move(where);
}

void Config::erase(const std::string& key) {
  values_.erase(key);
  where_.erase(key);
}

SourceLocation Config::whereSet(const std::string& key) const {
  auto it = where_.find(key);
  return it == where_.end() ? SourceLocation{} : it->second;
}

void Config::overlay(const Config& other) {
  for (const auto& [key, value] : other.values_) set(key, value, other.whereSet(key));
}

Tab Config::tab() const { return tabFromString(getString("training_type")).value_or(Tab::LoRA); }

std::optional<Family> Config::family() const { return familyFromString(getString("model_family")); }

namespace {
bool sameValue(const Value& a, const Value& b) {
  const bool aNum = std::holds_alternative<long long>(a) || std::holds_alternative<double>(a);
  const bool bNum = std::holds_alternative<long long>(b) || std::holds_alternative<double>(b);
  if (aNum && bNum) return asDouble(a) == asDouble(b);
  return a == b;
}
}  // namespace

std::vector<std::string> Config::differingKeys(const Config& other) const {
  std::vector<std::string> keys;
  for (const auto& spec : optionRegistry())
    if (!sameValue(get(spec.key), other.get(spec.key))) keys.push_back(spec.key);
  return keys;
}

bool Config::sameEffectiveValues(const Config& other) const { return differingKeys(other).empty(); }

namespace {

const char* describe(const Value& v) {
  switch (v.index()) {
    case 0: return "nothing";
    case 1: return "a boolean";
    case 2: return "an integer";
    case 3: return "a float";
    case 4: return "a string";
    default: return "a list";
  }
}

std::string joinChoices(const std::vector<std::string>& c) {
  std::string out;
  for (const auto& s : c) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string formatBound(const OptionSpec& spec, double bound) {
  return spec.type == OptionType::Int ? std::to_string(static_cast<long long>(bound)) : formatDouble(bound);
}

std::string rangeError(const OptionSpec& spec, double x) {
  if (spec.minValue && x < *spec.minValue) return "is below the minimum " + formatBound(spec, *spec.minValue);
  if (spec.maxValue && x > *spec.maxValue) return "is above the maximum " + formatBound(spec, *spec.maxValue);
  return "";
}

}  // namespace

std::string firstOfListNote(const OptionSpec& spec, const std::string& first, const std::string& others) {
  return std::string(spec.key) + ": the first value, " + first + ", is used, as sd-scripts' networks.lora uses it; " + others +
         " not (" + (spec.firstOfSdScriptsList ? spec.firstOfSdScriptsList : "") + ")";
}

std::string runOutputName(const Config& config, Tab tab) {
  if (const std::string name = config.getString("output_name"); !name.empty()) return name;
  if (const std::string token = config.getString("token_string"); tab == Tab::TextualInversion && !token.empty()) return token;
  return "last";
}

std::string listPlaceName(std::size_t index) {
  static const char* const names[] = {"first", "second", "third", "fourth", "fifth"};
  return index < 5 ? names[index] : std::to_string(index + 1) + "th";
}

const OptionSpec* laterListOption(const OptionSpec& spec, std::size_t index) {
  if (index == 0 || index > spec.laterOfSdScriptsList.size()) return nullptr;
  return findOption(spec.laterOfSdScriptsList[index - 1]);
}

std::string checkValue(const OptionSpec& spec, const Value& in, Value& out) {
  const std::string key = spec.key;
  auto typeError = [&](const std::string& expected) {
    return key + " must be " + expected + ", not " + describe(in);
  };
  switch (spec.type) {
    case OptionType::Bool:
      if (!std::holds_alternative<bool>(in)) return typeError("true or false");
      out = in;
      return "";
    case OptionType::Int: {
      if (!std::holds_alternative<long long>(in)) return typeError("an integer");
      long long i = std::get<long long>(in);
      if (std::string e = rangeError(spec, static_cast<double>(i)); !e.empty())
        return key + " = " + std::to_string(i) + " " + e;
      if (!spec.choices.empty()) {
        bool ok = false;
        for (const auto& c : spec.choices) ok = ok || c == std::to_string(i);
        if (!ok) return key + " = " + std::to_string(i) + " is not one of: " + joinChoices(spec.choices);
      }
      out = in;
      return "";
    }
    case OptionType::Float: {
      if (!std::holds_alternative<long long>(in) && !std::holds_alternative<double>(in))
        return typeError("a number");
      double x = asDouble(in);
      if (std::isnan(x) || std::isinf(x)) return key + " must be a finite number";
      if (std::string e = rangeError(spec, x); !e.empty()) return key + " = " + asString(in) + " " + e;
      out = in;  // an integer stays an integer (lr_warmup_steps = 100 is a step count, not a ratio)
      return "";
    }
    case OptionType::String:
    case OptionType::Path:
      // sd-scripts configs often say `resolution = 1024`; it means the same as "1024".
      if (key == "resolution" && std::holds_alternative<long long>(in)) {
        out = std::to_string(std::get<long long>(in));
        return "";
      }
      if (!std::holds_alternative<std::string>(in)) return typeError("a string");
      out = in;
      return "";
    case OptionType::Enum: {
      std::string s;
      if (key == "compile_dynamic" && std::holds_alternative<bool>(in)) {
        s = std::get<bool>(in) ? "true" : "false";  // musubi-tuner accepts the boolean spelling too
      } else if (std::holds_alternative<std::string>(in)) {
        s = std::get<std::string>(in);
      } else {
        return typeError("a string (one of: " + joinChoices(spec.choices) + ")");
      }
      for (const auto& c : spec.choices)
        if (c == s) {
          out = s;
          return "";
        }
      return key + " = \"" + s + "\" is not one of: " + joinChoices(spec.choices);
    }
    case OptionType::List: {
      if (!std::holds_alternative<StringList>(in))
        return typeError("a list of strings, e.g. [\"a=1\", \"b=2\"]");
      out = in;
      return "";
    }
  }
  return "unsupported option type";
}

}  // namespace sinter
