#pragma once
// `sinter-runner check_lora_weights FILE [-s]`: sd-scripts' networks/check_lora_weights.py (each
// lora_down/lora_up tensor's shape, mean and smallest magnitude as its CSV lines; -s every tensor),
// after a summary of what the file holds (lora_file_summary.h) and its ss_ metadata.
#include <string>
#include <vector>

namespace sinter::tools {

// 0 when printed; throws for bad flags or input (lora_tools.h turns errors into exit codes).
int runCheckLoraWeights(const std::vector<std::string>& args);

}  // namespace sinter::tools
