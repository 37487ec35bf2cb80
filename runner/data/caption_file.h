#pragma once
// Reading an image's caption file as sd-scripts' DreamBoothDataset.read_caption does.
#include <optional>
#include <string>

namespace sinter::data {

// Looks for "<image without extension><captionExtension>" (and sd-scripts' face-crop variant,
// "a_b_c_d_e.png" -> "a.txt"). Returns nullopt when there is none. The first line, stripped, is
// the caption; with enableWildcard every non-empty line, joined by "\n". A file that is not
// UTF-8, or is empty, throws DatasetError naming it.
std::optional<std::string> readCaptionFor(const std::string& imagePath, const std::string& captionExtension,
                                          bool enableWildcard);

}  // namespace sinter::data
