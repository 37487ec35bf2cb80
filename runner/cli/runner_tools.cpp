#include "cli/runner_tools.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/demo_assets.h"
#include "core/exit_codes.h"
#include "models/random_checkpoint.h"
#include "train/benchmark.h"

namespace sinter::runner {

namespace {

std::optional<std::string> value(const ParsedArgs& args, const char* name) {
  auto it = args.extraValues.find(name);
  if (it == args.extraValues.end()) return std::nullopt;
  return it->second;
}

// --model_size full|tiny (full when absent)
std::optional<bool> tinySize(const ParsedArgs& args) {
  const std::string size = value(args, "model_size").value_or("full");
  if (size == "full") return false;
  if (size == "tiny") return true;
  spdlog::error("--model_size takes full or tiny, not '{}'", size);
  return std::nullopt;
}

std::uint64_t seedOf(const Config& config) { return isUnset(config.get("seed")) ? 0 : static_cast<std::uint64_t>(config.getInt("seed")); }

}  // namespace

std::optional<int> runTool(const ParsedArgs& args, const Config& config) {
  try {
    if (auto out = value(args, "init_checkpoint")) {
      if (config.family() != Family::SDXL) {
        spdlog::error("--init_checkpoint needs --model_family sdxl (the only family this build can write)");
        return kExitBadInput;
      }
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      spdlog::info("writing a {} SDXL checkpoint with random weights to {}", *tiny ? "tiny" : "full-size", *out);
      const std::filesystem::path parent = std::filesystem::path(*out).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      models::writeRandomSdxlCheckpoint(*out, *tiny, seedOf(config));
      spdlog::info("wrote {}", *out);
      return kExitOk;
    }
    if (auto dir = value(args, "init_dataset")) {
      writeDemoDataset(*dir, 12, seedOf(config));
      spdlog::info("wrote a generated dataset to {}", *dir);
      return kExitOk;
    }
    if (auto dir = value(args, "init_tokenizer")) {
      writeByteLevelClipVocabulary(*dir);
      spdlog::info("wrote a byte-level CLIP vocabulary to {}", *dir);
      return kExitOk;
    }
    if (auto steps = value(args, "benchmark_steps")) {
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      long long n = 0;
      try {
        n = std::stoll(*steps);
      } catch (const std::exception&) {
      }
      if (n < 1) {
        spdlog::error("--benchmark_steps takes a positive number of steps, not '{}'", *steps);
        return kExitBadInput;
      }
      return train::runBenchmark(config, n, *tiny);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitTrainingFailed;
  }
  return std::nullopt;
}

}  // namespace sinter::runner
