// The checkpoint grid's picture (sample/sample_grid.h): cells of the largest image's size, smaller
// images centred on mid-grey, and the layout the app reads back from the PNG's text chunk.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "sample/png_file.h"
#include "sample/sample_grid.h"

namespace fs = std::filesystem;
using namespace sinter::sample;

namespace {

torch::Tensor filled(int64_t h, int64_t w, int value) { return torch::full({h, w, 3}, value, torch::kUInt8); }

}  // namespace

TEST(SampleGridPicture, CellsOfTheLargestSizeWithSmallerImagesCentred) {
  const std::vector<std::vector<torch::Tensor>> cells{{filled(4, 6, 10), filled(2, 2, 20)}, {filled(4, 4, 30), filled(3, 6, 40)}};
  std::vector<torch::Tensor> all;
  for (const auto& row : cells) all.insert(all.end(), row.begin(), row.end());
  const auto [width, height] = gridCellSize(all);
  EXPECT_EQ(width, 6);
  EXPECT_EQ(height, 4);
  const torch::Tensor grid = composeGrid(cells, width, height);
  ASSERT_EQ(grid.sizes(), (std::vector<int64_t>{8, 12, 3}));
  EXPECT_TRUE(grid.slice(0, 0, 4).slice(1, 0, 6).eq(10).all().item<bool>());
  // 2x2 in a 6x4 cell: rows 1-2, columns 2-3 of the cell; grey around it.
  EXPECT_TRUE(grid.slice(0, 1, 3).slice(1, 8, 10).eq(20).all().item<bool>());
  EXPECT_EQ(grid[0][6][0].item<int>(), 128);
  EXPECT_EQ(grid[3][11][0].item<int>(), 128);
  EXPECT_TRUE(grid.slice(0, 4, 8).slice(1, 1, 5).eq(30).all().item<bool>());
  EXPECT_EQ(grid[4][0][0].item<int>(), 128);
  EXPECT_TRUE(grid.slice(0, 4, 7).slice(1, 6, 12).eq(40).all().item<bool>());  // 3 rows: (4 - 3) / 2 = 0 above
  EXPECT_EQ(grid[7][6][0].item<int>(), 128);

  EXPECT_THROW(composeGrid({{filled(2, 2, 0)}, {}}, 2, 2), std::invalid_argument);  // a row short of a cell
  EXPECT_THROW(composeGrid({{filled(5, 2, 0)}}, 2, 4), std::invalid_argument);      // larger than its cell
}

TEST(SampleGridPicture, LayoutTravelsInThePngTextChunk) {
  GridLayout layout;
  layout.rows.resize(2);
  layout.rows[0].base = true;
  layout.rows[0].step = 0;
  layout.rows[1].path = "/out/t-000002.safetensors";
  layout.rows[1].epoch = 2;
  ResolvedSample s;
  s.prompt = u8"猫 on a mat";
  s.negativePrompt = "dog";
  s.seed = 5;
  s.width = 64;
  s.height = 32;
  s.steps = 4;
  s.scale = 5.0;
  s.sampler = "DDIM";
  layout.columns = {s};
  layout.cellWidth = 64;
  layout.cellHeight = 32;
  layout.model = "base.safetensors";
  const fs::path path = fs::temp_directory_path() / ("sinter_grid_layout_" + std::to_string(::getpid()) + ".png");
  writePng(path.string(), filled(64, 64, 0), {{kGridLayoutKey, gridLayoutJson(layout)}});
  const PngText text = readPngText(path.string());
  fs::remove(path);
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].first, "sinter_grid");
  const nlohmann::json j = nlohmann::json::parse(text[0].second);
  EXPECT_EQ(j["rows"][0]["base"], true);
  EXPECT_EQ(j["rows"][0]["file"], "");
  EXPECT_EQ(j["rows"][0]["step"], 0);
  EXPECT_TRUE(j["rows"][0]["epoch"].is_null());
  EXPECT_EQ(j["rows"][1]["file"], "t-000002.safetensors");
  EXPECT_EQ(j["rows"][1]["path"], "/out/t-000002.safetensors");
  EXPECT_TRUE(j["rows"][1]["step"].is_null());
  EXPECT_EQ(j["rows"][1]["epoch"], 2);
  EXPECT_EQ(j["columns"][0]["prompt"], u8"猫 on a mat");
  EXPECT_EQ(j["columns"][0]["negative_prompt"], "dog");
  EXPECT_EQ(j["columns"][0]["seed"], 5);
  EXPECT_EQ(j["columns"][0]["sample_steps"], 4);
  EXPECT_EQ(j["columns"][0]["sampler"], "DDIM");
  EXPECT_FALSE(j["columns"][0].contains("guidance_scale"));
  EXPECT_EQ(j["cell_width"], 64);
  EXPECT_EQ(j["cell_height"], 32);
  EXPECT_EQ(j["model"], "base.safetensors");
}
