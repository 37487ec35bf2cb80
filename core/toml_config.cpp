#include "core/toml_config.h"

#include <algorithm>
#include <sstream>
#include <toml.hpp>

#include "core/atomic_file.h"
#include "core/ecosystem_keys.h"
#include "core/foreign_options.h"
#include "core/registry.h"
#include "core/utf8.h"

namespace sinter {

namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;  // a config is a few KiB; anything near this is not one

SourceLocation locationOf(const toml::value& v, const std::string& fileName) {
  toml::source_location loc = v.location();
  return SourceLocation{fileName, static_cast<int>(loc.line()), static_cast<int>(loc.column())};
}

// toml11's messages embed an ASCII-art excerpt; keep only the first line of the message.
std::string firstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  const std::string prefix = "[error] ";
  if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
  return line;
}

// toml11 reports duplicate keys and syntax errors as exceptions with a location.
Diagnostic syntaxDiagnostic(const toml::exception& e, const std::string& fileName) {
  Diagnostic d;
  d.where = SourceLocation{fileName, static_cast<int>(e.location().line()), static_cast<int>(e.location().column())};
  std::string what = firstLine(e.what());
  if (what.find("already exists") != std::string::npos || what.find("already defined") != std::string::npos)
    d.message = "duplicate key: " + what;
  else
    d.message = "TOML syntax error: " + what;
  return d;
}

// A TOML value as an option value, or an error message.
std::string toValue(const toml::value& v, Value& out) {
  if (v.is_boolean()) out = v.as_boolean();
  else if (v.is_integer()) out = static_cast<long long>(v.as_integer());
  else if (v.is_floating()) out = static_cast<double>(v.as_floating());
  else if (v.is_string()) out = v.as_string().str;
  else if (v.is_array()) {
    StringList items;
    for (const auto& item : v.as_array()) {
      if (item.is_string()) items.push_back(item.as_string().str);
      else if (item.is_boolean()) items.push_back(item.as_boolean() ? "true" : "false");
      else if (item.is_integer()) items.push_back(std::to_string(item.as_integer()));
      else if (item.is_floating()) items.push_back(formatDouble(item.as_floating()));
      else return "a list may hold only strings, numbers and booleans";
    }
    out = std::move(items);
  } else if (v.is_table()) return "is a table, not a value";
  else return "dates and times are not option values";
  return "";
}

struct Entry {
  std::string key;
  const toml::value* value;
};

// Values Python takes for "no value" where sd-scripts tests an option for truth: `false` for a text
// or path option (resume = false: no resume), an empty string for a list option (Python iterates
// it: optimizer_args = ""), an empty list where sd-scripts uses the first of several values.
bool readsAsNoValue(const OptionSpec& spec, const Value& raw) {
  const bool text = spec.type == OptionType::String || spec.type == OptionType::Path;
  if (text && std::holds_alternative<bool>(raw)) return !std::get<bool>(raw);
  if (spec.type == OptionType::List && std::holds_alternative<std::string>(raw)) return std::get<std::string>(raw).empty();
  if (spec.firstOfSdScriptsList && std::holds_alternative<StringList>(raw)) return std::get<StringList>(raw).empty();
  return false;
}
}  // namespace

LoadResult parseConfigToml(const std::string& text, const std::string& fileName, ConfigReading reading) {
  const bool strict = reading == ConfigReading::Strict;
  auto fail = [&](int line, int column, const std::string& message) -> LoadResult {
    throw ConfigError({Diagnostic{Severity::Error, SourceLocation{fileName, line, column}, "", message}});
  };
  if (text.size() > kMaxConfigBytes)
    fail(0, 0, "file is too large for a config (" + std::to_string(text.size()) + " bytes; the limit is 1 MiB)");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) fail(0, 0, "the file is empty");
  Utf8Problem utf8 = checkUtf8(text);
  if (!utf8.valid) fail(utf8.line, utf8.column, "the file is not valid UTF-8 (byte offset " + std::to_string(utf8.offset) + ")");
  if (text.find('\0') != std::string::npos) fail(0, 0, "the file contains NUL bytes; it is not a TOML text file");

  toml::value root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, fileName);
  } catch (const toml::exception& e) {
    throw ConfigError({syntaxDiagnostic(e, fileName)});
  } catch (const std::exception& e) {
    fail(0, 0, std::string("TOML syntax error: ") + firstLine(e.what()));
  }

  // Flatten sections as sd-scripts does; remember where each key was first seen.
  std::vector<Entry> entries;
  std::vector<Diagnostic> errors;
  for (const auto& [name, value] : root.as_table()) {
    if (value.is_table()) {
      for (const auto& [key, inner] : value.as_table()) entries.push_back({key, &inner});
    } else {
      entries.push_back({name, &value});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    auto la = a.value->location(), lb = b.value->location();
    return la.line() != lb.line() ? la.line() < lb.line() : la.column() < lb.column();
  });

  LoadResult result;
  std::map<std::string, SourceLocation> seen;
  for (const Entry& e : entries) {
    SourceLocation where = locationOf(*e.value, fileName);
    auto error = [&](std::string msg) { errors.push_back(Diagnostic{Severity::Error, where, e.key, std::move(msg)}); };
    auto warning = [&](std::string msg) { result.warnings.push_back(Diagnostic{Severity::Warning, where, e.key, std::move(msg)}); };
    const OptionSpec* spec = findOption(e.key);
    const ForeignOption* foreign = spec ? nullptr : findForeignOption(e.key);
    if (!spec && !foreign) {
      // sd-scripts ignores keys it has no option for; a near miss of an option is a typo, unless
      // another tool of the ecosystem writes that key (kohya_ss's `sdxl` is no typo of `sdpa`).
      const EcosystemKey* known = findEcosystemKey(e.key);
      const std::string suggestion = suggestKey(e.key);
      if (known && !strict) {
        warning(e.key + " is ignored, as sd-scripts ignores it: " + known->source + " (" + known->what + ")");
      } else if (!suggestion.empty() || strict) {
        error("unknown key '" + e.key + "'" + (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?"));
      } else {
        warning("unknown key '" + e.key + "' is ignored, as sd-scripts ignores keys it has no option for (--strict refuses it)");
      }
      continue;
    }
    if (auto it = seen.find(e.key); it != seen.end()) {
      const std::string first = "line " + std::to_string(it->second.line);
      if (strict) {
        error("duplicate key '" + e.key + "' (first set on " + first + ")");
        continue;
      }
      // sd-scripts flattens the sections into one namespace, where the later one wins.
      warning(e.key + " is set twice, on " + first + " and here: the later value is used, as sd-scripts uses it");
    }
    seen[e.key] = where;
    Value raw, checked;
    if (std::string msg = toValue(*e.value, raw); !msg.empty()) {
      error(e.key + " " + msg);
      continue;
    }
    if (spec && !strict) {
      if (readsAsNoValue(*spec, raw)) {
        result.config.set(e.key, Value{}, where);
        continue;
      }
      if (spec->firstOfSdScriptsList) {
        if (auto* list = std::get_if<StringList>(&raw)) {
          // A later value that differs from the one before it sets the option it is read as
          // (t5xxl_lr, sd3_t5xxl_lr); an equal one changes nothing, as that option falls back to
          // the one before.
          std::size_t i = 1;
          bool bad = false;
          for (; i < list->size() && laterListOption(*spec, i); ++i) {
            if ((*list)[i] == (*list)[i - 1]) continue;
            const OptionSpec* later = laterListOption(*spec, i);
            Value laterRaw, laterChecked;
            std::string msg = toValue(e.value->as_array().at(i), laterRaw);
            if (msg.empty()) msg = checkValue(*later, laterRaw, laterChecked);
            if (!msg.empty()) {
              error(e.key + "'s " + listPlaceName(i) + " value (" + later->key + "): " + msg);
              bad = true;
              break;
            }
            result.config.set(later->key, laterChecked, where);
          }
          if (bad) continue;
          std::string others;
          for (; i < list->size(); ++i)
            if ((*list)[i] != list->front()) others += (others.empty() ? "" : ", ") + (*list)[i];
          if (!others.empty()) warning(firstOfListNote(*spec, list->front(), others));
          if (std::string msg = toValue(e.value->as_array().front(), raw); !msg.empty()) {
            error(e.key + " " + msg);
            continue;
          }
        }
      }
    }
    if (foreign) {
      // An sd-scripts option Sinter refuses or ignores: reported, never stored.
      if (auto d = foreignOptionDiagnostic(*foreign, raw, where)) {
        if (strict) d->severity = Severity::Error;  // strict: nothing in the file goes unhonoured
        (d->severity == Severity::Error ? errors : result.warnings).push_back(*d);
      }
      continue;
    }
    if (std::string msg = checkValue(*spec, raw, checked); !msg.empty()) {
      error(msg);
      continue;
    }
    result.config.set(e.key, checked, where);
  }
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return result;
}

LoadResult loadConfigFile(const std::string& path, ConfigReading reading) {
  std::string text;
  try {
    text = readWholeFile(path);
  } catch (const std::exception& e) {
    throw ConfigError({Diagnostic{Severity::Error, SourceLocation{path, 0, 0}, "", e.what()}});
  }
  return parseConfigToml(text, path, reading);
}

std::string quoteTomlString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

std::string tomlLiteral(const Value& v) {
  if (auto s = std::get_if<std::string>(&v)) return quoteTomlString(*s);
  if (auto l = std::get_if<StringList>(&v)) {
    std::string out = "[";
    for (std::size_t i = 0; i < l->size(); ++i) out += (i ? ", " : "") + quoteTomlString((*l)[i]);
    return out + "]";
  }
  return asString(v);  // bool, integer, float
}

bool isWritten(const OptionSpec& spec, const Value& v, Tab tab, std::optional<Family> family) {
  if (spec.secret || !spec.appliesToTab(tab)) return false;
  if (family && !spec.appliesToFamily(*family)) return false;
  return !spec.isUnsetValue(v);
}

}  // namespace

std::string writeConfigToml(const Config& config, Tab tab, std::optional<Family> family) {
  std::string out;
  for (Section section : allSections()) {
    std::string body;
    for (const auto& spec : optionRegistry()) {
      if (spec.section != section) continue;
      Value v = config.get(spec.key);
      if (isWritten(spec, v, tab, family)) body += std::string(spec.key) + " = " + tomlLiteral(v) + "\n";
    }
    if (body.empty()) continue;
    if (!out.empty()) out += "\n";
    out += "[" + std::string(toString(section)) + "]\n" + body;
  }
  return out;
}

std::string writeConfigToml(const Config& config) { return writeConfigToml(config, config.tab(), config.family()); }

void saveConfigFile(const std::string& path, const Config& config) { writeFileAtomically(path, writeConfigToml(config)); }

}  // namespace sinter
