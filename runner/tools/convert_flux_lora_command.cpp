#include "tools/convert_flux_lora_command.h"

#include <spdlog/spdlog.h>


#include "core/exit_codes.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "tools/flux_lora_layouts.h"
#include "tools/tool_files.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

int runConvertFluxLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("convert_flux_lora"));
  const std::string in = flags.valueOr("src_path", ""), out = flags.valueOr("dst_path", "");
  if (in.empty()) throw std::invalid_argument("--src_path: the LoRA file to convert is required");
  if (out.empty()) throw std::invalid_argument("--dst_path: the file to write is required");
  requireSafetensorsPath("--src_path", in, false);
  requireSafetensorsPath("--dst_path", out, true);
  const FluxLoraLayout from = parseFluxLoraLayout(flags.valueOr("src", "ai-toolkit"));
  const FluxLoraLayout to = parseFluxLoraLayout(flags.valueOr("dst", "sd-scripts"));
  spdlog::info("Loading source file {}", in);
  const std::map<std::string, torch::Tensor> tensors = network::readLoraTensors(in);
  const std::optional<FluxLoraLayout> found = detectOtherFluxLoraLayout(tensors);
  const FluxLoraLayout actual = found.value_or(FluxLoraLayout::Kohya);
  if (actual != from)
    throw std::invalid_argument("--src " + flags.valueOr("src", "ai-toolkit") + ": " + in + " is in " + fluxLoraLayoutName(actual) +
                                "'s layout");
  spdlog::info("Converting {} to {} format", fluxLoraLayoutName(from), fluxLoraLayoutName(to));
  const ConvertedLora converted = convertFluxLora(tensors, from, to);
  if (converted.tensors.empty())
    throw std::invalid_argument(in + ": no FLUX transformer LoRA module in it (" + std::to_string(tensors.size()) + " tensors)");
  if (!converted.unconverted.empty())
    spdlog::warn("Unsupported keys for {}: {} such as {} (left out)", fluxLoraLayoutName(to), converted.unconverted.size(),
                 converted.unconverted.front());
  spdlog::info("Saving destination file {}", out);
  io::writeSafetensors(out, {converted.tensors.begin(), converted.tensors.end()}, network::readLoraMetadata(in));
  return kExitOk;
}

}  // namespace sinter::tools
