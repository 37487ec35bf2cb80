#pragma once
// The LoRA tools, each named after the sd-scripts script it follows and taking its flags:
// `sinter-runner resize_lora --model IN --save_to OUT ...`, or by the script's name
// (`sinter-runner networks/resize_lora.py ...`), as the training scripts are (cli/script_launch.h).
#include <optional>
#include <string>
#include <vector>

namespace sinter::tools {

// The tool's exit code when args[0] names one, nullopt otherwise (its errors: 2 for bad flags or
// input, 1 for anything else, logged with the tool's name).
std::optional<int> runLoraToolIfNamed(const std::vector<std::string>& args);
// One usage line per tool, for the runner's --help.
std::string loraToolsUsage();

}  // namespace sinter::tools
