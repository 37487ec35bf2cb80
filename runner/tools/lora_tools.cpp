#include "tools/lora_tools.h"

#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <stdexcept>

#include "core/exit_codes.h"
#include "core/lora_tool_table.h"
#include "network/lora_network.h"
#include "tools/check_lora_weights_command.h"
#include "tools/convert_flux_lora_command.h"
#include "tools/extract_lora_command.h"
#include "tools/merge_lora_command.h"
#include "tools/resize_lora_command.h"
#include "tools/svd_merge_lora_command.h"

namespace sinter::tools {

namespace {

// Each tool's command, by its name in core's tool table (which holds its flags and usage).
const std::map<std::string, int (*)(const std::vector<std::string>&)> kCommands = {
    {"resize_lora", runResizeLora},
    {"merge_lora", runMergeLora},
    {"svd_merge_lora", runSvdMergeLora},
    {"extract_lora_from_models", runExtractLora},
    {"convert_flux_lora", runConvertFluxLora},
    {"check_lora_weights", runCheckLoraWeights},
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
  for (const LoraToolSpec& spec : loraToolTable()) {
    std::vector<const char*> candidates{spec.name};
    candidates.insert(candidates.end(), spec.aliases.begin(), spec.aliases.end());
    const char* named = nullptr;
    for (const char* name : candidates)
      if (!named && names(args.front(), name)) named = name;
    if (!named) continue;
    // Every tool's errors end the same way: bad flags or input exit 2 (nothing is written before
    // the output's atomic write), anything else 1; the message names the tool.
    for (size_t i = 1; i < args.size(); ++i)
      if (args[i] == "--help" || args[i] == "-h") {
        std::cout << loraToolHelp(spec);
        return kExitOk;
      }
    try {
      return kCommands.at(spec.name)(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const std::invalid_argument& e) {
      spdlog::error("{}: {}", named, e.what());
      return kExitBadInput;
    } catch (const network::LoraError& e) {
      spdlog::error("{}: {}", named, e.what());
      return kExitBadInput;
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", named, e.what());
      return kExitTrainingFailed;
    }
  }
  return std::nullopt;
}

std::string loraToolsUsage() {
  std::string out;
  for (const LoraToolSpec& tool : loraToolTable()) out += std::string("       sinter-runner ") + tool.usage + "\n";
  return out;
}

}  // namespace sinter::tools
