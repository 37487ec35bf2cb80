#include "cli/runner_cli.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

#include "core/exit_codes.h"
#include "cli/dataset_check_command.h"
#include "cli/queue_command.h"
#include "cli/runner_tools.h"
#include "cli/sample_grid_command.h"
#include "cli/script_launch.h"
#include "core/argv.h"
#include "compile/compile_plan.h"
#include "core/help_text.h"
#include "core/model_family_detect.h"
#include "core/toml_config.h"
#include "core/validation.h"
#include "distributed/process_group.h"
#include "distributed/torchrun_environment.h"
#include "distributed/worker_launcher.h"
#include "train/base/device_info.h"
#include "train/base/event_sink.h"
#include "train/base/run_errors.h"
#include "train/loop/run_preflight.h"
#include "train/loop/stop_request.h"
#include "train/loop/training_run.h"
#include "tools/lora_tools.h"

namespace sinter::runner {

namespace {

// A config that names no model_family is validated as the family its checkpoint's keys show, as the
// run detects it (sd-scripts' rules differ by family: FLUX's and SD 3's partial text cache). The
// file's own problems are the preflight's to report.
Config withDetectedFamily(const Config& config) {
  if (config.family()) return config;
  const std::string model = config.getString("pretrained_model_name_or_path");
  std::optional<Family> detected;
  try {
    if (!model.empty() && std::filesystem::is_regular_file(model)) detected = detectModelFamily(model);
  } catch (const std::exception&) {  // not a readable checkpoint: the preflight names it
  }
  if (!detected) return config;
  Config validated = config;
  validated.set("model_family", std::string(toString(*detected)), config.whereSet("pretrained_model_name_or_path"));
  return validated;
}

const char* kUsage =
    "usage: sinter-runner --config_file FILE.toml [--KEY VALUE | --FLAG | --no-FLAG ...]\n"
    "       sinter-runner [--num_processes N] SCRIPT.py [sd-scripts arguments]   (as `accelerate launch` runs\n"
    "                         sd-scripts' SCRIPT: train_network.py, sdxl_train_network.py, flux_train_network.py,\n"
    "                         train_db.py, fine_tune.py, sdxl_train.py or flux_train.py)\n"
    "       sinter-runner --config_file FILE.toml --dry_run\n"
    "       sinter-runner --config_file FILE.toml --check_dataset\n"
    "       sinter-runner --config_file FILE.toml --sample_grid OUT.png [FILE.safetensors ...]\n"
    "       sinter-runner --config_file FILE.toml --output_config OUT.toml\n"
    "       sinter-runner --config_file FILE.toml --events jsonl\n"
    "       sinter-runner --queue QUEUE.toml [--events jsonl] [--strict] [--nproc_per_node N]\n"
    "\n"
    "Trains a LoRA, DreamBooth or fine-tune run for SDXL, FLUX.1, SD 1.x or SD 2.x. Options on the command line\n"
    "override the config file. Exit codes: 0 finished or stopped on request, 1 training failed, 2 bad\n"
    "configuration or input (nothing was trained).\n"
    "\n"
    "runner options:\n"
    "  --config_file FILE     sd-scripts style TOML config (sections are flattened), read as sd-scripts reads it:\n"
    "                         a key that is no option is ignored with a warning (a near miss of an option is\n"
    "                         an error), a key in two sections takes the later value\n"
    "  --strict               refuse the config's unknown and repeated keys and values sd-scripts reads loosely\n"
    "  --queue FILE           run the pending runs of a run queue (a TOML file: on_failure = \"continue\"|\"stop\",\n"
    "                         [[run]] config = \"FILE.toml\" ...) one after another, each in a process of its own,\n"
    "                         marking each one's status in the file; exit 1 when one of them failed\n"
    "  --dry_run              check the config and what the run needs, print it and the compile plan, exit\n"
    "  --check_dataset        read the dataset as a run would and report images without captions, empty\n"
    "                         captions, files of the same content, images smaller than the smallest bucket,\n"
    "                         files that cannot be read (every image decoded), the bucket histogram and each\n"
    "                         folder's repeats; exit 0, or 2 when a run would refuse the config or dataset\n"
    "  --sample_grid OUT.png [FILE ...]\n"
    "                         the checkpoint grid: the config's sample_prompts for its base model (step 0), then\n"
    "                         for each saved file given (LoRA files, or a DreamBooth/fine-tune run's checkpoints),\n"
    "                         a row each; every prompt with one seed in every row (its --d, else the config's\n"
    "                         seed, else one drawn); one PNG, its layout in the text chunk sinter_grid\n"
    "  --compile_plan         print the compile plan for the config on this machine (the dry run's,\n"
    "                         without its file checks), exit\n"
    "  --output_config FILE   write the resolved config (as the app writes it) and exit\n"
    "  --events jsonl         machine-readable events on stdout, one JSON object per line\n"
    "  --control stdin        during a run, read commands on stdin, one a line, each acted on at the next\n"
    "                         step boundary: sample, save, stop_after_epoch, pause, resume (the app sends them)\n"
    "  --nproc_per_node N     train on N GPUs of this host, one process each (data parallel over c10d/NCCL;\n"
    "                         on a machine without GPUs, N processes on the CPU over Gloo); a launcher that\n"
    "                         sets torchrun's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT can\n"
    "                         start the processes instead, on several hosts\n"
    "  --help                 this text\n"
    "\n"
    "tools (for the demo, tests and benchmarks; nothing is downloaded):\n"
    "  --init_checkpoint OUT.safetensors --model_family sdxl|flux [--model_type chroma] [--model_size full|tiny] [--seed N]\n"
    "                         write a checkpoint with random weights in the original single-file layout\n"
    "                         (flux: the FLUX.1-dev transformer at OUT; ae, clip_l and t5xxl_fp16 beside it;\n"
    "                         with --model_type chroma a Chroma transformer, ae and t5xxl_fp16)\n"
    "  --print_lora_layout --model_family sdxl|flux [--model_type chroma] [--model_size full|tiny] [--network_train_unet_only]\n"
    "                         print every LoRA module a run creates (kohya name, in/out features) as JSON\n"
    "  --init_dataset DIR     write a small generated dataset (pictures and captions) in folder mode\n"
    "  --init_tokenizer DIR   write a byte-level CLIP vocabulary and a small T5 spiece.model (enough for\n"
    "                         tiny models)\n"
    "  --benchmark_steps N [--model_family sdxl|flux]\n"
    "                         time N training steps of the full-size model with random weights\n"
    "                         (batch 1, 1024x1024, rank 32, bf16 on a GPU; --model_size tiny for a smoke run;\n"
    "                         --benchmark_scaling: eager and the captured step only; with --nproc_per_node N\n"
    "                         each of N GPUs times the step with its gradients all-reduced;\n"
    "                         --benchmark_optimizers: eager and captured with each optimizer, beside AdamW;\n"
    "                         --benchmark_networks: eager and captured with each LyCORIS algorithm, beside LoRA)\n"
    "  --module_outputs OUT.safetensors --module_inputs IN.safetensors --pretrained_model_name_or_path CKPT\n"
    "                         run the checkpoint's U-Net, VAE and text encoders in fp32 on the inputs IN\n"
    "                         names (x, timesteps, context, y; images; input_ids) and write their outputs\n"
    "      [--prompt TEXT] [--training_type textual_inversion --token_string TOKEN --weights EMB.safetensors\n"
    "       [--num_vectors_per_token N]]\n"
    "                         SD 1.x/2.x and SDXL: the text encoders on a prompt, tokenized as a run tokenizes a\n"
    "                         caption (its ids written too: input_ids, SDXL's input_ids2), with an embedding's\n"
    "                         tokens added and its rows on the encoders\n"
    "  --module_outputs OUT.safetensors --module_inputs IN.safetensors --model_family flux\n"
    "      [--pretrained_model_name_or_path FLUX_TRANSFORMER] [--ae AE]\n"
    "                         the same for a FLUX.1 transformer (img, img_ids, txt, txt_ids, timesteps, y,\n"
    "                         guidance) and autoencoder (images)\n";

const std::vector<ExtraArg> kRunnerArgs{{"config_file", true},     {"dry_run", false},       {"output_config", true},
                                        {"events", true},          {"help", false},          {"version", false},
                                        {"init_checkpoint", true}, {"model_size", true},     {"init_dataset", true},
                                        {"init_tokenizer", true},  {"benchmark_steps", true}, {"module_outputs", true},
                                        {"module_inputs", true},  {"prompt", true},            {"print_lora_layout", false},
                                        {"nproc_per_node", true}, {"benchmark_scaling", false},
                                        {"benchmark_optimizers", false}, {"benchmark_networks", false},
                                        {"strict", false},         {"compile_plan", false},
                                        {"check_dataset", false}, {"control", true},
                                        {"queue", true}};

bool fileExists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

void setUpLogging() {
  auto logger = spdlog::stderr_color_mt("sinter");
  logger->set_pattern("%^%l%$ %v");
  spdlog::set_default_logger(logger);
}

// A worker other than rank 0 names its rank in every line and does not repeat what rank 0 says
// about the config (its errors still show); once training starts, its warnings show too
// (training_run.cpp). A bad torchrun environment is reported when the run starts.
void labelWorkerLogs() {
  std::optional<distributed::TorchrunEnvironment> env;
  try {
    env = distributed::readTorchrunEnvironment();
  } catch (const std::invalid_argument&) {
    return;
  }
  if (!env || env->rank == 0) return;
  spdlog::set_level(spdlog::level::err);
  spdlog::set_pattern("%^%l%$ [rank " + std::to_string(env->rank) + "] %v");
}

// Reports diagnostics on stderr, and as events when the app reads them; returns true when any is
// an error.
bool report(const std::vector<Diagnostic>& diags, train::EventSink* events = nullptr) {
  for (const auto& d : diags) {
    if (d.severity == Severity::Error) spdlog::error("{}", d.format());
    else spdlog::warn("{}", d.format());
    if (events && d.severity == Severity::Error) events->emit(events::Error{d.format()});
    if (events && d.severity == Severity::Warning) events->emit(events::Warning{d.format()});
  }
  return hasErrors(diags);
}

Diagnostic launchError(const std::string& message) {
  Diagnostic d;
  d.severity = Severity::Error;
  d.key = "nproc_per_node";
  d.message = "--nproc_per_node: " + message;
  return d;
}

std::optional<int> parseProcessCount(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int n = std::stoi(text);
  if (n < 1 || n > distributed::kMaxWorkers) return std::nullopt;
  return n;
}

// The arguments less `--name VALUE` / `--name=VALUE`.
std::vector<std::string> withoutOption(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--" + name) {
      ++i;
      continue;
    }
    if (args[i].rfind("--" + name + "=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

// This executable's path, for starting copies of it.
std::string selfExecutable(const char* argv0) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : self.string();
}

// --nproc_per_node N (N > 1): the config checked here once, then the run (or the benchmark) made by
// N workers (distributed/worker_launcher.h); their exit code. nullopt: this process does the work.
std::optional<int> launchWorkersIfAsked(const ParsedArgs& parsed, const std::vector<std::string>& args, const char* argv0,
                                        const Config& config, train::EventSink& events,
                                        const std::function<int(const std::vector<Diagnostic>&)>& refuse) {
  const auto n = parsed.extraValues.find("nproc_per_node");
  if (n == parsed.extraValues.end()) return std::nullopt;
  const std::optional<int> processes = parseProcessCount(n->second);
  if (!processes) {
    spdlog::error("--nproc_per_node takes a whole number of processes from 1 to {}, not '{}'", distributed::kMaxWorkers, n->second);
    return kExitBadInput;
  }
  for (const char* tool : {"init_checkpoint", "init_dataset", "init_tokenizer", "module_outputs"})
    if (parsed.extraValues.count(tool)) {
      spdlog::error("--nproc_per_node applies to training runs and --benchmark_steps, not to --{}", tool);
      return kExitBadInput;
    }
  if (parsed.hasFlag("print_lora_layout")) {
    spdlog::error("--nproc_per_node applies to training runs and --benchmark_steps, not to --print_lora_layout");
    return kExitBadInput;
  }
  if (*processes == 1) return std::nullopt;
  if (std::getenv("WORLD_SIZE")) {
    spdlog::error("--nproc_per_node {} inside a launched worker (WORLD_SIZE is set): start the run either with "
                  "--nproc_per_node or with torchrun's environment", *processes);
    return kExitBadInput;
  }
  if (!parsed.extraValues.count("benchmark_steps")) {
    // Refused once here; its warnings are rank 0's to report, as it checks the config again.
    const train::RunPreflight preflight = train::preflightRun(config, *processes);
    if (!preflight.ok()) return refuse(preflight.diagnostics);
  }
  if (const int gpus = train::cudaDeviceCount(); gpus > 0 && *processes > gpus)
    return refuse({launchError(std::to_string(*processes) + " processes need " + std::to_string(*processes) +
                               " GPUs but this machine has " + std::to_string(gpus))});
  else if (gpus == 0)
    spdlog::info("no GPU: the {} processes train on the CPU (Gloo)", *processes);
  if (!distributed::distributedCompiledIn())
    return refuse({launchError("this build of sinter-runner has no distributed training (its libtorch lacks c10d's Gloo and "
                               "NCCL process groups)")});
  distributed::WorkerLaunch launch;
  launch.executable = selfExecutable(argv0);
  launch.arguments = withoutOption(args, "nproc_per_node");
  launch.processes = *processes;
  launch.eventsOnStdout = events.jsonl();
  try {
    return distributed::launchWorkers(launch);
  } catch (const std::exception& e) {
    return refuse({launchError(e.what())});
  }
}

// --queue FILE: the options that go with it apply to every run; the configs carry the rest.
int runQueueFromCommandLine(const ParsedArgs& parsed, const std::string& queueFile, const char* argv0) {
  std::vector<std::string> refused;
  for (const auto& [name, value] : parsed.extraValues)
    if (name != "queue" && name != "events" && name != "nproc_per_node") refused.push_back("--" + name);
  for (const std::string& flag : parsed.extraFlags)
    if (flag != "strict") refused.push_back("--" + flag);
  for (const auto& [key, value] : parsed.overrides.explicitValues()) refused.push_back("--" + key);
  if (!refused.empty()) {
    spdlog::error("--queue runs the configs its file names: {} does not go with it (each run's config carries its options; "
                  "--events, --strict and --nproc_per_node apply to every run)", refused.front());
    return kExitBadInput;
  }
  QueueCommand command;
  command.queueFile = queueFile;
  command.executable = selfExecutable(argv0);
  command.forwardEvents = parsed.extraValues.count("events") != 0;
  if (parsed.hasFlag("strict")) command.runArguments.push_back("--strict");
  if (auto n = parsed.extraValues.find("nproc_per_node"); n != parsed.extraValues.end()) {
    if (!parseProcessCount(n->second)) {
      spdlog::error("--nproc_per_node takes a whole number of processes from 1 to {}, not '{}'", distributed::kMaxWorkers, n->second);
      return kExitBadInput;
    }
    command.runArguments.insert(command.runArguments.end(), {"--nproc_per_node", n->second});
  }
  return runQueueCommand(command);
}

int checkedRunnerMain(int argc, char** argv) {
  setUpLogging();
  labelWorkerLogs();
  std::vector<std::string> args(argv + 1, argv + argc);
  // `sinter-runner resize_lora ...`: a LoRA tool, with its own flags (tools/lora_tools.h).
  if (std::optional<int> toolExit = tools::runLoraToolIfNamed(args)) return *toolExit;
  // `--sample_grid OUT.png FILE ...`: taken out first, its files being a list up to the next option.
  std::optional<train::CheckpointGridRequest> grid;
  try {
    grid = takeSampleGridArguments(args);
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }
  ParsedArgs parsed;
  std::optional<ScriptLaunch> launch;  // `sinter-runner SCRIPT.py ARGS`, as accelerate launch runs it
  try {
    launch = translateScriptLaunch(args);
    if (launch) args = launch->args;
    parsed = parseArgv(args, kRunnerArgs);
    if (launch) parsed.warnings.insert(parsed.warnings.begin(), launch->warnings.begin(), launch->warnings.end());
  } catch (const ConfigError& e) {
    report(e.diagnostics());
    std::cerr << "run 'sinter-runner --help' for the options\n";
    return kExitBadInput;
  }
  if (parsed.hasFlag("help")) {
    // The LoRA tools' lines after the run's (each tool's own --help has its flags).
    std::string usage = kUsage;
    const std::string lastRunLine = "--events jsonl\n";
    usage.insert(usage.find(lastRunLine) + lastRunLine.size(), tools::loraToolsUsage());
    std::cout << registryHelpText(usage);
    return kExitOk;
  }
  if (parsed.hasFlag("version")) {
    std::cout << "sinter-runner " << SINTER_VERSION << "\n" << train::describeBuildAndDevices() << "\n";
    return kExitOk;
  }
  if (!parsed.positional.empty()) {
    spdlog::error("unexpected argument '{}' (options start with --)", parsed.positional.front());
    return kExitBadInput;
  }
  if (auto ev = parsed.extraValues.find("events"); ev != parsed.extraValues.end() && ev->second != "jsonl") {
    spdlog::error("--events takes 'jsonl', not '{}'", ev->second);
    return kExitBadInput;
  }
  // Commands on stdin during a run (train/loop/run_controls.h); anything else leaves stdin alone.
  if (auto c = parsed.extraValues.find("control"); c != parsed.extraValues.end() && c->second != "stdin") {
    spdlog::error("--control takes 'stdin', not '{}'", c->second);
    return kExitBadInput;
  }
  if (auto q = parsed.extraValues.find("queue"); q != parsed.extraValues.end()) {
    if (grid) {
      spdlog::error("--queue runs the configs its file names: --sample_grid does not go with it");
      return kExitBadInput;
    }
    return runQueueFromCommandLine(parsed, q->second, argv[0]);
  }

  // A refused config ends with a failed `done` event too, so the app reads why from events.
  train::EventSink events(parsed.extraValues.count("events") != 0);
  auto refuse = [&](const std::vector<Diagnostic>& problems) {
    report(problems, &events);
    events.emit(events::Done{"failed", 0, 0});
    return kExitBadInput;
  };

  // The config: the file (sd-scripts appends .toml when the name has none), then the overrides.
  Config config;
  std::vector<Diagnostic> diags;
  if (auto cf = parsed.extraValues.find("config_file"); cf != parsed.extraValues.end()) {
    std::string path = cf->second;
    if (!fileExists(path) && fileExists(path + ".toml")) path += ".toml";
    try {
      LoadResult loaded = loadConfigFile(path, parsed.hasFlag("strict") ? ConfigReading::Strict : ConfigReading::AsSdScripts);
      config = loaded.config;
      diags = loaded.warnings;
    } catch (const ConfigError& e) {
      return refuse(e.diagnostics());
    }
  }
  config.overlay(parsed.overrides);
  if (launch)
    for (auto& d : applyTrainingScript(*launch->script, config)) diags.push_back(d);
  for (auto& d : parsed.warnings) diags.push_back(d);  // sd-scripts options given that Sinter ignores
  for (auto& d : validateConfig(withDetectedFamily(config))) diags.push_back(d);
  if (hasErrors(diags)) return refuse(diags);
  report(diags, &events);

  if (grid) {
    if (const std::string mode = modeBesideSampleGrid(parsed); !mode.empty()) {
      spdlog::error("--sample_grid is a command of its own; it does not go with {}", mode);
      return kExitBadInput;
    }
    train::restoreDefaultStopSignals();  // it saves nothing on a stop: a signal ends it
    return runSampleGridCommand(config, *grid, events);
  }

  if (auto out = parsed.extraValues.find("output_config"); out != parsed.extraValues.end()) {
    if (fileExists(out->second)) {
      spdlog::error("'{}' already exists; --output_config does not overwrite files", out->second);
      return kExitBadInput;
    }
    try {
      saveConfigFile(out->second, config);
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      return kExitBadInput;
    }
    spdlog::info("wrote the resolved config to {}", out->second);
    return kExitOk;
  }

  if (parsed.hasFlag("compile_plan")) {
    // The dry run's compile plan alone: no file is read (the app's Torch Compile panel shows it).
    const std::optional<Family> family = config.family();
    if (!family) {
      spdlog::error("--compile_plan needs model_family (sdxl or flux): the plan depends on the family");
      return kExitBadInput;
    }
    const auto n = parsed.extraValues.find("nproc_per_node");
    const compile::CompilePlan plan =
        train::compilePlanFor(config, family, n == parsed.extraValues.end() ? 0 : parseProcessCount(n->second).value_or(0));
    for (const auto& line : plan.lines()) std::cout << line << "\n";
    for (const auto& note : plan.request.notes) std::cout << "note: " << note << "\n";
    if (plan.fatal) {
      spdlog::error("compile_fullgraph: {}", *plan.fatal);
      return kExitBadInput;
    }
    return kExitOk;
  }

  // The dataset as a run reads it, checked and reported; nothing else is read or made.
  if (parsed.hasFlag("check_dataset")) return runDatasetCheckCommand(config, events, refuse);

  if (parsed.hasFlag("dry_run")) {
    // Exactly the checks a run makes before it loads anything.
    const auto n = parsed.extraValues.find("nproc_per_node");
    const int ranks = n == parsed.extraValues.end() ? 0 : parseProcessCount(n->second).value_or(0);
    const train::RunPreflight preflight = train::preflightRun(config, ranks);
    if (!preflight.ok()) return refuse(preflight.diagnostics);
    report(preflight.diagnostics);
    std::cout << "# tokenizers\n";
    for (const std::string& line : train::tokenizerLines(preflight.resolved)) std::cout << "# " << line << "\n";
    std::cout << "\n# resolved config\n" << writeConfigToml(preflight.resolved);
    if (preflight.vramPlan) {
      std::cout << "\n# memory plan\n";
      for (const std::string& line : preflight.vramPlan->lines()) std::cout << "# " << line << "\n";
    }
    std::cout << "\n# compile plan\n";
    const compile::CompilePlan& plan = preflight.compilePlan.value();
    for (const auto& line : plan.lines()) std::cout << line << "\n";
    for (const auto& note : plan.request.notes) std::cout << "note: " << note << "\n";
    return kExitOk;
  }

  if (train::stopRequested()) {
    spdlog::info("stopped before the run started as requested; nothing was made");
    events.emit(events::Done{"stopped", 0, 0.0});
    return kExitOk;
  }
  if (std::optional<int> launched = launchWorkersIfAsked(parsed, args, argv[0], config, events, refuse)) return *launched;
  if (isTool(parsed)) train::restoreDefaultStopSignals();  // a tool saves nothing on a stop: a signal ends it
  if (std::optional<int> toolExit = runTool(parsed, config)) return *toolExit;

  // The same checks as --dry_run, before anything expensive.
  train::RunPreflight preflight = train::preflightRun(config);
  if (!preflight.ok()) return refuse(preflight.diagnostics);
  report(preflight.diagnostics, &events);
  if (preflight.vramPlan)
    for (const std::string& line : preflight.vramPlan->lines()) spdlog::info("{}", line);
  checkDatasetAtRunStart(preflight, events);
  return train::runTraining(std::move(preflight), events, parsed.extraValues.count("control") != 0);
}

}  // namespace

int runnerMain(int argc, char** argv) {
  // First of all, so that a stop at any moment meets the runner's handler (stop_request.h), never
  // the default action: exit 0 with nothing made, or after a whole save.
  train::installStopHandlers();
  // With --events jsonl the app reads stdout: if it goes away the run goes on (event_sink.h).
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return checkedRunnerMain(argc, argv);
  } catch (const std::exception& e) {
    // Whatever escaped the run's own handlers: one line, libtorch's backtrace left out.
    spdlog::error("{}", train::userMessage(e));
    return kExitTrainingFailed;
  }
}

}  // namespace sinter::runner
