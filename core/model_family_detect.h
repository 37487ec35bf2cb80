#pragma once
// Model family detection from a checkpoint's tensor names, reading only the safetensors header.
#include <optional>
#include <string>
#include <vector>

#include "core/option.h"

namespace sinter {

// Tensor names in a .safetensors header (without __metadata__). Throws std::runtime_error naming
// the file when it is missing, too short, or its header is not valid JSON.
std::vector<std::string> readSafetensorsKeys(const std::string& path);

// `conditioner.` keys: SDXL; `double_blocks.`: FLUX; otherwise SD1.5, or SD2 when the text encoder
// is OpenCLIP (`cond_stage_model.model.`). nullopt when the keys look like no known model.
std::optional<Family> detectFamilyFromKeys(const std::vector<std::string>& keys);
std::optional<Family> detectModelFamily(const std::string& checkpointPath);

}  // namespace sinter
