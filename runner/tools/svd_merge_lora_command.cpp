#include "tools/svd_merge_lora_command.h"

#include <spdlog/spdlog.h>

#include <iostream>
#include <tuple>

#include "core/exit_codes.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "network/lora_metadata.h"
#include "tools/lora_merge_inputs.h"
#include "tools/lora_svd_merge.h"
#include "tools/tool_files.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

const char* const kSvdMergeLoraHelp =
    "usage: sinter-runner svd_merge_lora --models A.safetensors [B.safetensors ...] --ratios 1.0 [0.5 ...] --save_to OUT.safetensors\n"
    "           [--new_rank 4] [--new_conv_rank N] [--precision float|fp16|bf16] [--save_precision float|fp16|bf16]\n"
    "           [--device cpu|cuda] [--no_metadata]\n"
    "\n"
    "LoRAs merged into one LoRA of a chosen rank, as sd-scripts' networks/svd_merge_lora.py does it (same flags and\n"
    "defaults): each module's weight deltas (ratio * alpha/rank * up @ down) are summed over the files and factored\n"
    "back by SVD to its largest directions, up and down clamped to their 0.99 quantile; alpha is the new rank.\n"
    "  --models F ...         the LoRA files (lora_down/lora_up modules; ranks may differ)\n"
    "  --ratios X ...         one ratio per file\n"
    "  --new_rank N           the rank of the Linear and 1x1-conv modules (default 4; at most the weight's sides)\n"
    "  --new_conv_rank N      the rank of the 3x3-conv modules (default: --new_rank)\n"
    "  --precision P          the sums' precision: float (default), fp16 or bf16 (the SVD runs in float)\n"
    "  --save_precision P     the written tensors: float, fp16 or bf16 (default: --precision)\n"
    "  --device D             where the sums and SVDs run: cpu (default) or cuda\n"
    "  --lbws L ...           a JSON list of block weights per LoRA (12 or 20 numbers: SDXL's blocks; 17 or 26: SD's)\n"
    "  --no_metadata          write no modelspec.* (the minimum ss_* keys are kept)\n";

int runSvdMergeLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("svd_merge_lora"));
  if (flags.has("help")) {
    std::cout << kSvdMergeLoraHelp;
    return kExitOk;
  }
  const std::vector<LoraToMerge> loras = lorasToMerge(flags);
  const std::string saveTo = flags.valueOr("save_to", "");
  if (saveTo.empty()) throw std::invalid_argument("--save_to: the merged LoRA's file is required");
  requireSafetensorsPath("--save_to", saveTo, true);
  SvdMergeOptions options;
  std::tie(options.newRank, options.newConvRank) = newRankFlags(flags);
  options.mergeDtype = network::savePrecisionDtype(flags.valueOr("precision", "float"));
  const torch::Dtype saveDtype =
      flags.value("save_precision") ? network::savePrecisionDtype(*flags.value("save_precision")) : options.mergeDtype;
  options.device = toolDevice("--device", flags.valueOr("device", "cpu"));

  spdlog::info("new rank: {}, new conv rank: {}", options.newRank, options.newConvRank);
  for (const LoraToMerge& lora : loras) spdlog::info("loading: {}", lora.path);
  std::vector<std::pair<std::string, torch::Tensor>> tensors = svdMergeLoras(loras, options);
  for (auto& [key, tensor] : tensors)
    if (tensor.is_floating_point()) tensor = tensor.to(saveDtype);
  spdlog::info("{} modules merged", tensors.size() / 3);

  // build_minimum_network_metadata: the ranks asked for, conv_dim/conv_alpha as network_args.
  const std::string rank = std::to_string(options.newRank), convRank = std::to_string(options.newConvRank);
  network::Metadata metadata = mergedLoraMetadata(loras, rank, rank, flags.has("no_metadata"), saveTo);
  metadata["ss_network_module"] = "networks.lora";
  metadata["ss_network_args"] = "{\"conv_dim\": " + convRank + ", \"conv_alpha\": " + convRank + "}";
  io::writeSafetensors(saveTo, tensors, metadata);
  spdlog::info("saved {}", saveTo);
  return kExitOk;
}

}  // namespace sinter::tools
