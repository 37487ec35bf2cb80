#pragma once
// The dataset check's report (dataset_check.h) as text for a person: every finding with its file,
// the repeats of each folder and the bucket histogram (`sinter-runner --check_dataset` prints it).
#include <string>

#include "core/events.h"

namespace sinter::data {

std::string datasetCheckText(const events::DatasetCheck& report);

}  // namespace sinter::data
