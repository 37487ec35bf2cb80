#pragma once
// `sinter-runner merge_lora --models A B --ratios 1 0.5 [--sd_model CKPT] --save_to OUT`: sd-scripts'
// networks/merge_lora.py, sdxl_merge_lora.py and flux_merge_lora.py with their flags and defaults
// (lora_merge.h does the arithmetic; the family's registration says where each module's weight is).
#include <string>
#include <vector>

namespace sinter::tools {

// 0 when written; throws std::invalid_argument (or network::LoraError) for bad flags or input, before
// anything is written (lora_tools.h turns errors into exit codes).
int runMergeLora(const std::vector<std::string>& args);

}  // namespace sinter::tools
