#pragma once
// `sinter-runner extract_lora_from_models --model_org A --model_tuned B --save_to OUT --dim N`:
// sd-scripts' networks/extract_lora_from_models.py and flux_extract_lora.py with their flags and
// defaults: the difference of two checkpoints of one family at the modules sd-scripts' LoRA network
// targets, factored by truncated SVD (low_rank_factors.h).
#include <string>
#include <vector>

namespace sinter::tools {

// 0 when written; throws std::invalid_argument for bad flags or input, before anything is written
// (lora_tools.h turns errors into exit codes).
int runExtractLora(const std::vector<std::string>& args);

}  // namespace sinter::tools
