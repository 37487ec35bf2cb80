#pragma once
// block_lr (sdxl_train.py): one learning rate per block of the denoiser, comma-separated, used in
// place of learning_rate for it; a block whose rate is 0 is not trained. The family says how many
// blocks there are and which block a parameter belongs to (FamilyRegistration::blockLr*).
#include <string>
#include <vector>

namespace sinter::train {

// `count` rates (sd-scripts: [float(lr) for lr in block_lr.split(",")], and "block_lr must have
// 23 values"); each a number of at least 0. Else std::invalid_argument naming block_lr.
std::vector<double> parseBlockLearningRates(const std::string& text, size_t count);

}  // namespace sinter::train
