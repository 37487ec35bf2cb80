#pragma once
// Where a resumed run's data continues. A state's data position counts one rank's batches of an
// epoch; a state saved by another number of ranks or with another train_batch_size cut its epochs
// into other batches, so the position is carried over as the share of the epoch already trained,
// and the run says so (the images of the epoch's rest are then not exactly the ones not yet seen).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "data/batch_plan.h"

namespace sinter::train {

// How a run cuts its epochs into batches: what a state records beside its position and a resume
// compares with its own.
struct EpochLayout {
  int ranks = 1;
  long long trainBatchSize = 1;       // per device (the first dataset's, as the run's summary logs it)
  long long allBatchesPerEpoch = 0;   // every rank's together: one process's epoch

  long long batchesPerRank() const { return (allBatchesPerEpoch + ranks - 1) / ranks; }
};

// A state's "data" object: the position and the layout it counts in.
nlohmann::json dataPositionJson(const data::DataOrderState& position, const EpochLayout& layout);

struct ResumedDataPosition {
  data::DataOrderState position;
  std::vector<std::string> warnings;  // for the log and the event stream
};

// The position to go on from in a run laid out as `now`, from a state's "data" object (`stateFolder`
// names it in the warnings). A state saved before it recorded its batch size is taken to have had
// this run's.
ResumedDataPosition resumeDataPosition(const nlohmann::json& data, const EpochLayout& now, const std::string& stateFolder);

}  // namespace sinter::train
