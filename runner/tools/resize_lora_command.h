#pragma once
// `sinter-runner resize_lora --model IN --save_to OUT --new_rank N ...`: sd-scripts'
// networks/resize_lora.py with its flags and defaults (lora_resize.h does the arithmetic).
#include <string>
#include <vector>

namespace sinter::tools {

// 0 when written; throws std::invalid_argument (or network::LoraError) for bad flags or input, before
// anything is written (lora_tools.h turns errors into exit codes).
int runResizeLora(const std::vector<std::string>& args);

}  // namespace sinter::tools
