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

// What a resumed run reads of a state's train_state.json (`progress`, from `file`), checked against
// the run it resumes before anything is written: global_step a whole number from 0 to
// `maxTrainSteps` (any from 0 where initial_step/initial_epoch replace it), the data position's
// seed, epoch (at most the step) and index (below the batches of an epoch as the state cut it, and
// as this run does where it cuts them alike), and the layout it counts in. Throws InputError naming
// the file and the field.
void checkResumeProgress(const nlohmann::json& progress, const EpochLayout& now, long long maxTrainSteps, bool stepReplaced,
                         const std::string& file);

// The position to go on from in a run laid out as `now`, from a state's "data" object (`stateFolder`
// names it in the warnings). A state saved before it recorded its batch size is taken to have had
// this run's.
ResumedDataPosition resumeDataPosition(const nlohmann::json& data, const EpochLayout& now, const std::string& stateFolder);

}  // namespace sinter::train
