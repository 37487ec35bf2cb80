#include "models/sd3/sd3_position_table.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace sinter::models {

namespace {

constexpr double kPosEmbedMaxRatio = 1.5;  // MMDiT.POS_EMBED_MAX_RATIO

// get_2d_sincos_pos_embed_from_grid over a square grid of `positions` (float32, one axis): the first
// half of the channels encodes the column (np.meshgrid(grid_w, grid_h) puts w in grid[0]).
torch::Tensor sincosTable(int64_t hidden, const torch::Tensor& positions) {
  if (hidden % 4)
    throw std::invalid_argument("SD 3 position table: the width " + std::to_string(hidden) + " is not a multiple of 4");
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  const int64_t n = positions.size(0);
  // omega = 1 / 10000^(i / (D/4)) for each quarter, in float64; the positions' float32 values widened.
  const torch::Tensor omega = 1.0 / torch::pow(10000.0, torch::arange(hidden / 4, f64) / (hidden / 4.0));
  const torch::Tensor pos = positions.to(torch::kFloat64);
  const torch::Tensor rows = pos.view({n, 1}).expand({n, n}).reshape({-1});
  const torch::Tensor cols = pos.view({1, n}).expand({n, n}).reshape({-1});
  auto oneAxis = [&](const torch::Tensor& p) {
    const torch::Tensor out = torch::outer(p, omega);
    return torch::cat({torch::sin(out), torch::cos(out)}, 1);
  };
  return torch::cat({oneAxis(cols), oneAxis(rows)}, 1).to(torch::kFloat32);
}

}  // namespace

torch::Tensor sd3SincosPosEmbed(int64_t hidden, int64_t gridSize) {
  return sincosTable(hidden, torch::arange(gridSize, torch::kFloat32));
}

torch::Tensor sd3ScaledSincosPosEmbed(int64_t hidden, int64_t gridSize, int64_t sampleSize, int64_t baseSize) {
  const double scale = static_cast<double>(baseSize) * static_cast<double>(gridSize) / static_cast<double>(sampleSize);
  const double shift = scale * static_cast<double>(gridSize - sampleSize) / (2.0 * static_cast<double>(gridSize));
  // numpy: float32 arange / int, then * scale - shift with the Python floats taken as float32.
  auto f32 = [](double v) { return torch::tensor(static_cast<float>(v), torch::kFloat32); };
  const torch::Tensor grid = torch::arange(gridSize, torch::kFloat32) / f32(static_cast<double>(gridSize));
  return sincosTable(hidden, grid * f32(scale) - f32(shift));
}

Sd3ScaledPosEmbeds::Sd3ScaledPosEmbeds(int64_t hidden, int64_t patchSize, std::vector<int64_t> latentSizes) : hidden_(hidden) {
  std::set<int64_t> sizes(latentSizes.begin(), latentSizes.end());  // duplicates removed, ascending
  if (sizes.empty()) throw std::invalid_argument("enable_scaled_pos_embed: no training resolution to scale the positions for");
  std::vector<int64_t> patched;
  for (int64_t s : sizes) patched.push_back(s / patchSize);
  // Each size serves areas up to halfway to the next; the last up to its table's whole area.
  for (size_t i = 0; i < patched.size(); ++i) {
    const int64_t bound = i + 1 < patched.size()
                              ? (patched[i] * patched[i] + patched[i + 1] * patched[i + 1]) / 2
                              : static_cast<int64_t>(std::pow(static_cast<double>(patched[i]) * kPosEmbedMaxRatio, 2.0));
    areaToPatched_.emplace_back(bound, patched[i]);
  }
  for (int64_t p : patched) {
    const auto side = static_cast<int64_t>(static_cast<double>(p) * kPosEmbedMaxRatio);
    tables_[p] = sd3ScaledSincosPosEmbed(hidden_, side, p).unsqueeze(0);
  }
}

int64_t Sd3ScaledPosEmbeds::patchedSizeFor(int64_t h, int64_t w) {
  const int64_t area = h * w;
  int64_t patched = areaToPatched_.back().second;  // beyond every bound: the largest
  for (const auto& [bound, size] : areaToPatched_) {
    if (area <= bound) {
      patched = size;
      break;
    }
  }
  const int64_t side = std::llround(std::sqrt(static_cast<double>(tables_.at(patched).size(1))));
  if (h <= side && w <= side) return patched;
  // Too tall or wide for its table: a table of its own and its area bound added, as sd-scripts adds
  // them (with a warning; the bound even where that size had one, which later choices then see).
  patched = std::max(h, w);
  const auto grid = static_cast<int64_t>(static_cast<double>(patched) * kPosEmbedMaxRatio);
  if (!tables_.count(patched)) tables_[patched] = sd3ScaledSincosPosEmbed(hidden_, grid, patched).unsqueeze(0);
  // sd-scripts appends the bound on every such call; a repeated pair changes no later choice, so once.
  const std::pair<int64_t, int64_t> bound{grid * grid, patched};
  if (std::find(areaToPatched_.begin(), areaToPatched_.end(), bound) == areaToPatched_.end()) {
    areaToPatched_.push_back(bound);
    std::sort(areaToPatched_.begin(), areaToPatched_.end());
  }
  return patched;
}

int64_t Sd3ScaledPosEmbeds::sideFor(int64_t h, int64_t w) {
  return std::llround(std::sqrt(static_cast<double>(tables_.at(patchedSizeFor(h, w)).size(1))));
}

torch::Tensor Sd3ScaledPosEmbeds::tableFor(int64_t h, int64_t w, torch::Device device, torch::Dtype dtype) {
  torch::Tensor& table = tables_.at(patchedSizeFor(h, w));
  if (table.device() != device || table.scalar_type() != dtype) table = table.to(device, dtype);
  return table;
}

}  // namespace sinter::models
