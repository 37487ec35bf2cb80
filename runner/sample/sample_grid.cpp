#include "sample/sample_grid.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace sinter::sample {

std::pair<int, int> gridCellSize(const std::vector<torch::Tensor>& images) {
  int width = 0, height = 0;
  for (const torch::Tensor& image : images) {
    height = std::max(height, static_cast<int>(image.size(0)));
    width = std::max(width, static_cast<int>(image.size(1)));
  }
  return {width, height};
}

torch::Tensor composeGrid(const std::vector<std::vector<torch::Tensor>>& cells, int cellWidth, int cellHeight) {
  const int64_t rows = static_cast<int64_t>(cells.size()), columns = rows ? static_cast<int64_t>(cells.front().size()) : 0;
  if (rows == 0 || columns == 0 || cellWidth <= 0 || cellHeight <= 0) throw std::invalid_argument("a sample grid needs at least one cell");
  // Mid-grey where a smaller image leaves its cell uncovered.
  torch::Tensor grid = torch::full({rows * cellHeight, columns * cellWidth, 3}, 128, torch::kUInt8);
  for (int64_t r = 0; r < rows; ++r) {
    if (static_cast<int64_t>(cells[r].size()) != columns) throw std::invalid_argument("every row of a sample grid has one cell per column");
    for (int64_t c = 0; c < columns; ++c) {
      const torch::Tensor& image = cells[r][c];
      const int64_t h = image.size(0), w = image.size(1);
      if (image.dim() != 3 || image.size(2) != 3 || image.scalar_type() != torch::kUInt8 || h > cellHeight || w > cellWidth)
        throw std::invalid_argument("a sample grid cell is [H, W, 3] uint8 within the cell size, got " + c10::str(image.sizes()));
      const int64_t top = r * cellHeight + (cellHeight - h) / 2, left = c * cellWidth + (cellWidth - w) / 2;
      grid.slice(0, top, top + h).slice(1, left, left + w).copy_(image);
    }
  }
  return grid;
}

std::string gridLayoutJson(const GridLayout& layout) {
  using nlohmann::ordered_json;
  auto optional = [](const std::optional<long long>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  ordered_json rows = ordered_json::array(), columns = ordered_json::array();
  for (const GridRow& r : layout.rows)
    rows.push_back({{"base", r.base},
                    {"file", r.path.empty() ? std::string() : std::filesystem::path(r.path).filename().string()},
                    {"path", r.path},
                    {"step", optional(r.step)},
                    {"epoch", optional(r.epoch)}});
  for (const ResolvedSample& s : layout.columns) {
    ordered_json c{{"prompt", s.prompt}, {"negative_prompt", s.negativePrompt}, {"seed", s.seed}, {"width", s.width},
                   {"height", s.height}, {"sample_steps", s.steps},           {"scale", s.scale}, {"sampler", s.sampler}};
    if (s.guidanceScale) c["guidance_scale"] = *s.guidanceScale;
    columns.push_back(c);
  }
  const ordered_json j{{"rows", rows},
                       {"columns", columns},
                       {"cell_width", layout.cellWidth},
                       {"cell_height", layout.cellHeight},
                       {"model", layout.model}};
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace sinter::sample
