#include "core/optimizer_table.h"

#include "core/ascii_text.h"

namespace sinter {

const std::vector<OptimizerRow>& optimizerTable() {
  using A = OptimizerArguments;
  static const char* kAdamWKeys = "weight_decay, betas, eps";
  static const char* kBitsAndBytesAdamWKeys = "weight_decay, betas, eps, amsgrad=False, min_8bit_size";
  static const char* kLion8bitKeys = "betas, weight_decay, min_8bit_size";
  // Bytes: AdamW's two float32 moments 8, 8-bit ones 2; Lion's and SGD's one moment 4 (8-bit: 1);
  // Adafactor's factored second moment, rows and columns of each matrix, about 0.05; D-Adaptation's
  // and Prodigy's moments plus their s and x0 buffers.
  static const std::vector<OptimizerRow> rows = {
      {"AdamW", "torch.optim.adamw.AdamW", false, 8, true, A::AdamW, kAdamWKeys},
      {"AdamW8bit", "bitsandbytes.optim.adamw.AdamW8bit", true, 2, true, A::AdamW, kBitsAndBytesAdamWKeys},
      {"PagedAdamW8bit", "bitsandbytes.optim.adamw.PagedAdamW8bit", true, 2, true, A::AdamW, kBitsAndBytesAdamWKeys},
      {"Lion", "lion_pytorch.lion_pytorch.Lion", false, 4, true, A::Lion, "betas, weight_decay, use_triton, decoupled_weight_decay=False"},
      {"Adafactor", "transformers.optimization.Adafactor", false, 0.05, true, A::Adafactor,
       "scale_parameter, relative_step, warmup_init, beta1, decay_rate, clip_threshold, eps, weight_decay"},
      {"Prodigy", "prodigyopt.prodigy.Prodigy", false, 16, false, A::DAdaptation, ""},
      {"SGDNesterov", "torch.optim.sgd.SGD", false, 4, true, A::Sgd, "momentum, dampening=0, weight_decay"},
      {"DAdaptAdam", "dadaptation.dadapt_adam.DAdaptAdam", false, 12, false, A::DAdaptation, ""},
      {"PagedAdamW", "bitsandbytes.optim.adamw.PagedAdamW", false, 8, true, A::AdamW, kBitsAndBytesAdamWKeys},
      {"PagedAdamW32bit", "bitsandbytes.optim.adamw.PagedAdamW32bit", false, 8, true, A::AdamW, kBitsAndBytesAdamWKeys},
      {"Lion8bit", "bitsandbytes.optim.lion.Lion8bit", true, 1, true, A::Lion, kLion8bitKeys},
      {"PagedLion8bit", "bitsandbytes.optim.lion.PagedLion8bit", true, 1, true, A::Lion, kLion8bitKeys},
      {"SGDNesterov8bit", "bitsandbytes.optim.sgd.SGD8bit", true, 1, true, A::Sgd, "momentum, dampening, weight_decay, min_8bit_size"},
      // sd-scripts maps "DAdaptation" to DAdaptAdamPreprint.
      {"DAdaptation", "dadaptation.experimental.dadapt_adam_preprint.DAdaptAdamPreprint", false, 12, false, A::DAdaptation, ""},
      {"DAdaptAdamPreprint", "dadaptation.experimental.dadapt_adam_preprint.DAdaptAdamPreprint", false, 12, false, A::DAdaptation, ""},
      {"DAdaptLion", "dadaptation.dadapt_lion.DAdaptLion", false, 8, false, A::DAdaptation, ""},
  };
  return rows;
}

const OptimizerRow* findOptimizerRow(const std::string& name) {
  const std::string wanted = lowerAscii(trimAscii(name));
  for (const OptimizerRow& row : optimizerTable())
    if (lowerAscii(row.name) == wanted) return &row;
  return nullptr;
}

std::vector<std::string> optimizerNames() {
  std::vector<std::string> names;
  for (const OptimizerRow& row : optimizerTable()) names.push_back(row.name);
  return names;
}

}  // namespace sinter
