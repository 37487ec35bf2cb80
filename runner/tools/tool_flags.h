#pragma once
// The flags of a tool run as `sinter-runner TOOL --flag value ...`, read as argparse reads the
// sd-scripts script it follows: "--flag value" or "--flag=value", an unambiguous prefix of a flag,
// switches without a value, a short alias ("-s"), the script's positional arguments in order, and
// lists (nargs="*": "--models a.safetensors b.safetensors", values up to the next flag; a negative
// number such as -0.5 is a value, as argparse reads it).
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/lora_tool_table.h"

namespace sinter::tools {

class ToolFlags {
 public:
  // `valued` take a value, `switches` none, `shortNames` maps "s" to a long name, `positional`
  // names the arguments that are no flag; anything else is a std::invalid_argument naming it.
  ToolFlags(const std::vector<std::string>& args, const std::set<std::string>& valued, const std::set<std::string>& switches,
            const std::vector<std::string>& positional = {}, const std::map<std::string, std::string>& shortNames = {},
            const std::set<std::string>& lists = {});

  // A tool's flags as core's tool table lists them (--help / -h the dispatcher answers first).
  ToolFlags(const std::vector<std::string>& args, const LoraToolSpec& tool);

  std::optional<std::string> value(const std::string& name) const;
  std::string valueOr(const std::string& name, const std::string& fallback) const;
  // The value as a number; std::invalid_argument naming the flag when it is not one.
  std::optional<long long> integer(const std::string& name) const;
  std::optional<double> number(const std::string& name) const;
  bool has(const std::string& name) const { return switches_.count(name) != 0; }
  // A list flag's values (empty when not given), and as numbers (std::invalid_argument naming it).
  std::vector<std::string> list(const std::string& name) const;
  std::vector<double> numbers(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> switches_;
  std::map<std::string, std::vector<std::string>> lists_;
};

}  // namespace sinter::tools
