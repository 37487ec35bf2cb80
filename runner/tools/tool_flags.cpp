#include "tools/tool_flags.h"

#include <cstdlib>

namespace sinter::tools {

ToolFlags::ToolFlags(const std::vector<std::string>& args, const std::set<std::string>& valued, const std::set<std::string>& switches) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + arg + "' (flags start with --)");
    std::string name = arg.substr(2), text;
    const size_t eq = name.find('=');
    const bool inline_ = eq != std::string::npos;
    if (inline_) {
      text = name.substr(eq + 1);
      name = name.substr(0, eq);
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
    } else {
      std::string known;
      for (const std::string& v : valued) known += " --" + v;
      for (const std::string& s : switches) known += " --" + s;
      throw std::invalid_argument("unknown flag --" + name + " (this tool takes" + known + ")");
    }
  }
}

std::optional<std::string> ToolFlags::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ToolFlags::valueOr(const std::string& name, const std::string& fallback) const { return value(name).value_or(fallback); }

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
