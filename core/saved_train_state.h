#pragma once
// The training states a run left in its output folder (save_state, a stop's save: DESIGN.md §3),
// found without the runner: folders <output_name>-state, <output_name>-step%08d-state and
// <output_name>-%06d-state holding a Sinter train_state.json. The app's Queue panel and
// `sinter-runner --queue` offer the last one to resume an interrupted run.
#include <optional>
#include <string>

namespace sinter {

// train_state.json's "format" and "version", as the runner writes them (runner/train/base/train_state.h).
inline constexpr const char* kTrainStateFormat = "sinter-train-state";
inline constexpr int kTrainStateVersion = 1;

struct SavedTrainState {
  std::string folder;  // output_dir/<name>-...-state
  long long step = 0;  // its global_step
};

// The state of the highest global_step among `outputDir`'s state folders of `outputName` (any
// output name when empty); the latest written among equal steps. A folder whose train_state.json
// is missing, unreadable or not a Sinter state is passed over. nullopt when there is none.
std::optional<SavedTrainState> findLastSavedTrainState(const std::string& outputDir, const std::string& outputName);

}  // namespace sinter
