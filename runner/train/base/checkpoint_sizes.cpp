#include "train/base/checkpoint_sizes.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/vram_costs.h"

namespace sinter::train {

bool readable(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}

int64_t numelUnder(const io::SafetensorsFile& file, const std::string& prefix) {
  int64_t n = 0;
  for (const std::string& key : file.keys())
    if (key.rfind(prefix, 0) == 0) n += file.info(key).numel();
  return n;
}

double autoencoderEncodeScale(const io::SafetensorsFile& file, const std::string& prefix) {
  const std::string key = prefix + "encoder.conv_in.weight";
  if (!file.has(key) || file.info(key).shape.empty()) return 1.0;
  return std::min(1.0, static_cast<double>(file.info(key).shape[0]) / vram_costs::kVaeEncodeChannels);
}

int64_t fileParams(const std::string& path) {
  const io::SafetensorsFile file(path);
  return numelUnder(file, "");
}

}  // namespace sinter::train
