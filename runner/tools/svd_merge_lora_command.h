#pragma once
// `sinter-runner svd_merge_lora --models A B --ratios 1 0.5 --new_rank 8 --save_to OUT`: sd-scripts'
// networks/svd_merge_lora.py with its flags and defaults (lora_svd_merge.h does the arithmetic).
#include <string>
#include <vector>

namespace sinter::tools {

// 0 when written; throws std::invalid_argument (or network::LoraError) for bad flags or input, before
// anything is written (lora_tools.h turns errors into exit codes).
int runSvdMergeLora(const std::vector<std::string>& args);

}  // namespace sinter::tools
