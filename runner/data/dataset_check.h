#pragma once
// The dataset check (issue 57; `sinter-runner --check_dataset`, and at every run's start): what is
// wrong with a dataset as the run reads it (buildDataset): images without captions, empty
// captions, files of the same content, images smaller than the smallest bucket, files that cannot
// be read, and what the run makes of the rest (the bucket histogram, the repeats of each folder).
// Each finding names its file; a run skips nothing that the check does not name.
#include <string>
#include <vector>

#include "core/events.h"
#include "data/dataset.h"

namespace sinter::data {

struct DatasetCheckOptions {
  // Hash the files whose size another image file shares, to find the same content twice.
  bool compareContents = true;
  // Decode every image in use, not only its header: pixel data that does not decode is found
  // before a run stops on it (--check_dataset; too slow for every run's start).
  bool decodePixels = false;
  int workers = 1;
};

struct DatasetCheckResult {
  events::DatasetCheck report;
  // The findings as log lines, beyond what reading the dataset already said (its warnings and the
  // files it skipped): a line for each kind, naming its first files.
  std::vector<std::string> warnings;
  long long filesHashed = 0;  // files whose content was hashed (those of a size another shares, or all when decoded)
};

// `readingWarnings`: what reading the dataset said (the settings' and buildDataset's warnings),
// carried into the report. Throws nothing for bad files: each is a finding.
DatasetCheckResult checkDataset(const Dataset& dataset, const std::vector<std::string>& readingWarnings,
                                const DatasetCheckOptions& options);

}  // namespace sinter::data
