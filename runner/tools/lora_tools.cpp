#include "tools/lora_tools.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "core/exit_codes.h"
#include "network/lora_network.h"
#include "tools/check_lora_weights_command.h"
#include "tools/convert_flux_lora_command.h"
#include "tools/extract_lora_command.h"
#include "tools/merge_lora_command.h"
#include "tools/resize_lora_command.h"
#include "tools/svd_merge_lora_command.h"

namespace sinter::tools {

namespace {

struct LoraTool {
  const char* name;    // the command, and sd-scripts' script without ".py"
  const char* usage;   // its line in the runner's --help
  int (*run)(const std::vector<std::string>& args);
};

const LoraTool kLoraTools[] = {
    {"resize_lora", "resize_lora --model IN --save_to OUT [--new_rank N] ...   a LoRA at a smaller rank (resize_lora.py)",
     runResizeLora},
    {"merge_lora", "merge_lora --models A [B ...] --ratios 1 [0.5 ...] [--sd_model CKPT] --save_to OUT   LoRAs merged into a "
                   "checkpoint or into one LoRA (merge_lora.py)",
     runMergeLora},
    {"sdxl_merge_lora", "sdxl_merge_lora ...   the same (sdxl_merge_lora.py)", runMergeLora},
    {"flux_merge_lora", "flux_merge_lora --flux_model F [--clip_l F --clip_l_save_to OUT] ...   the same (flux_merge_lora.py)",
     runMergeLora},
    {"svd_merge_lora", "svd_merge_lora --models A [B ...] --ratios 1 [0.5 ...] --new_rank N --save_to OUT   LoRAs summed and "
                       "factored back to one rank (svd_merge_lora.py)",
     runSvdMergeLora},
    {"extract_lora_from_models", "extract_lora_from_models --model_org A --model_tuned B --save_to OUT [--dim N]   a LoRA of "
                                 "the difference of two checkpoints (extract_lora_from_models.py)",
     runExtractLora},
    {"flux_extract_lora", "flux_extract_lora ...   the same (flux_extract_lora.py)", runExtractLora},
    {"convert_flux_lora", "convert_flux_lora --src ai-toolkit --dst sd-scripts --src_path IN --dst_path OUT   a FLUX LoRA "
                          "between trainers' layouts (convert_flux_lora.py)",
     runConvertFluxLora},
    {"check_lora_weights", "check_lora_weights FILE [-s]   what a LoRA or LyCORIS file holds, each tensor's magnitudes "
                           "(check_lora_weights.py)",
     runCheckLoraWeights},
};

// "resize_lora", "resize_lora.py" or a path ending in "/resize_lora.py".
bool names(const std::string& arg, const std::string& tool) {
  if (arg == tool) return true;
  const std::string script = tool + ".py";
  if (arg == script) return true;
  return arg.size() > script.size() && arg.compare(arg.size() - script.size() - 1, script.size() + 1, "/" + script) == 0;
}

}  // namespace

std::optional<int> runLoraToolIfNamed(const std::vector<std::string>& args) {
  if (args.empty()) return std::nullopt;
  for (const LoraTool& tool : kLoraTools) {
    if (!names(args.front(), tool.name)) continue;
    // Every tool's errors end the same way: bad flags or input exit 2 (nothing is written before
    // the output's atomic write), anything else 1; the message names the tool.
    try {
      return tool.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const std::invalid_argument& e) {
      spdlog::error("{}: {}", tool.name, e.what());
      return kExitBadInput;
    } catch (const network::LoraError& e) {
      spdlog::error("{}: {}", tool.name, e.what());
      return kExitBadInput;
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", tool.name, e.what());
      return kExitTrainingFailed;
    }
  }
  return std::nullopt;
}

std::string loraToolsUsage() {
  std::string out;
  for (const LoraTool& tool : kLoraTools) out += std::string("       sinter-runner ") + tool.usage + "\n";
  return out;
}

}  // namespace sinter::tools
