#pragma once
// Reading an image's caption file as sd-scripts' DreamBoothDataset.read_caption does.
#include <string>

namespace sinter::data {

// What looking for an image's caption file found.
struct CaptionLookup {
  enum class Status {
    Found,       // `caption` is the file's caption (it may be "": a file of blank lines)
    NoFile,      // nothing of the caption's name: the class tokens or an empty caption stand in
    NotAFile,    // `file` is a folder (or no regular file): sd-scripts passes over it as NoFile
    EmptyFile,   // `file` has no lines at all: sd-scripts asserts, the run refuses it
    Unreadable,  // `file` cannot be read or is not UTF-8; `problem` says why
  };
  Status status = Status::NoFile;
  std::string file;     // the caption file (or what stands where it was looked for)
  std::string caption;  // Found
  std::string problem;  // NotAFile, EmptyFile and Unreadable: why it gives no caption, naming `file`
};

// Looks for "<image without extension><captionExtension>" (and sd-scripts' face-crop variant,
// "a_b_c_d_e.png" -> "a.txt"). The first line, stripped, is the caption; with enableWildcard every
// non-empty line, joined by "\n".
CaptionLookup lookUpCaption(const std::string& imagePath, const std::string& captionExtension, bool enableWildcard);

}  // namespace sinter::data
