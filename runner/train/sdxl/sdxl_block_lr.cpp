#include "train/sdxl/sdxl_block_lr.h"

#include <stdexcept>

#include "core/ascii_text.h"

namespace sinter::train {

namespace {

// The number after "<prefix>" up to the next '.', checked against the blocks there are.
int blockNumber(const std::string& name, const std::string& prefix, int count) {
  const size_t end = name.find('.', prefix.size());
  const std::string digits = name.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 3 || std::stoi(digits) >= count)
    throw std::invalid_argument("block_lr: unexpected U-Net parameter name: " + name);
  return std::stoi(digits);
}

}  // namespace

int sdxlBlockLrIndex(const std::string& name) {
  if (startsWith(name, "time_embed.") || startsWith(name, "label_emb.")) return 0;
  if (startsWith(name, "input_blocks.")) return 1 + blockNumber(name, "input_blocks.", 9);
  if (startsWith(name, "middle_block.")) return 10 + blockNumber(name, "middle_block.", 3);
  if (startsWith(name, "output_blocks.")) return 13 + blockNumber(name, "output_blocks.", 9);
  if (startsWith(name, "out.")) return 22;
  throw std::invalid_argument("block_lr: unexpected U-Net parameter name: " + name);
}

}  // namespace sinter::train
