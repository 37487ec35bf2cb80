#include "data/dataset_check_text.h"

namespace sinter::data {

namespace {

void appendFiles(std::string& out, const std::string& title, const std::vector<events::DatasetFile>& files) {
  if (files.empty()) return;
  out += title + " (" + std::to_string(files.size()) + "):\n";
  for (const events::DatasetFile& f : files) out += "  " + f.path + ": " + f.reason + "\n";
}

}  // namespace

std::string datasetCheckText(const events::DatasetCheck& r) {
  std::string out = "dataset check: " + std::to_string(r.images) + " image file(s) in use";
  if (!r.contents_compared) out += "; duplicates not looked for";
  out += r.pixels_decoded ? "; every image decoded\n" : "; image headers read\n";
  out += "folders (images x repeats = what an epoch draws):\n";
  for (const events::DatasetFolder& f : r.folders) {
    out += "  " + f.path + (f.regularization ? " (regularisation)" : "") + ": " + std::to_string(f.images) + " x " +
           std::to_string(f.repeats) + " = " + std::to_string(f.with_repeats);
    if (f.regularization && f.with_repeats != (f.images - f.validation) * f.repeats) out += " (balanced to the training images)";
    if (f.validation > 0) out += "; " + std::to_string(f.validation) + " held out for validation";
    out += "\n";
  }
  out += "buckets (width x height: images, with repeats):\n";
  for (const events::DatasetBucket& b : r.buckets)
    out += "  " + std::to_string(b.width) + "x" + std::to_string(b.height) + ": " + std::to_string(b.images) + ", " +
           std::to_string(b.with_repeats) + "\n";
  appendFiles(out, "images without a caption file", r.missing_captions);
  appendFiles(out, "images with an empty caption", r.empty_captions);
  if (!r.duplicates.empty()) {
    out += "image files with the same content (" + std::to_string(r.duplicates.size()) + " group(s)):\n";
    for (const auto& group : r.duplicates) {
      out += " ";
      for (size_t k = 0; k < group.size(); ++k) out += (k ? " = " : " ") + group[k];
      out += "\n";
    }
  }
  appendFiles(out, "images smaller than the smallest bucket", r.too_small);
  appendFiles(out, "files that cannot be read", r.unreadable);
  if (!r.warnings.empty()) {
    out += "reading the dataset said:\n";
    for (const std::string& w : r.warnings) out += "  " + w + "\n";
  }
  if (!r.refusals.empty()) {
    out += "a run refuses this dataset:\n";
    for (const std::string& why : r.refusals) out += "  " + why + "\n";
  }
  const size_t findings = r.missing_captions.size() + r.empty_captions.size() + r.duplicates.size() + r.too_small.size() +
                          r.unreadable.size();
  out += findings == 0 ? "no problems found\n" : std::to_string(findings) + " finding(s)\n";
  return out;
}

}  // namespace sinter::data
