#include "core/argv.h"

#include <algorithm>

#include "core/argparse_prefix.h"
#include "core/foreign_options.h"
#include "core/registry.h"

namespace sinter {

namespace {

bool isOptionToken(const std::string& s) { return s.size() > 2 && s[0] == '-' && s[1] == '-'; }

}  // namespace

std::vector<std::string> buildArgv(const Config& config) {
  const Tab tab = config.tab();
  const std::optional<Family> family = config.family();
  std::vector<std::string> args;
  for (const auto& spec : optionRegistry()) {
    if (!config.has(spec.key) || spec.secret || !spec.appliesToTab(tab)) continue;
    if (family && !spec.appliesToFamily(*family)) continue;
    const Value v = config.get(spec.key);
    const std::string flag = std::string("--") + spec.key;
    switch (spec.type) {
      case OptionType::Bool:
        args.push_back(asBool(v) ? flag : "--no-" + std::string(spec.key));
        break;
      case OptionType::List:
        args.push_back(flag);
        for (const auto& item : asList(v)) args.push_back(item);
        break;
      default:
        args.push_back(flag);
        args.push_back(asString(v));
    }
  }
  return args;
}

namespace {

// Text from the command line as a value of the option's type.
std::string parseText(const OptionSpec& spec, const std::string& text, Value& out) {
  switch (spec.type) {
    case OptionType::Int: {
      try {
        std::size_t used = 0;
        long long i = std::stoll(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return checkValue(spec, Value{i}, out);
      } catch (const std::exception&) {
        return std::string("--") + spec.key + " expects an integer, not '" + text + "'";
      }
    }
    case OptionType::Float: {
      try {
        std::size_t used = 0;
        // Keep integers as integers (lr_warmup_steps 100 is a step count).
        if (text.find_first_of(".eEnN") == std::string::npos) {
          long long i = std::stoll(text, &used);
          if (used == text.size()) return checkValue(spec, Value{i}, out);
        }
        double d = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return checkValue(spec, Value{d}, out);
      } catch (const std::exception&) {
        return std::string("--") + spec.key + " expects a number, not '" + text + "'";
      }
    }
    case OptionType::Bool:
      if (text == "true" || text == "True" || text == "1") return checkValue(spec, Value{true}, out);
      if (text == "false" || text == "False" || text == "0") return checkValue(spec, Value{false}, out);
      return std::string("--") + spec.key + " expects true or false, not '" + text + "'";
    default:
      return checkValue(spec, Value{text}, out);
  }
}

// sd-scripts' argparse takes an unambiguous prefix of an option's name (`--max_train_epoch` for
// --max_train_epochs), among the registry's, the sd-scripts options it names, and the program's own.
ArgparsePrefix expandAbbreviation(const std::string& name, const std::vector<ExtraArg>& extras) {
  if (name.empty() || findOption(name) || findForeignOption(name)) return {};
  const std::string bare = name.rfind("no-", 0) == 0 ? name.substr(3) : name;
  if (bare != name && (findOption(bare) || findForeignOption(bare))) return {};
  std::vector<std::string> candidates;
  for (const auto& extra : extras) {
    if (extra.name == name) return {};
    candidates.push_back(extra.name);
  }
  for (const auto& spec : optionRegistry()) candidates.push_back(spec.key);
  for (const auto& foreign : foreignOptions()) candidates.push_back(foreign.key);
  return matchArgparsePrefix(name, candidates);
}

}  // namespace

bool ParsedArgs::hasFlag(const std::string& name) const {
  return std::find(extraFlags.begin(), extraFlags.end(), name) != extraFlags.end();
}

ParsedArgs parseArgv(const std::vector<std::string>& args, const std::vector<ExtraArg>& extras) {
  ParsedArgs parsed;
  std::vector<Diagnostic> errors;
  auto error = [&](const std::string& key, const std::string& msg) {
    errors.push_back(Diagnostic{Severity::Error, SourceLocation{}, key, msg});
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (!isOptionToken(token)) {
      parsed.positional.push_back(token);
      continue;
    }
    std::string name = token.substr(2);
    std::optional<std::string> inlineValue;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inlineValue = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const SourceLocation where{"command line", 0, 0};
    if (const ArgparsePrefix a = expandAbbreviation(name, extras); !a.ambiguity.empty()) {
      error(name, a.ambiguity);
      continue;
    } else if (!a.full.empty()) {
      parsed.warnings.push_back(Diagnostic{Severity::Warning, where, a.full,
                                           "--" + name + " read as --" + a.full +
                                               " (an unambiguous prefix, as sd-scripts' argparse reads it)"});
      name = a.full;
    }

    // The program's own options.
    bool handled = false;
    for (const auto& extra : extras) {
      if (extra.name != name) continue;
      handled = true;
      if (!extra.takesValue) {
        parsed.extraFlags.push_back(name);
      } else if (inlineValue) {
        parsed.extraValues[name] = *inlineValue;
      } else if (i + 1 < args.size() && !isOptionToken(args[i + 1])) {
        parsed.extraValues[name] = args[++i];
      } else {
        error(name, "--" + name + " needs a value");
      }
    }
    if (handled) continue;

    // --no-FLAG
    if (name.rfind("no-", 0) == 0 && !inlineValue) {
      const OptionSpec* spec = findOption(name.substr(3));
      if (spec && spec->type == OptionType::Bool) {
        parsed.overrides.set(spec->key, Value{false}, where);
        continue;
      }
      const ForeignOption* foreign = findForeignOption(name.substr(3));
      if (foreign && foreign->type == OptionType::Bool) continue;  // false asks for nothing
    }
    // An sd-scripts option Sinter refuses or ignores: its values are read as sd-scripts reads
    // them, reported, and never stored.
    if (const ForeignOption* foreign = findOption(name) ? nullptr : findForeignOption(name)) {
      Value v;
      if (foreign->type == OptionType::Bool && !inlineValue) {
        v = Value{true};
      } else if (foreign->type == OptionType::List) {
        StringList items;
        if (inlineValue) items.push_back(*inlineValue);
        while (i + 1 < args.size() && !isOptionToken(args[i + 1])) items.push_back(args[++i]);
        v = Value{items};
      } else if (inlineValue) {
        v = Value{*inlineValue};
      } else if (i + 1 < args.size() && !isOptionToken(args[i + 1])) {
        v = Value{args[++i]};
      } else {
        error(name, "--" + name + " needs a value");
        continue;
      }
      if (auto* text = std::get_if<std::string>(&v); text && foreign->type == OptionType::Bool) {
        if (*text == "false" || *text == "False" || *text == "0") v = Value{false};
      }
      if (auto d = foreignOptionDiagnostic(*foreign, v, where)) {
        if (d->severity == Severity::Error) errors.push_back(*d);
        else parsed.warnings.push_back(*d);
      }
      continue;
    }
    const OptionSpec* spec = findOption(name);
    if (!spec) {
      std::string msg = "unknown option --" + name;
      if (std::string s = suggestKey(name); !s.empty()) msg += "; did you mean --" + s + "?";
      error(name, msg);
      continue;
    }
    if (spec->type == OptionType::Bool && !inlineValue) {
      parsed.overrides.set(spec->key, Value{true}, where);
      continue;
    }
    if (spec->type == OptionType::List) {
      StringList items;
      if (inlineValue) items.push_back(*inlineValue);
      while (i + 1 < args.size() && !isOptionToken(args[i + 1])) items.push_back(args[++i]);
      parsed.overrides.set(spec->key, Value{items}, where);
      continue;
    }
    std::string text;
    if (inlineValue) {
      text = *inlineValue;
    } else if (i + 1 < args.size() && !isOptionToken(args[i + 1])) {
      text = args[++i];
    } else {
      error(spec->key, "--" + name + " needs a value");
      continue;
    }
    Value v;
    if (std::string msg = parseText(*spec, text, v); !msg.empty()) {
      error(spec->key, msg);
      continue;
    }
    if (spec->firstOfSdScriptsList) {
      // sd-scripts takes several values here and uses the first (option.h); a later one that
      // differs from the one before it sets the option it is read as (t5xxl_lr, sd3_t5xxl_lr).
      std::string before = text;
      for (std::size_t place = 1; !inlineValue && laterListOption(*spec, place) && i + 1 < args.size() && !isOptionToken(args[i + 1]);
           ++place) {
        const std::string& next = args[++i];
        if (next == before) continue;
        before = next;
        const OptionSpec* later = laterListOption(*spec, place);
        Value laterValue;
        if (std::string msg = parseText(*later, next, laterValue); !msg.empty())
          error(spec->key, "--" + name + "'s " + listPlaceName(place) + " value (" + later->key + "): " + msg);
        else
          parsed.overrides.set(later->key, laterValue, where);
      }
      std::string others;
      while (i + 1 < args.size() && !isOptionToken(args[i + 1]))
        if (const std::string& next = args[++i]; next != text) others += (others.empty() ? "" : " ") + next;
      if (!others.empty())
        parsed.warnings.push_back(Diagnostic{Severity::Warning, where, spec->key, "--" + firstOfListNote(*spec, text, others)});
    }
    parsed.overrides.set(spec->key, v, where);
  }
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return parsed;
}

}  // namespace sinter
