// sd-scripts options Sinter does not implement, with why. Keys, types and defaults are those of
// kohya-ss/sd-scripts' parsers (docs/sd_scripts_options.tsv lists every option of the four
// training scripts); tests/core/sd_scripts_options_test.cpp checks each is here, in the registry,
// or pending.
#include "core/foreign_options.h"

#include <cstdlib>

namespace sinter {
namespace {

using T = OptionType;
constexpr ForeignHandling R = ForeignHandling::Refused;
constexpr ForeignHandling I = ForeignHandling::Ignored;
const Value none{};
Value B(bool b) { return Value{b}; }
Value N(long long i) { return Value{i}; }
Value S(const char* s) { return Value{std::string(s)}; }

constexpr const char* kHub = "its only effect is outside the run, an upload to the Hugging Face Hub, which Sinter does not do: copy the output folder";
constexpr const char* kDeepSpeed = "DeepSpeed is not in Sinter; use sinter-runner --nproc_per_node N for data-parallel GPUs";
constexpr const char* kModelSpec =
    "Sinter writes modelspec.title, author, description, license and tags (metadata_title ... metadata_tags); "
    "this field is not in Sinter yet";
constexpr const char* kAttention =
    "an attention kernel choice; Sinter always uses its own attention kernel, which computes the same attention";
constexpr const char* kCacheCheck =
    "skips checking caches before reusing them; Sinter always checks, which changes only how long loading takes";
constexpr const char* kOldBlockSwap = "deprecated in sd-scripts: use blocks_to_swap";

std::vector<ForeignOption> buildForeignOptions() {
  return {
      // library/utils.py add_logging_arguments
      {"console_log_level", T::String, none, R, "the runner logs at info level to stderr; choosing the level is not in Sinter"},
      {"console_log_file", T::Path, none, R, "the runner logs to stderr: redirect it to keep a file (sinter-runner ... 2> run.log)"},
      {"console_log_simple", T::Bool, B(false), I, "the runner's log lines are already plain (level and message)"},
      // add_sd_models_arguments
      {"tokenizer_cache_dir", T::Path, none, R,
       "Sinter downloads nothing: set clip_tokenizer (and t5_tokenizer for FLUX.1 and SD 3.x) to folders with the tokenizer files"},
      // sai_model_spec.add_model_spec_arguments (title, author, description, license, tags are options)
      {"metadata_usage_hint", T::String, none, R, kModelSpec},
      {"metadata_thumbnail", T::String, none, R, kModelSpec},
      {"metadata_merged_from", T::String, none, R, kModelSpec},
      {"metadata_trigger_phrase", T::String, none, R, kModelSpec},
      {"metadata_preprocessor", T::String, none, R, kModelSpec},
      {"metadata_is_negative_embedding", T::String, none, R, kModelSpec},
      // add_dataset_arguments
      {"cache_info", T::Bool, B(false), I, "a cache of captions and image sizes that only speeds up loading; it does not change training"},
      {"caption_extention", T::String, none, R, "the misspelt old name of caption_extension: use caption_extension"},
      {"face_crop_aug_range", T::String, none, R,
       "face-centred crop augmentation is not in Sinter; crop the images beforehand, or use random_crop"},
      {"debug_dataset", T::Bool, B(false), R,
       "showing the dataset instead of training is not in Sinter; sinter-runner --dry_run checks a config without training"},
      {"skip_cache_check", T::Bool, B(false), I, kCacheCheck},
      {"dataset_class", T::String, none, R,
       "a Python dataset class; Sinter runs no Python: use train_data_dir, in_json or dataset_config"},
      // add_training_arguments
      {"huggingface_repo_id", T::String, none, I, kHub},
      {"huggingface_repo_type", T::String, none, I, kHub},
      {"huggingface_path_in_repo", T::String, none, I, kHub},
      {"huggingface_repo_visibility", T::String, none, I, kHub},
      {"save_state_to_huggingface", T::Bool, B(false), I, kHub},
      {"resume_from_huggingface", T::Bool, B(false), R,
       "resuming from the Hugging Face Hub is not in Sinter: download the state folder and set resume to it"},
      {"async_upload", T::Bool, B(false), I, kHub},
      {"save_n_epoch_ratio", T::Int, none, R, "saving by a ratio of the epochs is not in Sinter: use save_every_n_epochs"},
      {"wandb_run_name", T::String, none, I,
       "names a W&B run; this build has no W&B client, so the run's log is TensorBoard's (logging_dir) and the name is not used"},
      {"mem_eff_attn", T::Bool, B(false), I, kAttention},
      {"torch_compile", T::Bool, B(false), R, "Sinter compiles natively: use compile = true (and compile_backend)"},
      {"dynamo_backend", T::String, S("inductor"), I,
       "sd-scripts uses it only with torch_compile, and kohya_ss writes \"no\" there; Sinter compiles natively: use compile = true "
       "(and compile_backend)"},
      {"persistent_data_loader_workers", T::Bool, B(false), I, "Sinter's data loader threads live for the whole run anyway"},
      {"ddp_timeout", T::Int, none, R, "set the environment variable SINTER_DISTRIBUTED_TIMEOUT (in seconds) instead"},
      {"ddp_gradient_as_bucket_view", T::Bool, B(false), I,
       "a tuning switch of PyTorch's DistributedDataParallel; Sinter's own gradient reducer always all-reduces mixed precision's "
       "gradients where they lie (bucket views), and trains the same either way"},
      {"ddp_static_graph", T::Bool, B(false), I,
       "a tuning switch of PyTorch's DistributedDataParallel; Sinter's own gradient reducer has no such setting and trains the same"},
      {"lowram", T::Bool, B(false), I, "a memory placement hint; Sinter places models itself, and it does not change training"},
      {"highvram", T::Bool, B(false), I, "a memory placement hint; Sinter places models itself, and it does not change training"},
      // deepspeed_utils.add_deepspeed_arguments
      {"deepspeed", T::Bool, B(false), R, kDeepSpeed},
      {"zero_stage", T::Int, N(2), R, kDeepSpeed},
      {"offload_optimizer_device", T::String, none, R, kDeepSpeed},
      {"offload_optimizer_nvme_path", T::String, none, R, kDeepSpeed},
      {"offload_param_device", T::String, none, R, kDeepSpeed},
      {"offload_param_nvme_path", T::String, none, R, kDeepSpeed},
      {"zero3_init_flag", T::Bool, B(false), R, kDeepSpeed},
      {"zero3_save_16bit_model", T::Bool, B(false), R, kDeepSpeed},
      {"fp16_master_weights_and_gradients", T::Bool, B(false), R, kDeepSpeed},
      // add_optimizer_arguments
      // custom_train_functions.add_custom_train_arguments
      {"weighted_captions", T::Bool, B(false), R, "weighted captions ((token:1.3)) are not in Sinter yet"},
      // train_network.py
      {"base_weights", T::List, none, R,
       "merging LoRA files into the model before training is not in Sinter: merge them into the checkpoint first"},
      {"base_weights_multiplier", T::List, none, R,
       "merging LoRA files into the model before training is not in Sinter: merge them into the checkpoint first"},
      // sdxl_train_util.add_sdxl_training_arguments
      {"disable_mmap_load_safetensors", T::Bool, B(false), I,
       "how sd-scripts reads .safetensors files (a speed-up on WSL); Sinter reads them its own way, with the same result"},
      // add_dit_training_arguments, flux_train_utils.add_flux_train_arguments
      {"text_encoder_batch_size", T::Int, none, I, "the batch size of text encoder output caching; it changes only speed"},
      {"controlnet_model_name_or_path", T::Path, none, R, "FLUX.1 ControlNet training is not in Sinter"},
      // sdxl_train.py, flux_train.py
      {"use_safetensors", T::Bool, B(false), I, "Sinter always saves .safetensors"},
      {"diffusers_xformers", T::Bool, B(false), I, kAttention},
      {"mem_eff_save", T::Bool, B(false), I, "a memory-saving way to write the same file; Sinter has its own writer"},
      {"skip_latents_validity_check", T::Bool, B(false), I, kCacheCheck},
      {"double_blocks_to_swap", T::Int, none, R, kOldBlockSwap},
      {"single_blocks_to_swap", T::Int, none, R, kOldBlockSwap},
  };
}

bool numeric(const Value& v) { return std::holds_alternative<long long>(v) || std::holds_alternative<double>(v); }

// Command-line text as a number, when all of it is one.
std::optional<double> textAsNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() ? std::optional<double>(d) : std::nullopt;
}

}  // namespace

const std::vector<ForeignOption>& foreignOptions() {
  static const std::vector<ForeignOption> options = buildForeignOptions();
  return options;
}

const ForeignOption* findForeignOption(const std::string& key) {
  for (const auto& o : foreignOptions())
    if (key == o.key) return &o;
  return nullptr;
}

bool isInertValue(const ForeignOption& option, const Value& value) {
  if (isUnset(value)) return true;
  if (auto b = std::get_if<bool>(&value)) return !*b;
  if (auto s = std::get_if<std::string>(&value)) {
    if (s->empty()) return true;
    if (auto inert = std::get_if<std::string>(&option.inert)) return *s == *inert;
    if (numeric(option.inert) || isUnset(option.inert))
      if (auto d = textAsNumber(*s)) return isInertValue(option, Value{*d});
    return false;
  }
  if (auto l = std::get_if<StringList>(&value)) return l->empty();
  // A number: 0 where the default is None, or the default itself.
  const double d = asDouble(value);
  if (isUnset(option.inert)) return d == 0.0;
  return numeric(option.inert) && d == asDouble(option.inert);
}

std::optional<Diagnostic> foreignOptionDiagnostic(const ForeignOption& option, const Value& value,
                                                  const SourceLocation& where) {
  if (isInertValue(option, value)) return std::nullopt;
  if (option.handling == ForeignHandling::Ignored)
    return Diagnostic{Severity::Warning, where, option.key, std::string(option.key) + " is ignored: " + option.reason};
  return Diagnostic{Severity::Error, where, option.key,
                    std::string(option.key) + " = " + asString(value) + " is refused: " + option.reason};
}

}  // namespace sinter
