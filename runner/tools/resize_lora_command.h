#pragma once
// `sinter-runner resize_lora --model IN --save_to OUT --new_rank N ...`: sd-scripts'
// networks/resize_lora.py with its flags and defaults (lora_resize.h does the arithmetic).
#include <string>
#include <vector>

namespace sinter::tools {

extern const char* const kResizeLoraHelp;
// The tool's exit code (core/exit_codes.h): 0 written, 2 bad flags or input (nothing written).
int runResizeLora(const std::vector<std::string>& args);

}  // namespace sinter::tools
