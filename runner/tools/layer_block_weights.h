#pragma once
// --lbws: a weight per U-Net block for each LoRA merged, as sd-scripts' svd_merge_lora.py reads them
// (format_lbws, get_lbw_block_index) for svd_merge_lora and sdxl_merge_lora: a JSON list of 12, 17,
// 20 or 26 numbers, each for a block of the 26 (BASE = the text encoders, IN00-IN11, MID,
// OUT00-OUT11) that its length's table names; a module of a named block takes the weight into its
// scale, the others keep 1.
#include <string>
#include <vector>

namespace sinter::tools {

struct LayerBlockWeights {
  std::vector<double> weights;  // 26; 1 where no weight is given
  std::vector<bool> named;      // 26; the blocks the list's length names
  bool sdxl = false;            // format_lbws' is_sdxl: a list of 12 or 20
  // The factor for the module `loraName` ("lora_unet_input_blocks_4_1_..."), its block read as SDXL's
  // (input_blocks_N) or SD's (down_blocks_N_attentions_M) names say by `sdxl`.
  double factor(const std::string& loraName, bool sdxl) const;
};

// One list per LoRA, all of one length; std::invalid_argument naming the problem otherwise.
std::vector<LayerBlockWeights> parseLayerBlockWeights(const std::vector<std::string>& lbws);

// get_lbw_block_index: 0 for a text encoder's module, 1-25 for the U-Net's blocks, -1 for others.
int lbwBlockIndex(const std::string& loraName, bool sdxl);

}  // namespace sinter::tools
