#include "data/caption_file.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "data/caption.h"
#include "core/utf8.h"

namespace sinter::data {

namespace {

// The caption of a caption file's text (already UTF-8, BOM removed, not empty).
std::string captionOfText(const std::string& text, bool enableWildcard) {
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

CaptionLookup readCaptionFile(const std::string& path, bool enableWildcard) {
  CaptionLookup out;
  out.file = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out.status = CaptionLookup::Status::Unreadable;
    out.problem = "cannot read caption file: " + path;
    return out;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const Utf8Problem bad = checkUtf8(bytes); !bad.valid) {
    out.status = CaptionLookup::Status::Unreadable;
    out.problem = "caption file is not UTF-8 (line " + std::to_string(bad.line) + ", byte offset " + std::to_string(bad.offset) +
                  "): " + path + "; save it as UTF-8";
    return out;
  }
  const std::string text = stripUtf8Bom(bytes);
  if (text.empty()) {
    out.status = CaptionLookup::Status::EmptyFile;
    out.problem = "caption file is empty: " + path;
    return out;
  }
  out.status = CaptionLookup::Status::Found;
  out.caption = captionOfText(text, enableWildcard);
  return out;
}

}  // namespace

CaptionLookup lookUpCaption(const std::string& imagePath, const std::string& captionExtension, bool enableWildcard) {
  const std::filesystem::path p(imagePath);
  const std::string base = (p.parent_path() / p.stem()).string();
  std::vector<std::string> candidates = {base + captionExtension};
  // Face-cropped images are named "<name>_<four numbers>": they share "<name>"'s caption.
  const std::string stem = p.stem().string();
  size_t underscores = 0, cut = std::string::npos;
  for (size_t i = stem.size(); i-- > 0;)
    if (stem[i] == '_' && ++underscores == 4) cut = i;
  if (cut != std::string::npos) candidates.push_back((p.parent_path() / stem.substr(0, cut)).string() + captionExtension);

  CaptionLookup notAFile;  // a candidate that exists but is no file, said when no other candidate is one
  for (const auto& path : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return readCaptionFile(path, enableWildcard);
    if (notAFile.file.empty() && std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
      notAFile.status = CaptionLookup::Status::NotAFile;
      notAFile.file = path;
      notAFile.problem = std::filesystem::is_directory(path, ec) ? "its caption path " + path + " is a folder, not a file"
                                                                  : "its caption path " + path + " is not a regular file";
    }
  }
  return notAFile;
}

}  // namespace sinter::data
