#include "data/metadata_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "data/dataset_settings.h"
#include "data/image_decode.h"

namespace sinter::data {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kExtensions[] = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".PNG", ".JPG", ".JPEG", ".WEBP", ".BMP"};

std::string stringField(const json& entry, const char* name, const std::string& where) {
  if (!entry.contains(name) || entry[name].is_null()) return "";
  if (!entry[name].is_string()) throw DatasetError(where + ": \"" + name + "\" must be a string");
  return entry[name].get<std::string>();
}

std::string findImage(const std::string& key, const std::string& imageDir, const std::string& where) {
  fs::path base(key);
  if (base.is_relative()) {
    if (imageDir.empty()) throw DatasetError(where + ": the image path is relative, so the subset needs an image_dir (train_data_dir)");
    base = fs::path(imageDir) / base;
  }
  std::error_code ec;
  if (hasImageExtension(base.filename().string()) && fs::is_regular_file(base, ec)) return base.string();
  for (const char* ext : kExtensions) {
    fs::path candidate = base;
    candidate += ext;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  throw DatasetError(where + ": no image " + base.string() + " (nor with .png, .jpg, .jpeg, .webp or .bmp added)");
}

MetadataImage imageOf(const std::string& key, const json& entry, const std::string& imageDir, const std::string& separator,
                      const std::string& where) {
  if (!entry.is_object()) throw DatasetError(where + ": an entry must be an object with \"caption\" and/or \"tags\"");
  MetadataImage image;
  image.path = findImage(key, imageDir, where);
  image.caption = stringField(entry, "caption", where);
  const std::string tags = stringField(entry, "tags", where);
  if (!tags.empty()) image.caption += (image.caption.empty() ? "" : separator) + tags;
  return image;
}

}  // namespace

std::vector<MetadataImage> readMetadataFile(const std::string& metadataFile, const std::string& imageDir,
                                            const std::string& captionSeparator) {
  std::ifstream in(metadataFile, std::ios::binary);
  if (!in) throw DatasetError("cannot read the metadata file " + metadataFile);
  std::vector<MetadataImage> images;
  const bool lines = fs::path(metadataFile).extension() == ".jsonl";
  if (lines) {
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = metadataFile + ":" + std::to_string(n);
      json entry = json::parse(line, nullptr, false);
      if (entry.is_discarded() || !entry.is_object()) throw DatasetError(where + ": not a JSON object");
      if (!entry.contains("image_path") || !entry["image_path"].is_string())
        throw DatasetError(where + ": \"image_path\" is missing or not a string");
      images.push_back(imageOf(entry["image_path"].get<std::string>(), entry, imageDir, captionSeparator, where));
    }
  } else {
    std::stringstream text;
    text << in.rdbuf();
    json root = json::parse(text.str(), nullptr, false);
    if (root.is_discarded()) throw DatasetError(metadataFile + ": not valid JSON");
    if (!root.is_object()) throw DatasetError(metadataFile + ": must be a JSON object from image keys to their captions and tags");
    for (const auto& [key, entry] : root.items())
      images.push_back(imageOf(key, entry, imageDir, captionSeparator, metadataFile + ": \"" + key + "\""));
  }
  std::sort(images.begin(), images.end(), [](const MetadataImage& a, const MetadataImage& b) { return a.path < b.path; });
  return images;
}

}  // namespace sinter::data
