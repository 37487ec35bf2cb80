#include "core/pickle_file.h"

namespace sinter {

std::optional<std::string> pickleCheckpointProblem(const unsigned char* head, std::size_t size) {
  // torch.save writes a zip archive (PK\3\4) since PyTorch 1.6, a bare pickle (protocol 2+: 0x80) before.
  const bool zip = size >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4;
  const bool pickle = size >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
  // A safetensors header of 640, 896, 1152 or 1408 bytes starts with the same two bytes (its length,
  // little-endian): its length's high bytes are zero and its JSON follows ("{").
  const bool safetensors = size >= 9 && head[4] == 0 && head[5] == 0 && head[6] == 0 && head[7] == 0 && head[8] == '{';
  if ((!zip && !pickle) || safetensors) return std::nullopt;
  return std::string("a PyTorch pickle checkpoint (.ckpt/.pt), not safetensors. Sinter never unpickles files (loading a "
         "pickle runs code from it); convert it to .safetensors first, e.g. with A1111's or ComfyUI's checkpoint saver or "
         "sd-scripts' tools/convert_diffusers20_original_sd.py --v1 (or --v2) model.ckpt model.safetensors, "
         "and train that file");
}

}  // namespace sinter
