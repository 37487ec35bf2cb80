#pragma once
// The checkpoint grid's picture (issue 57; `sinter-runner --sample_grid`, DESIGN.md §3): the sample
// prompts rendered for several models side by side, a row per model (the base model first), a
// column per prompt. Every cell is as large as the largest image, each image centred in its cell on
// mid-grey, with no gaps or labels drawn: what the rows and columns are travels in the PNG's text
// chunk `sinter_grid` (JSON), and the app draws the headers from it.
#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/events.h"
#include "sample/sample_naming.h"

namespace sinter::sample {

// The PNG text keyword of the layout.
inline constexpr const char* kGridLayoutKey = events::kGridLayoutPngKey;

struct GridRow {
  bool base = false;  // the run's base model (step 0), without any saved file
  std::string path;   // the saved file (absolute), empty for the base model
  std::optional<long long> step, epoch;  // what the file says it was saved at, where it says
};

struct GridLayout {
  std::vector<GridRow> rows;
  std::vector<ResolvedSample> columns;  // each prompt as every row rendered it (seed, size, sampler)
  int cellWidth = 0, cellHeight = 0;
  std::string model;  // the base model's file name
};

// The cell size: the widest and the tallest of `images` ([H, W, 3] uint8).
std::pair<int, int> gridCellSize(const std::vector<torch::Tensor>& images);

// `cells[row][column]` ([H, W, 3] uint8 on the CPU, each at most cellWidth x cellHeight) as one
// [rows * cellHeight, columns * cellWidth, 3] uint8 picture.
torch::Tensor composeGrid(const std::vector<std::vector<torch::Tensor>>& cells, int cellWidth, int cellHeight);

// The layout as the `sinter_grid` chunk holds it: {"rows": [{"base", "file", "path", "step",
// "epoch"}], "columns": [{"prompt", "negative_prompt", "seed", "width", "height", "sample_steps",
// "scale", "sampler", "guidance_scale"}], "cell_width", "cell_height", "model"}; an unknown step or
// epoch is null.
std::string gridLayoutJson(const GridLayout& layout);

}  // namespace sinter::sample
