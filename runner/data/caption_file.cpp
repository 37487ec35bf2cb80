#include "data/caption_file.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "data/caption.h"
#include "data/dataset_settings.h"
#include "core/utf8.h"

namespace sinter::data {

std::optional<std::string> readCaptionFor(const std::string& imagePath, const std::string& captionExtension,
                                          bool enableWildcard) {
  const std::filesystem::path p(imagePath);
  const std::string base = (p.parent_path() / p.stem()).string();
  std::vector<std::string> candidates = {base + captionExtension};
  // Face-cropped images are named "<name>_<four numbers>": they share "<name>"'s caption.
  const std::string stem = p.stem().string();
  size_t underscores = 0, cut = std::string::npos;
  for (size_t i = stem.size(); i-- > 0;)
    if (stem[i] == '_' && ++underscores == 4) cut = i;
  if (cut != std::string::npos) candidates.push_back((p.parent_path() / stem.substr(0, cut)).string() + captionExtension);

  for (const auto& path : candidates) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DatasetError("cannot read caption file: " + path);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (const Utf8Problem bad = checkUtf8(bytes); !bad.valid)
      throw DatasetError("caption file is not UTF-8 (line " + std::to_string(bad.line) + ", byte offset " +
                         std::to_string(bad.offset) + "): " + path + "; save it as UTF-8");
    const std::string text = stripUtf8Bom(bytes);
    if (text.empty()) throw DatasetError("caption file is empty: " + path);
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t end = text.find('\n', start);
      lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (!enableWildcard) return stripWhitespace(lines.front());
    std::string joined;
    for (const auto& line : lines) {
      const std::string s = stripWhitespace(line);
      if (s.empty()) continue;
      joined += (joined.empty() ? "" : "\n") + s;
    }
    return joined;
  }
  return std::nullopt;
}

}  // namespace sinter::data
