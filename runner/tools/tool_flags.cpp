#include "tools/tool_flags.h"

#include <cctype>
#include <cstdlib>

#include "core/argparse_prefix.h"

namespace sinter::tools {

namespace {

// argparse takes "-0.5" or "-.5" as a value (the tools have no flag that looks like a number).
bool isFlag(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) && arg[1] != '.';
}

}  // namespace

ToolFlags::ToolFlags(const std::vector<std::string>& args, const std::set<std::string>& valued, const std::set<std::string>& switches,
                     const std::vector<std::string>& positional, const std::map<std::string, std::string>& shortNames,
                     const std::set<std::string>& lists) {
  size_t nextPositional = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (isFlag(arg) && arg[1] != '-') {
      const auto alias = shortNames.find(arg.substr(1));
      if (alias == shortNames.end()) throw std::invalid_argument("unknown flag " + arg);
      arg = "--" + alias->second;
    }
    if (arg.rfind("--", 0) != 0) {
      if (nextPositional >= positional.size()) throw std::invalid_argument("unexpected argument '" + arg + "' (flags start with --)");
      values_[positional[nextPositional++]] = arg;
      continue;
    }
    std::string name = arg.substr(2), text;
    const size_t eq = name.find('=');
    const bool inline_ = eq != std::string::npos;
    if (inline_) {
      text = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    // argparse reads an unambiguous prefix as the flag it starts ("--show_all" for --show_all_keys).
    if (!switches.count(name) && !valued.count(name) && !lists.count(name)) {
      std::vector<std::string> candidates(valued.begin(), valued.end());
      candidates.insert(candidates.end(), switches.begin(), switches.end());
      candidates.insert(candidates.end(), lists.begin(), lists.end());
      const ArgparsePrefix prefix = matchArgparsePrefix(name, candidates);
      if (!prefix.ambiguity.empty()) throw std::invalid_argument(prefix.ambiguity);
      if (!prefix.full.empty()) name = prefix.full;
    }
    if (switches.count(name)) {
      if (inline_) throw std::invalid_argument("--" + name + " takes no value");
      switches_.insert(name);
    } else if (valued.count(name)) {
      if (!inline_) {
        if (i + 1 >= args.size()) throw std::invalid_argument("--" + name + " needs a value");
        text = args[++i];
      }
      values_[name] = text;
    } else if (lists.count(name)) {
      std::vector<std::string>& values = lists_[name];
      values.clear();  // argparse keeps the last occurrence
      if (inline_) values.push_back(text);
      while (!inline_ && i + 1 < args.size() && !isFlag(args[i + 1])) values.push_back(args[++i]);
    } else {
      std::string known;
      for (const std::string& v : valued) known += " --" + v;
      for (const std::string& s : switches) known += " --" + s;
      for (const std::string& l : lists) known += " --" + l;
      throw std::invalid_argument("unknown flag --" + name + " (this tool takes" + known + ")");
    }
  }
}

namespace {

struct FlagSets {
  std::set<std::string> valued, switches, lists;
  std::vector<std::string> positional;
  std::map<std::string, std::string> shortNames{{"h", "help"}};
};

FlagSets flagSetsOf(const LoraToolSpec& tool) {
  FlagSets f;
  f.switches.insert("help");
  for (const ToolFlagSpec& flag : tool.flags) {
    switch (flag.kind) {
      case ToolFlagKind::Switch: f.switches.insert(flag.name); break;
      case ToolFlagKind::InputFiles:
      case ToolFlagKind::Numbers:
      case ToolFlagKind::Texts: f.lists.insert(flag.name); break;
      default: f.valued.insert(flag.name); break;
    }
  }
  if (tool.positional) f.positional.push_back(tool.positional);
  for (const auto& [shortName, name] : tool.shortNames) f.shortNames[shortName] = name;
  return f;
}

}  // namespace

ToolFlags::ToolFlags(const std::vector<std::string>& args, const LoraToolSpec& tool) {
  const FlagSets f = flagSetsOf(tool);
  *this = ToolFlags(args, f.valued, f.switches, f.positional, f.shortNames, f.lists);
}

std::optional<std::string> ToolFlags::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ToolFlags::valueOr(const std::string& name, const std::string& fallback) const { return value(name).value_or(fallback); }

std::vector<std::string> ToolFlags::list(const std::string& name) const {
  const auto it = lists_.find(name);
  return it == lists_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<double> ToolFlags::numbers(const std::string& name) const {
  std::vector<double> out;
  for (const std::string& text : list(name)) {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw std::invalid_argument("--" + name + " takes numbers, not '" + text + "'");
    out.push_back(x);
  }
  return out;
}

std::optional<long long> ToolFlags::integer(const std::string& name) const {
  const std::optional<std::string> text = value(name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0') throw std::invalid_argument("--" + name + " takes a whole number, not '" + *text + "'");
  return n;
}

std::optional<double> ToolFlags::number(const std::string& name) const {
  const std::optional<std::string> text = value(name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0') throw std::invalid_argument("--" + name + " takes a number, not '" + *text + "'");
  return x;
}

}  // namespace sinter::tools
