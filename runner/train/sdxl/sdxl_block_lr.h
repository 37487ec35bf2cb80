#pragma once
// sdxl_train.py's block_lr blocks of the SDXL U-Net (get_block_params_to_optimize): 0 the time
// and label embeddings, 1-9 input_blocks.0-8, 10-12 middle_block.0-2, 13-21 output_blocks.0-8,
// 22 the out layers.
#include <string>

namespace sinter::train {

constexpr int kSdxlBlockLrCount = 23;

// The block of a U-Net parameter ("input_blocks.4.1.proj_in.weight" is 5); a name outside those
// blocks is std::invalid_argument (sd-scripts: "unexpected parameter name").
int sdxlBlockLrIndex(const std::string& unetParameterName);

}  // namespace sinter::train
