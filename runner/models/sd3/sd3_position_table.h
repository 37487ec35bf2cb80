#pragma once
// The SD 3 MMDiT's sin-cos position tables: the one stored in the checkpoint (sd-scripts'
// get_2d_sincos_pos_embed) and, with enable_scaled_pos_embed, the resolution-scaled tables
// sd-scripts' MMDiT.enable_scaled_pos_embed makes (get_scaled_2d_sincos_pos_embed, KohakuBlueleaf's
// scheme: a training resolution's patches get the same relative positions whatever its size).
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace sinter::models {

// get_2d_sincos_pos_embed(hidden, gridSize) (MAE's table, float64 then float32): [gridSize², hidden],
// the first half of the channels for the column, [sin, cos] each.
torch::Tensor sd3SincosPosEmbed(int64_t hidden, int64_t gridSize);

// get_scaled_2d_sincos_pos_embed(hidden, gridSize, sample_size=sampleSize, base_size=baseSize): the same
// table over positions i / gridSize · scale - shift (float32, as numpy computes them), scale =
// baseSize · gridSize / sampleSize, centred so the middle sampleSize patches match base_size's spacing.
torch::Tensor sd3ScaledSincosPosEmbed(int64_t hidden, int64_t gridSize, int64_t sampleSize, int64_t baseSize = 16);

// enable_scaled_pos_embed's tables: one per training latent size (a dataset's resolution / 8), each
// POS_EMBED_MAX_RATIO (1.5) times that many patches wide; an image takes the table of the smallest
// size whose area bound holds its patch count, and an image wider than its table adds a table of its
// own (cropped_scaled_pos_embed). Tables are made on the CPU and kept where first used.
class Sd3ScaledPosEmbeds {
 public:
  Sd3ScaledPosEmbeds(int64_t hidden, int64_t patchSize, std::vector<int64_t> latentSizes);

  // The side of the table an image of h x w patches crops from (adding its table where needed).
  int64_t sideFor(int64_t h, int64_t w);
  // That table, [side², hidden], on `device` in `dtype` (the copy kept for the next call).
  torch::Tensor tableFor(int64_t h, int64_t w, torch::Device device, torch::Dtype dtype);

  // (area bound, patched size), ascending: what sd-scripts logs as resolution_area_to_latent_size.
  const std::vector<std::pair<int64_t, int64_t>>& areaToPatchedSize() const { return areaToPatched_; }

 private:
  int64_t patchedSizeFor(int64_t h, int64_t w);

  int64_t hidden_;
  std::vector<std::pair<int64_t, int64_t>> areaToPatched_;
  std::map<int64_t, torch::Tensor> tables_;  // patched size -> [1, side², hidden]
};

}  // namespace sinter::models
