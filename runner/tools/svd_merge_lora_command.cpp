#include "tools/svd_merge_lora_command.h"

#include <spdlog/spdlog.h>

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

int runSvdMergeLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("svd_merge_lora"));
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
  // svd_merge_lora.py reads lora_down keys only and drops the rest: the bundled embeddings are
  // carried here, unchanged (each token once), since the merged LoRA is used where they were.
  const std::vector<BundledEmbedding> embeddings = carriedEmbeddings(loras);
  std::vector<std::pair<std::string, torch::Tensor>> tensors = svdMergeLoras(loras, options);
  for (auto& [key, tensor] : tensors)
    if (tensor.is_floating_point()) tensor = tensor.to(saveDtype);
  spdlog::info("{} modules merged", tensors.size() / 3);
  for (auto& kv : bundledEmbeddingTensors(embeddings)) tensors.push_back(std::move(kv));

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
