#pragma once
// `sinter-runner convert_flux_lora --src ai-toolkit --dst sd-scripts --src_path IN --dst_path OUT`:
// sd-scripts' networks/convert_flux_lora.py with its flags and defaults, and OneTrainer's layout
// (flux_lora_layouts.h does the conversion).
#include <string>
#include <vector>

namespace sinter::tools {

// 0 when written; throws std::invalid_argument for bad flags or input, before anything is written
// (lora_tools.h turns errors into exit codes).
int runConvertFluxLora(const std::vector<std::string>& args);

}  // namespace sinter::tools
