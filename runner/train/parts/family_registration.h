#pragma once
// What the generic layers (the preflight, the run, the methods, the training table) know of a model
// family without including its folder: how to make its part, the facts they need before its
// models load, its compile plan names, its memory model and the runner's tools. Each family folder
// defines one (sdxl/sdxl_registration.h, flux/...), and train/families.cpp, the only file that
// names the family folders, lists them: adding a family is adding its folder and one line there,
// with its row in core/family_table.cpp (docs/adding-a-model-family.md).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/compile_plan.h"
#include "core/config.h"
#include "core/option.h"
#include "core/vram_plan.h"
#include "models/unet/sdxl_unet_layout.h"
#include "network/checkpoint_lora_names.h"
#include "network/lora_metadata.h"
#include "network/lora_targets.h"
#include "train/parts/preflight_checks.h"
#include "train/parts/training_parts.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::train {

// --module_outputs: what a family's models computed on the given inputs, for comparing them with
// sd-scripts' modules (tests/gpu/*_vs_sdscripts.py).
struct ModuleOutputs {
  std::string missing;  // the files the tool needs and was not given (then nothing ran)
  std::vector<std::pair<std::string, torch::Tensor>> tensors;  // on the CPU; empty: no model had all of its inputs
  std::vector<std::pair<std::string, std::string>> metadata;   // the files they came from
  std::string inputNames;  // what the models take, for the error when none ran
};

// --module_outputs' inputs: tensors by name (--module_inputs), and a prompt (--prompt) that a family
// which trains textual inversion tokenizes as its runs tokenize a caption, with the tokens of the
// config's embedding (token_string, weights) added.
struct ModuleInputs {
  std::map<std::string, torch::Tensor> tensors;
  std::optional<std::string> prompt;
};

// --print_lora_layout: a model's LoRA rule and its Linear layers, in the order sd-scripts creates them.
using LoraLayoutModels = std::vector<std::pair<network::LoraTargetRule, std::vector<network::LinearShape>>>;
// A model config's Linear layers (models/unet/sdxl_unet_layout.h) as the LoRA rules take them.
std::vector<network::LinearShape> layoutShapes(const std::vector<models::LinearInfo>& layers);

// merge_lora and extract_lora_from_models (runner/tools/): the models inside one of the family's
// files as LoRA modules name them, and what a checkpoint merged from it says it is.
struct CheckpointLoraLayout {
  std::vector<network::CheckpointLoraPart> parts;  // empty: the family has no file of that role
  // sai_model_spec.build_metadata's model facts for a checkpoint merged from the file, and for a
  // LoRA extracted from it (its implementation can differ: SD's LoRAs say "diffusers").
  network::ModelSpecBasics checkpointModelSpec, loraModelSpec;
  std::string baseModelVersion;  // ss_base_model_version of a LoRA extracted from it
};

struct FamilyRegistration {
  Family family{};  // set by the family's registration
  // The family's part for a run, its models loaded.
  std::function<std::unique_ptr<FamilyPart>(const RunContext&)> make;
  // The family's own preflight, after the generic values parsed: its other files and options,
  // parsed as the run parses them. False when one failed (the run's values are then not used).
  // Empty: nothing of its own to check.
  std::function<bool(const Config&, PreflightChecks&)> checkConfig;
  // What the family reads from its files into the resolved config, so that the dry run, the saved
  // config and the metadata say what the run trains (FLUX: model_type = "chroma" for a Chroma file).
  // Empty: nothing.
  std::function<void(const Config& config, Config& resolved)> resolveFromFiles;
  // Sample images: empty when the family renders sample_sampler's samplers; else the one sampler
  // it uses, as the preflight's warning names it ("the flow-matching Euler sampler").
  std::string fixedSampler;
  // Whether fp8_base stores the family's frozen base weights in float8 (else it is warned about).
  bool fp8Base = false;
  // The text encoders the family's staged step runs from staged token ids (FamilyPart::stage) under
  // a config, named for the compile plan ("CLIP-L and OpenCLIP bigG"): a step in which they train
  // can be captured. Unset or empty: such a step runs eagerly, only the denoiser's blocks captured.
  std::function<std::string(const Config&)> stagedTextEncoders;
  // A family without the compile panel whose staged step the runner captures by its own choice on
  // CUDA (compile::planAutomaticCapture; SD 1.x/2.x, issue 56).
  bool capturesWithoutPanel = false;
  // DreamBooth / fine-tune with train_text_encoder: why the family refuses it (its full-weight
  // script trains the denoiser only), or empty when its text encoders train whole.
  std::string fullWeightsTextEncoderRefusal;
  // training_type = "textual_inversion": whether the family trains embeddings (sd-scripts'
  // train_textual_inversion.py, sdxl_train_textual_inversion.py); its part then gives
  // FamilyPart::textualInversionTargets.
  bool textualInversion = false;
  // block_lr (DreamBooth / fine-tune): how many blocks of the denoiser take their own learning rate,
  // and the block of a denoiser parameter by its name. 0 / empty: the family has no block_lr.
  int blockLrCount = 0;
  std::function<int(const std::string& parameterName)> blockLrIndex;
  // --benchmark_steps: the family's training step at full (or tiny) size with random weights,
  // printed on stdout; returns an exit code. Empty: the family has no benchmark yet.
  std::function<int(const Config& config, long long steps, bool tiny, bool scalingRows)> benchmark;
  // --benchmark_steps with --benchmark_optimizers: the same step with each optimizer this build
  // has (eager and captured), beside AdamW's. Empty: the family has no such rows.
  std::function<int(const Config& config, long long steps, bool tiny)> optimizerBenchmark;
  // --benchmark_steps with --benchmark_networks: the same step with standard LoRA and each LyCORIS
  // algorithm (eager and captured). Empty: the family has no such rows.
  std::function<int(const Config& config, long long steps, bool tiny)> networkBenchmark;
  // vram_budget_gb: its full-size memory model (core/family_table.h) sized from the run's files
  // (loop/vram_budget_plan.h). Empty: the full-size counts.
  std::function<void(const Config& config, MemoryModel& model)> sizeMemoryModel;
  // The compile plan's names for its denoiser, its per-block regions and its fused kernels.
  compile::CompileTargets compileTargets;
  // sinter-runner's tools (cli/runner_tools.cpp); empty: the tool refuses the family.
  // --init_checkpoint OUT: random weights in the family's files (its other models beside OUT); the
  // config names a variant where the family has several (FLUX's model_type).
  std::function<void(const std::string& out, bool tiny, std::uint64_t seed, const Config& config)> writeRandomCheckpoint;
  // --module_outputs: its models from the config's files, in fp32 on the device, on the inputs by
  // name; std::invalid_argument names an input of the wrong rank or size. A prompt or an embedding
  // (weights) reaches only the families with `textualInversion` (the tool refuses them elsewhere).
  std::function<ModuleOutputs(const Config& config, const ModuleInputs& inputs, const torch::Device& device)> moduleOutputs;
  // --print_lora_layout: the LoRA modules a run creates, from the models' configs alone (tiny or
  // full size), as the config's network_train_unet_only, network_args (FLUX's train_blocks,
  // train_t5xxl) and variant (FLUX's model_type) pick them.
  std::function<LoraLayoutModels(bool tiny, const Config& config)> loraLayout;
  // The LoRA tools: the layout of the family's checkpoint `file` ("model"), or of a text encoder
  // file given apart ("clip_l", "t5xxl", as flux_merge_lora.py takes them). Empty: the tools that
  // need a checkpoint refuse the family.
  std::function<CheckpointLoraLayout(const io::SafetensorsFile& file, const std::string& role)> checkpointLoraLayout;
};

// Every family this build trains, in the order the training table lists them (train/families.cpp).
const std::vector<FamilyRegistration>& registeredFamilies();

// `family`'s registration, or null when this build does not train it.
const FamilyRegistration* findRegisteredFamily(Family family);

// The text encoders the config's family runs inside its staged step (stagedTextEncoders), or ""
// when its step encodes captions outside it (or the family is unknown).
std::string stagedTextEncodersFor(const Config& config);

// The compile plan's names for `family` (kDefaultFamily's where none is known yet).
const compile::CompileTargets& compileTargetsFor(std::optional<Family> family);

}  // namespace sinter::train
