#include "tools/checkpoint_lora_layout.h"

#include <stdexcept>

#include "core/model_family_detect.h"
#include "tools/tool_files.h"

namespace sinter::tools {

CheckpointForLora openCheckpointForLora(const std::string& flag, const std::string& path, const std::string& role,
                                        const train::FamilyRegistration* family) {
  requireSafetensorsPath(flag, path, false);
  CheckpointForLora c{io::SafetensorsFile(path), family, {}, {}};
  if (role == "model") {
    const std::optional<Family> detected = detectFamilyFromKeys(c.file.keys());
    if (!detected) throw std::invalid_argument(flag + " " + path + ": its keys are of no model family this build knows");
    c.family = train::findRegisteredFamily(*detected);
  }
  for (const train::FamilyRegistration& r : train::registeredFamilies())
    if (!c.family && r.checkpointLoraLayout && !r.checkpointLoraLayout(c.file, role).parts.empty()) c.family = &r;
  if (!c.family || !c.family->checkpointLoraLayout)
    throw std::invalid_argument(flag + " " + path + ": the LoRA tools do not work on this model family's files yet");
  c.layout = c.family->checkpointLoraLayout(c.file, role);
  if (c.layout.parts.empty()) throw std::invalid_argument(flag + " " + path + ": this model family has no " + role + " file");
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& key : c.file.keys()) shapes[key] = c.file.info(key).shape;
  c.slots = network::checkpointLoraSlots(shapes, c.layout.parts);
  return c;
}

}  // namespace sinter::tools
