#pragma once
// sd-scripts' fine-tuning metadata (in_json, or a dataset_config subset's metadata_file): a JSON
// object from image key to {"caption", "tags", ...}, or JSON lines of {"image_path", "caption",
// "tags"}. A key is a path, absolute or relative to the subset's image_dir, with or without the
// image's extension (merge_captions_to_metadata writes the stem unless --full_path). The caption
// is the caption, then caption_separator, then the tags, as FineTuningDataset joins them.
#include <string>
#include <vector>

namespace sinter::data {

struct MetadataImage {
  std::string path;     // the image file found for the key
  std::string caption;  // caption and tags joined
};

// Throws DatasetError naming the file (and the key, or the line of a JSON lines file) for a file
// that cannot be read or parsed, an entry that is not an object, or a key without an image.
std::vector<MetadataImage> readMetadataFile(const std::string& metadataFile, const std::string& imageDir,
                                            const std::string& captionSeparator);

}  // namespace sinter::data
