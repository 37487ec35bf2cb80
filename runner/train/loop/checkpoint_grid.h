#pragma once
// The checkpoint grid (issue 57; `sinter-runner --config_file RUN.toml --sample_grid OUT.png FILE...`,
// DESIGN.md §3): the run's sample prompts rendered for its base model (step 0) and for each saved
// file given (a LoRA run's LoRA files, put on the base model loaded once, with a pivotal tuning run's
// bundled embeddings as the text encoders' rows of the run's tokens; a DreamBooth or fine-tune run's
// checkpoints, each loaded as the run's model; a textual inversion run's embedding files, each file's
// rows as the text encoders' rows of the run's tokens; with tokens, the first row has the rows the
// run starts from), every prompt with one seed in every row, as one PNG (sample/sample_grid.h) with
// its layout in a text chunk. A `grid_cell` event for each image.
#include <string>
#include <vector>

#include "train/base/event_sink.h"
#include "train/loop/run_preflight.h"

namespace sinter::train {

struct CheckpointGridRequest {
  std::string output;              // the PNG written
  std::vector<std::string> files;  // the saved files, one row each after the base model's, in this order
};

// Renders the grid of a config that passed preflightRun (its diagnostics already reported) and
// returns the runner's exit code: 0 written (then a `saved` event of kind "grid"), 2 bad input
// found before or while the models load (no sample_prompts, a missing file, a file of another kind
// or model family, an embedding file or a pivotal run's LoRA file without this run's embedding keys
// or with rows of other widths or vector counts; nothing written), 1 a failure while rendering.
// Errors are logged and sent as events, each ending with a failed `done`.
int renderCheckpointGrid(const RunPreflight& preflight, const CheckpointGridRequest& request, EventSink& events);

}  // namespace sinter::train
