#pragma once
// Model family detection from a checkpoint's tensor names, reading only the safetensors header.
#include <cstdint>
#include <map>
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

// Whether the keys hold LoRA modules in kohya's layout (lora_unet_*, lora_te*_*: networks.lora's and
// LyCORIS's saved files), as a LoRA run's saves do, rather than a model or an embedding file.
bool hasKohyaLoraModules(const std::vector<std::string>& keys);

// The family a LoRA or LyCORIS file is for (check_lora_weights), and what says so ("ss_network_module
// = networks.lora_sd3"): the metadata sd-scripts writes (ss_network_module where one family has it,
// modelspec.architecture, ss_base_model_version), else its kohya module names (lora_unet_joint_blocks_*:
// SD 3.x). `textEncoderWidth`: the input width of its lora_te_ modules (1024 tells SD 2.x's
// OpenCLIP from SD 1.x's CLIP), 0 where it has none. nullopt when neither says.
struct LoraFileFamily {
  Family family;
  std::string reason;
};
std::optional<LoraFileFamily> detectLoraFileFamily(const std::vector<std::string>& keys,
                                                   const std::map<std::string, std::string>& metadata, std::int64_t textEncoderWidth = 0);

}  // namespace sinter
