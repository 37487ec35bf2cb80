#include "tools/convert_flux_lora_command.h"

#include <spdlog/spdlog.h>

#include <iostream>

#include "core/exit_codes.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "tools/flux_lora_layouts.h"
#include "tools/tool_files.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

const char* const kConvertFluxLoraHelp =
    "usage: sinter-runner convert_flux_lora --src_path IN.safetensors --dst_path OUT.safetensors\n"
    "           [--src ai-toolkit|sd-scripts|diffusers|onetrainer] [--dst sd-scripts|ai-toolkit|diffusers|onetrainer]\n"
    "\n"
    "A FLUX LoRA from one trainer's layout to another's, as sd-scripts' networks/convert_flux_lora.py converts it\n"
    "(same flags and defaults: --src ai-toolkit, --dst sd-scripts), and OneTrainer's layout too.\n"
    "  sd-scripts   kohya's names after BFL's modules (lora_unet_double_blocks_0_img_attn_qkv), q/k/v fused\n"
    "  ai-toolkit   diffusers' names under transformer. (also written by diffusers/PEFT; --src/--dst diffusers is the\n"
    "               same), lora_A/lora_B, q/k/v separate, no alpha\n"
    "  onetrainer   diffusers' names under lora_transformer_, lora_down/lora_up/alpha\n"
    "Fused modules become block-diagonal ones and back, as convert_flux_lora.py does it; the metadata is copied.\n"
    "resize_lora, merge_lora and svd_merge_lora read the other layouts as sd-scripts' without this step.\n";

int runConvertFluxLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("convert_flux_lora"));
  if (flags.has("help")) {
    std::cout << kConvertFluxLoraHelp;
    return kExitOk;
  }
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
