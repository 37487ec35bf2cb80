#include "tools/resize_lora_command.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <tuple>
#include <numeric>

#include "core/exit_codes.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "network/python_format.h"
#include "tools/bundled_embeddings.h"
#include "tools/lora_resize.h"
#include "tools/tool_files.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

namespace {

std::string percent(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * x);
  return text;
}

}  // namespace

int runResizeLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("resize_lora"));
  const std::string model = flags.valueOr("model", ""), saveTo = flags.valueOr("save_to", "");
  if (model.empty()) throw std::invalid_argument("--model: the LoRA file to resize is required");
  if (saveTo.empty()) throw std::invalid_argument("--save_to: the file to write is required (a .safetensors file)");
  requireSafetensorsPath("--save_to", saveTo, true);
  requireSafetensorsPath("--model", model, false);
  ResizeOptions options;
  std::tie(options.newRank, options.newConvRank) = newRankFlags(flags);
  const std::string method = flags.valueOr("dynamic_method", "");
  options.dynamic = parseDynamicRank(method);
  const std::optional<double> param = flags.number("dynamic_param");
  if (options.dynamic != DynamicRank::Fixed && (!param || *param == 0.0))
    throw std::invalid_argument("--dynamic_method " + method + " needs --dynamic_param (a nonzero number), as in sd-scripts");
  options.dynamicParam = param.value_or(0.0);
  options.saveDtype = network::savePrecisionDtype(flags.valueOr("save_precision", "float"));
  options.device = toolDevice("--device", flags.valueOr("device", "cpu"));
  if (flags.value("svd_lowrank_niter"))
    spdlog::info("--svd_lowrank_niter: not needed here: the SVD works on each module's two factors, exact at any size");

  spdlog::info("loading {}", model);
  // Bundled embeddings (pivotal tuning's bundle_emb.*) are no module: kept as they are, not even cast
  // to --save_precision (resize_lora.py copies them in its float32).
  const LoraWithEmbeddings read = splitBundledEmbeddings(readToolLora(model), model);
  network::Metadata metadata = network::readLoraMetadata(model);
  if (options.dynamic != DynamicRank::Fixed)
    spdlog::info("dynamically determining new alphas and dims based off {}: {}, max rank is {}", method,
                 network::pythonFloatRepr(options.dynamicParam), options.newRank);
  ResizeResult result = resizeLora(read.modules, options);
  for (auto& kv : bundledEmbeddingTensors(read.embeddings)) result.tensors.push_back(std::move(kv));
  for (const BundledEmbedding& e : read.embeddings) spdlog::info("bundled embedding {}: kept unchanged", e.describe());

  std::vector<double> fro;
  for (const ResizedModule& m : result.modules) {
    if (std::isfinite(m.froRetained)) fro.push_back(m.froRetained);
    if (!flags.has("verbose")) continue;
    std::string line = m.name + std::string(m.name.size() < 75 ? 75 - m.name.size() : 0, ' ') + " | sum(S) retained: " +
                       percent(m.sumRetained) + ", fro retained: " + percent(m.froRetained) + ", max(S) ratio: ";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.1f", m.maxRatio);
    line += ratio;
    if (options.dynamic != DynamicRank::Fixed)
      line += ", dynamic | dim: " + std::to_string(m.newRank) + ", alpha: " + network::pythonFloatRepr(m.newAlpha);
    spdlog::info("{}", line);
  }
  const double mean = fro.empty() ? 0.0 : std::accumulate(fro.begin(), fro.end(), 0.0) / static_cast<double>(fro.size());
  double variance = 0;
  for (double f : fro) variance += (f - mean) * (f - mean);
  const double deviation = fro.empty() ? 0.0 : std::sqrt(variance / static_cast<double>(fro.size()));
  char summary[96];
  std::snprintf(summary, sizeof summary, "%.2f%% | std: %.3f", 100.0 * mean, deviation);
  spdlog::info("{} modules resized; average Frobenius norm retention: {}", result.modules.size(), summary);
  int64_t kept = 0;  // modules whose rank is at or below the one asked for already
  for (const ResizedModule& m : result.modules) kept += m.newRank == m.oldRank ? 1 : 0;
  if (kept > 0 && options.dynamic == DynamicRank::Fixed)
    spdlog::info("{} modules keep their rank: a resize never adds directions a module does not have", kept);
  if (!result.copied.empty())
    spdlog::warn("{} tensors are of no lora_down/lora_up module and were copied unchanged (as resize_lora.py copies them), "
                 "such as {}",
                 result.copied.size(), result.copied.front());

  // The metadata as resize_lora.py leaves it.
  const std::string comment = metadata.count("ss_training_comment") ? metadata["ss_training_comment"] : "";
  const std::string oldDim = std::to_string(result.largestOldRank);
  if (options.dynamic == DynamicRank::Fixed) {
    const std::string conv = options.newRank == options.newConvRank ? "" : " (conv: " + std::to_string(options.newConvRank) + ")";
    metadata["ss_training_comment"] = "dimension is resized from " + oldDim + " to " + std::to_string(options.newRank) + conv + "; " + comment;
    metadata["ss_network_dim"] = std::to_string(options.newRank);
    metadata["ss_network_alpha"] = network::pythonFloatRepr(result.lastNewAlpha);
  } else {
    metadata["ss_training_comment"] = "Dynamic resize with " + method + ": " + network::pythonFloatRepr(options.dynamicParam) +
                                      " from " + oldDim + "; " + comment;
    metadata["ss_network_dim"] = "Dynamic";
    metadata["ss_network_alpha"] = "Dynamic";
  }
  // The input's file hashes describe the input; this build writes none (nor does its training).
  metadata.erase("sshs_model_hash");
  metadata.erase("sshs_legacy_hash");

  io::writeSafetensors(saveTo, result.tensors, metadata);
  spdlog::info("saved {}", saveTo);
  return kExitOk;
}

}  // namespace sinter::tools
