#pragma once
// The LoRA tools (`sinter-runner TOOL ...`, runner/tools/) and their flags, once: the runner parses
// a tool's command line by its row, and the app's Tools tab builds its form from it. The flags are
// sd-scripts' scripts' own (names, defaults, meanings).
#include <string>
#include <utility>
#include <vector>

namespace sinter {

enum class ToolFlagKind {
  InputFile,   // a .safetensors file read
  OutputFile,  // a .safetensors file written
  InputFiles,  // nargs="*": several files read
  Numbers,     // nargs="*": several numbers
  Texts,       // nargs="*": several words
  Integer,
  Number,
  Choice,      // one of `choices`
  Text,
  Switch,      // store_true
};

struct ToolFlagSpec {
  const char* name;        // without "--"
  ToolFlagKind kind;
  const char* defaultText; // as the script's help gives it ("" where it has none)
  const char* help;        // one line, for the app's tooltip
  std::vector<const char*> choices = {};
  bool required = false;
  bool advanced = false;   // accepted for sd-scripts' command lines, or rarely set: the app folds it away
};

struct LoraToolSpec {
  const char* name;     // the command, and sd-scripts' script's name without ".py"
  const char* title;    // what it makes, for the app's list
  const char* usage;    // its line in `sinter-runner --help`
  const char* description;  // what it does, for its own --help
  std::vector<ToolFlagSpec> flags;
  std::vector<const char*> aliases = {};  // other scripts' names for the same tool (sdxl_merge_lora.py)
  const char* positional = nullptr;        // a flag also given bare (check_lora_weights FILE)
  std::vector<std::pair<const char*, const char*>> shortNames = {};  // "s" → "show_all_keys"
};

// In the app's order.
const std::vector<LoraToolSpec>& loraToolTable();
// The row whose name or alias is `name` ("resize_lora", "flux_merge_lora"), or null.
const LoraToolSpec* findLoraTool(const std::string& name);
// `sinter-runner TOOL --help`: the usage, the description, each flag with its default and choices.
std::string loraToolHelp(const LoraToolSpec& tool);

}  // namespace sinter
