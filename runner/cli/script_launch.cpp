#include "cli/script_launch.h"

#include <map>

namespace sinter::runner {

namespace {

const SourceLocation kCommandLine{"command line", 0, 0};

// accelerate launch's flags that change nothing in a Sinter run, with why (values taken or not).
struct AccelerateFlag {
  bool takesValue;
  const char* why;
};
const std::map<std::string, AccelerateFlag>& inertAccelerateFlags() {
  static const std::map<std::string, AccelerateFlag> flags{
      {"num_cpu_threads_per_process", {true, "the runner sizes its own thread pools"}},
      {"multi_gpu", {false, "--num_processes (--nproc_per_node) chooses the GPUs"}},
      {"mixed_precision", {true, "sd-scripts' own --mixed_precision (after the script) decides, here as there"}},
      {"main_process_port", {true, "the processes of one host meet on a port of their own (torchrun's MASTER_PORT when set)"}},
      {"gpu_ids", {true, "the runner takes the first N GPUs (CUDA_VISIBLE_DEVICES chooses others)"}},
      {"dynamo_backend", {true, "Sinter compiles natively: compile = true and compile_backend (after the script or in the config)"}},
      {"dynamo_mode", {true, "Sinter compiles natively: compile_mode"}},
      {"dynamo_use_fullgraph", {false, "Sinter compiles natively: compile_fullgraph"}},
      {"dynamo_use_dynamic", {false, "Sinter compiles natively: compile_dynamic"}},
      {"config_file", {true, "accelerate's own configuration file is not read; sd-scripts' --config_file goes after the script"}},
      {"quiet", {false, "the runner's log is the same either way"}},
  };
  return flags;
}

std::string flagName(const std::string& token) {
  const std::string name = token.substr(token.rfind("--", 0) == 0 ? 2 : 1);
  return name.substr(0, name.find('='));
}

}  // namespace

std::optional<ScriptLaunch> translateScriptLaunch(const std::vector<std::string>& args) {
  size_t at = 0;
  while (at < args.size() && (args[at].rfind("-", 0) == 0 || !findTrainingScript(args[at]))) ++at;
  if (at == args.size()) return std::nullopt;
  ScriptLaunch launch;
  launch.script = findTrainingScript(args[at]);
  std::vector<Diagnostic> errors;
  for (size_t i = 0; i < at; ++i) {
    const std::string& token = args[i];
    const bool inlineValue = token.find('=') != std::string::npos;
    const std::string name = token.rfind("-", 0) == 0 ? flagName(token) : "";
    auto value = [&]() -> std::string {
      if (inlineValue) return token.substr(token.find('=') + 1);
      return i + 1 < at && args[i + 1].rfind("-", 0) != 0 ? args[++i] : "";
    };
    if (name == "num_processes") {
      launch.args.insert(launch.args.end(), {"--nproc_per_node", value()});
    } else if (name == "num_machines" || name == "machine_rank") {
      const std::string v = value();
      if ((name == "num_machines" && v != "1") || (name == "machine_rank" && v != "0"))
        errors.push_back(Diagnostic{Severity::Error, kCommandLine, name,
                                    "--" + name + " " + v + ": several hosts are started by a launcher that sets torchrun's "
                                    "RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT, not by sinter-runner itself"});
    } else if (auto it = inertAccelerateFlags().find(name); it != inertAccelerateFlags().end()) {
      const std::string v = it->second.takesValue ? value() : "";
      launch.warnings.push_back(Diagnostic{Severity::Warning, kCommandLine, name,
                                           "accelerate's --" + name + (v.empty() ? "" : " " + v) + " changes nothing here: " + it->second.why});
    } else {
      launch.args.push_back(token);  // the runner's own (--nproc_per_node, --dry_run, --events ...)
    }
  }
  if (!errors.empty()) throw ConfigError(std::move(errors));
  launch.args.insert(launch.args.end(), args.begin() + static_cast<long>(at) + 1, args.end());
  return launch;
}

std::vector<Diagnostic> applyTrainingScript(const TrainingScript& script, Config& config) {
  std::vector<Diagnostic> out;
  auto conflict = [&](const std::string& key, const std::string& said) {
    out.push_back(Diagnostic{Severity::Error, config.whereSet(key), key,
                             key + " = " + said + ", but " + script.name + " trains " +
                                 (key == "model_family" ? (script.family ? toString(*script.family) : "SD 1.x/2.x")
                                                        : toString(script.tab)) +
                                 ": leave " + key + " out, or run the script that trains it"});
  };
  // What the config itself says (an unset key reads as its default: lora, auto).
  const std::string family = config.has("model_family") ? config.getString("model_family") : "";
  if (script.family) {
    if (!family.empty() && family != "auto" && family != toString(*script.family)) conflict("model_family", family);
    else config.set("model_family", std::string(toString(*script.family)), kCommandLine);
  } else if (const std::optional<Family> said = familyFromString(family); said && !scriptTrains(script, *said)) {
    conflict("model_family", family);
  }
  const std::string type = config.has("training_type") ? config.getString("training_type") : "";
  // A full-weight script trains DreamBooth or a fine-tune as the config says; the others their own type.
  const bool fullWeights = trainsFullWeights(script.tab);
  const bool saysFullWeights = type == toString(Tab::DreamBooth) || type == toString(Tab::FineTune);
  if (!type.empty() && (fullWeights ? !saysFullWeights : type != toString(script.tab))) {
    conflict("training_type", type);
  } else if (!(fullWeights && saysFullWeights)) {
    const Tab tab = script.fineTuneWithInJson && !config.getString("in_json").empty() ? Tab::FineTune : script.tab;
    config.set("training_type", std::string(toString(tab)), kCommandLine);
  }
  return out;
}

}  // namespace sinter::runner
