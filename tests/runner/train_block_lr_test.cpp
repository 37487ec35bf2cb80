// block_lr (sdxl_train.py): its 23 values parsed as sd-scripts reads them, and every parameter of
// the SDXL U-Net in the block get_block_params_to_optimize puts it in.
#include <gtest/gtest.h>

#include <map>

#include "models/unet/sdxl_unet.h"
#include "train/methods/block_learning_rates.h"
#include "train/sdxl/sdxl_block_lr.h"

using namespace sinter;
using namespace sinter::train;

TEST(BlockLr, ParsesTheValuesSdScriptsReads) {
  std::string text;
  for (int i = 0; i < 23; ++i) text += (i ? ", " : "") + std::string(i % 2 ? "1e-6" : "0");
  const std::vector<double> rates = parseBlockLearningRates(text, kSdxlBlockLrCount);
  ASSERT_EQ(rates.size(), 23u);
  EXPECT_EQ(rates[0], 0.0);
  EXPECT_EQ(rates[1], 1e-6);
  auto error = [](const std::string& t) {
    try {
      parseBlockLearningRates(t, kSdxlBlockLrCount);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("1e-6,1e-6").find("block_lr must have 23 values (it has 2)"), std::string::npos);
  EXPECT_NE(error(text + ",").find("empty"), std::string::npos);
  EXPECT_NE(error("abc" + text.substr(1)).find("'abc"), std::string::npos);
  EXPECT_NE(error("-1" + text.substr(1)).find("at least 0"), std::string::npos);
}

TEST(BlockLr, NamesMapToSdScriptsBlocks) {
  EXPECT_EQ(sdxlBlockLrIndex("time_embed.0.weight"), 0);
  EXPECT_EQ(sdxlBlockLrIndex("label_emb.0.2.bias"), 0);
  EXPECT_EQ(sdxlBlockLrIndex("input_blocks.0.0.weight"), 1);
  EXPECT_EQ(sdxlBlockLrIndex("input_blocks.8.0.out_layers.3.weight"), 9);
  EXPECT_EQ(sdxlBlockLrIndex("middle_block.1.proj_in.weight"), 11);
  EXPECT_EQ(sdxlBlockLrIndex("output_blocks.0.0.skip_connection.weight"), 13);
  EXPECT_EQ(sdxlBlockLrIndex("output_blocks.8.1.proj_out.bias"), 21);
  EXPECT_EQ(sdxlBlockLrIndex("out.2.weight"), 22);
  EXPECT_THROW(sdxlBlockLrIndex("input_blocks.9.0.weight"), std::invalid_argument);
  EXPECT_THROW(sdxlBlockLrIndex("outer.weight"), std::invalid_argument);
}

// Every parameter of the U-Net has a block (the tiny U-Net has the SDXL layout with fewer input
// and output blocks): the embeddings, the three middle blocks and the out layers among them.
TEST(BlockLr, EveryUnetParameterHasABlock) {
  models::SdxlUnet unet(models::SdxlUnetConfig::tiny());
  std::map<int, int> perBlock;
  for (const auto& p : unet->named_parameters(/*recurse=*/true)) ++perBlock[sdxlBlockLrIndex(p.key())];
  for (int block : {0, 1, 10, 11, 12, 13, 22}) EXPECT_GT(perBlock[block], 0) << block;
}
