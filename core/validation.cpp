#include "core/validation.h"

#include <regex>

#include "core/compile_settings.h"
#include "core/family_table.h"
#include "core/registry.h"
#include "core/text_escape.h"

namespace sinter {

namespace {

class Checker {
 public:
  explicit Checker(const Config& c) : c_(c) {}

  void error(const std::string& key, const std::string& msg) { add(Severity::Error, key, msg); }
  void warning(const std::string& key, const std::string& msg) { add(Severity::Warning, key, msg); }
  bool on(const std::string& key) const { return c_.getBool(key); }
  bool set(const std::string& key) const { return c_.isSet(key); }
  double num(const std::string& key) const { return c_.getDouble(key); }
  std::string str(const std::string& key) const { return c_.getString(key); }
  std::vector<Diagnostic> take() { return std::move(diags_); }

 private:
  void add(Severity s, const std::string& key, const std::string& msg) {
    diags_.push_back(Diagnostic{s, c_.whereSet(key), key, msg});
  }
  const Config& c_;
  std::vector<Diagnostic> diags_;
};

void checkApplicability(const Config& config, Checker& k) {
  const Tab tab = config.tab();
  const std::optional<Family> family = config.family();
  for (const auto& [key, value] : config.explicitValues()) {
    const OptionSpec* spec = findOption(key);
    if (!spec || spec->isUnsetValue(value) || value == spec->defaultValue) continue;
    if (family && !spec->appliesToFamily(*family)) {
      if (key == "blocks_to_swap" || key == "block_lr") continue;  // an error of its own below
      const OptionSpec* listOption = nullptr;  // the option whose list's later value set this one
      std::size_t place = 0;
      for (const OptionSpec& o : optionRegistry())
        for (std::size_t i = 1; laterListOption(o, i); ++i)
          if (key == laterListOption(o, i)->key && config.whereSet(o.key) == config.whereSet(key)) {
            listOption = &o;
            place = i;
          }
      if (spec->section == Section::Compile)
        k.warning(key, key + ": compile settings apply to SDXL and FLUX only; ignored for " +
                           toString(*family) + " and not saved");
      else if (listOption)
        k.warning(key, std::string(listOption->key) + "'s " + listPlaceName(place) + " value is " + key + ", which " + toString(*family) +
                           "'s network does not read (as in sd-scripts); ignored and not saved");
      else
        k.warning(key, key + " does not apply to " + std::string(toString(*family)) + "; ignored and not saved");
    } else if (!spec->appliesToTab(tab)) {
      if (key == "block_lr") continue;  // an error of its own below
      k.warning(key, key + " does not apply to " + std::string(toString(tab)) + " training; ignored and not saved");
    }
  }
}

// output_name becomes the stem of every file and folder a run writes ("NAME.safetensors",
// "NAME-step00000100-state", the app's "NAME-sinter-run.toml"): it must name one entry inside
// output_dir, never a path. sd-scripts joins the two unchecked; a shared preset could then write
// anywhere the user can.
std::string outputNameProblem(const std::string& name) {
  // The longest name derived from it: "-step00000000.safetensors" (25 bytes), within NAME_MAX (255).
  constexpr size_t kMaxBytes = 255 - 25;
  if (name.find('\0') != std::string::npos) return "holds a NUL character";
  for (unsigned char ch : name)
    if (ch < 0x20 || ch == 0x7f) return "holds a control character";
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return "holds a path separator; it is a file name inside output_dir, not a path";
  if (name == "." || name.find("..") != std::string::npos) return "holds \"..\" or is \".\"; it must name a file inside output_dir";
  if (name.size() > kMaxBytes) return "is " + std::to_string(name.size()) + " bytes long; file names allow at most " +
                                      std::to_string(kMaxBytes) + " before the suffixes a run adds";
  return {};
}

}  // namespace

std::vector<Diagnostic> validateConfig(const Config& config) {
  Checker k(config);
  checkApplicability(config, k);
  const std::optional<Family> family = config.family();
  if (family)
    if (std::string problem = tabFamilyProblem(config.tab(), *family); !problem.empty()) k.error("model_family", problem);

  // Compile.
  if (k.on("compile_fullgraph") && k.on("split_attn"))
    k.error("compile_fullgraph", "compile_fullgraph cannot be used with split_attn: split attention is data-dependent "
                                 "and cannot be captured in one graph");
  if (k.set("compile_args")) {
    const StringList a = config.getList("compile_args");
    if (a.size() != 4)
      k.error("compile_args", "compile_args takes exactly 4 values: BACKEND MODE DYNAMIC FULLGRAPH (got " +
                                  std::to_string(a.size()) + ")");
    else {
      Value checked;
      const char* names[] = {"compile_backend", "compile_mode", "compile_dynamic"};
      for (int i = 0; i < 3; ++i) {
        std::string v = a[i];
        if (i == 2) for (auto& ch : v) ch = static_cast<char>(std::tolower(ch));
        if (std::string msg = checkValue(*findOption(names[i]), Value{v}, checked); !msg.empty())
          k.error("compile_args", "compile_args value " + std::to_string(i + 1) + ": " + msg);
      }
    }
    if (!k.on("compile")) k.warning("compile_args", "compile_args is honoured only with compile = true");
  }
  if (k.on("compile") && k.str("compile_backend") == "cudagraphs" && k.str("compile_mode") != "default")
    k.warning("compile_mode", "compile_mode is ignored by the cudagraphs backend");

  // Block swapping is for the FLUX transformer only (sd-scripts: not for SDXL): the option's families.
  if (k.set("blocks_to_swap") && k.num("blocks_to_swap") > 0 && family && !findOption("blocks_to_swap")->appliesToFamily(*family))
    k.error("blocks_to_swap", "blocks_to_swap is only supported for " + familyLabels(findOption("blocks_to_swap")->families) +
                                  ", not " + std::string(toString(*family)));

  // Precision.
  const std::string mp = k.str("mixed_precision");
  if (k.on("full_bf16") && k.on("full_fp16")) k.error("full_bf16", "full_bf16 and full_fp16 cannot both be set");
  if (k.on("full_bf16") && mp != "bf16") k.error("full_bf16", "full_bf16 requires mixed_precision = \"bf16\"");
  if (k.on("full_fp16") && mp != "fp16") k.error("full_fp16", "full_fp16 requires mixed_precision = \"fp16\"");

  // FP8 compute (Sinter's fp8_scaled / fp8_fast, after musubi-tuner's): each needs the one before.
  const bool fp8Base = k.on("fp8_base") || k.on("fp8_base_unet");
  if (k.on("fp8_scaled") && !fp8Base)
    k.error("fp8_scaled", "fp8_scaled needs fp8_base: it is how fp8_base stores the frozen weights");
  if (k.on("fp8_fast") && !k.on("fp8_scaled"))
    k.error("fp8_fast", "fp8_fast needs fp8_scaled (and fp8_base): it multiplies the scaled fp8 weights as they are stored");
  if (k.on("fp8_scaled") && k.set("blocks_to_swap") && k.num("blocks_to_swap") > 0)
    k.error("fp8_scaled", "fp8_scaled cannot be used with blocks_to_swap yet: the swapped blocks would keep fp8_base's plain cast");
  if (!k.on("fp8_fast_backward") && !k.on("fp8_fast"))
    k.warning("fp8_fast_backward", "fp8_fast_backward is honoured only with fp8_fast");

  // Caching (sd-scripts asserts these).
  if (k.on("cache_latents") || k.on("cache_latents_to_disk")) {
    if (k.on("color_aug")) k.error("color_aug", "color_aug cannot be used with cached latents");
    if (k.on("random_crop")) k.error("random_crop", "random_crop cannot be used with cached latents");
  }
  if (k.on("cache_text_encoder_outputs") || k.on("cache_text_encoder_outputs_to_disk")) {
    if (k.on("shuffle_caption")) k.error("shuffle_caption", "shuffle_caption cannot be used with cached text encoder outputs");
    if (k.num("caption_dropout_rate") > 0)
      k.error("caption_dropout_rate", "caption_dropout_rate cannot be used with cached text encoder outputs");
    if (k.num("caption_tag_dropout_rate") > 0)
      k.error("caption_tag_dropout_rate", "caption_tag_dropout_rate cannot be used with cached text encoder outputs");
    // FLUX caches T5-XXL's outputs and CLIP-L encodes in the step (sd-scripts' partial cache).
    if (config.tab() == Tab::LoRA && !k.on("network_train_unet_only") && !(family && familyRow(*family).partialTextCache))
      k.error("cache_text_encoder_outputs", "cache_text_encoder_outputs needs network_train_unet_only = true "
                                            "(cached outputs cannot train text encoder LoRA modules)");
    // SD 3.x's sd3_train.py caches T5-XXL's outputs while the CLIPs train (its partial cache).
    if (config.tab() != Tab::LoRA && k.on("train_text_encoder") && !(family && familyRow(*family).partialTextCache))
      k.error("cache_text_encoder_outputs", "cache_text_encoder_outputs cannot be used with train_text_encoder");
  }

  // Network.
  if (config.tab() == Tab::LoRA) {
    if (k.on("network_train_unet_only") && k.on("network_train_text_encoder_only"))
      k.error("network_train_text_encoder_only",
              "network_train_unet_only and network_train_text_encoder_only cannot both be set");
    if (k.on("dim_from_weights") && !k.set("network_weights"))
      k.error("dim_from_weights", "dim_from_weights needs network_weights");
    const std::string module = k.str("network_module");
    // sd-scripts' LoRA modules are per family (networks.lora, networks.lora_flux): another family's is refused.
    std::uint8_t others = 0;  // the families whose module this is, when it is not the config's family's
    for (const FamilyRow& row : familyTable())
      if (family && module == row.loraModule && module != familyRow(*family).loraModule) others |= static_cast<std::uint8_t>(row.family);
    if (others)
      k.error("network_module", std::string(familyRow(*family).label) + " uses network_module = \"" + familyRow(*family).loraModule +
                                    "\"; " + module + " is for " + familyLabels(others));
  }

  if (k.on("cpu_offload_checkpointing") && k.set("blocks_to_swap") && k.num("blocks_to_swap") > 0)
    k.error("cpu_offload_checkpointing", "blocks_to_swap cannot be used with cpu_offload_checkpointing (sd-scripts refuses it too)");

  {
    int fusedOptions = 0;
    for (const char* key : {"fused_backward_pass", "blockwise_fused_optimizers"}) fusedOptions += k.on(key) ? 1 : 0;
    if (k.set("fused_optimizer_groups") && k.num("fused_optimizer_groups") > 0) ++fusedOptions;
    if (fusedOptions > 1)
      k.error("fused_optimizer_groups", "fused_backward_pass, fused_optimizer_groups and blockwise_fused_optimizers are "
                                        "alternatives: set one (sd-scripts refuses them together too)");
  }

  // Noise and loss (sd-scripts' verify_training_args).
  if (k.set("adaptive_noise_scale") && !k.set("noise_offset"))
    k.error("adaptive_noise_scale", "adaptive_noise_scale needs noise_offset (it is added to the noise offset)");
  if (k.on("scale_v_pred_loss_like_noise_pred") && !k.on("v_parameterization"))
    k.error("scale_v_pred_loss_like_noise_pred", "scale_v_pred_loss_like_noise_pred needs v_parameterization");
  if (k.on("zero_terminal_snr") && !k.on("v_parameterization"))
    k.warning("zero_terminal_snr", "zero_terminal_snr without v_parameterization: the last timestep's noise-prediction target "
                                   "carries no signal, so training will be unexpected (sd-scripts warns the same)");
  if (k.on("noise_offset_random_strength") && !k.set("noise_offset"))
    k.warning("noise_offset_random_strength", "noise_offset_random_strength has no effect without noise_offset");
  if (k.on("ip_noise_gamma_random_strength") && !k.set("ip_noise_gamma"))
    k.warning("ip_noise_gamma_random_strength", "ip_noise_gamma_random_strength has no effect without ip_noise_gamma");

  // Buckets and timesteps.
  if (k.num("min_bucket_reso") > k.num("max_bucket_reso"))
    k.error("min_bucket_reso", "min_bucket_reso is larger than max_bucket_reso");
  const long long steps = config.getInt("bucket_reso_steps");
  // The latents of a bucket must divide into the model's downsampling: sd-scripts'
  // verify_bucket_reso_steps(32) for SDXL and FLUX LoRA, 16 for flux_train.py.
  if (const int multiple = !family                      ? 0
                           : config.tab() == Tab::LoRA ? familyRow(*family).bucketMultipleLora
                                                       : familyRow(*family).bucketMultipleFull;
      multiple > 0) {
    if (steps > 0 && steps % multiple != 0)
      k.error("bucket_reso_steps", "bucket_reso_steps is " + std::to_string(steps) + "; " + toString(*family) +
                                       " needs a multiple of " + std::to_string(multiple) + " (sd-scripts refuses it too)");
  }
  for (const char* key : {"min_bucket_reso", "max_bucket_reso"})
    if (config.getInt(key) % steps != 0)
      k.warning(key, std::string(key) + " is not a multiple of bucket_reso_steps (" + std::to_string(steps) + ")");
  if (k.set("min_timestep") && k.set("max_timestep") && k.num("min_timestep") >= k.num("max_timestep"))
    k.error("min_timestep", "min_timestep must be below max_timestep");
  if (k.set("resolution")) {
    // Positive sides only: "0" or "1024,0" cannot make buckets.
    static const std::regex pattern(R"(^\s*0*[1-9]\d{0,5}\s*(,\s*0*[1-9]\d{0,5}\s*)?$)");
    if (!std::regex_match(k.str("resolution"), pattern))
      k.error("resolution", "resolution must be \"SIZE\" or \"WIDTH,HEIGHT\" with positive integers, e.g. \"1024,1024\", not " +
                                quoteValue(k.str("resolution")));
  }

  // Saving.
  if (k.set("output_name")) {
    if (std::string problem = outputNameProblem(k.str("output_name")); !problem.empty())
      k.error("output_name", "output_name " + quoteValue(k.str("output_name")) + " " + problem);
  }

  // Schedules and saving.
  if (k.str("lr_scheduler") == "constant" && !k.set("lr_scheduler_type") && k.num("lr_warmup_steps") > 0)
    k.warning("lr_warmup_steps", "lr_warmup_steps is ignored by the constant scheduler; use constant_with_warmup");
  if (k.on("sdpa") && k.on("xformers")) k.warning("xformers", "sdpa and xformers are both set; sdpa is used");
  if (k.set("save_last_n_epochs") && !k.set("save_every_n_epochs"))
    k.warning("save_last_n_epochs", "save_last_n_epochs has no effect without save_every_n_epochs");
  if (k.set("save_last_n_steps") && !k.set("save_every_n_steps"))
    k.warning("save_last_n_steps", "save_last_n_steps has no effect without save_every_n_steps");
  for (const char* key : {"save_last_n_epochs_state", "save_last_n_steps_state"}) {
    const std::string every = std::string(key) == "save_last_n_steps_state" ? "save_every_n_steps" : "save_every_n_epochs";
    if (k.set(key) && (!k.set(every) || !k.on("save_state")))
      k.warning(key, std::string(key) + " has no effect without " + every + " and save_state");
  }
  // Options that only some schedules read (sd-scripts' get_scheduler_fix passes them to those alone).
  const std::string scheduler = k.set("lr_scheduler_type") ? "" : k.str("lr_scheduler");
  if (k.set("lr_scheduler_type") && k.num("lr_warmup_steps") > 0)
    k.error("lr_warmup_steps", "lr_scheduler_type " + k.str("lr_scheduler_type") + " does not take lr_warmup_steps: set it to 0");
  if (k.set("lr_scheduler_min_lr_ratio") && scheduler != "cosine_with_min_lr" && scheduler != "warmup_stable_decay")
    k.warning("lr_scheduler_min_lr_ratio", "lr_scheduler_min_lr_ratio is used by the cosine_with_min_lr and warmup_stable_decay "
                                           "schedules only; ignored here");
  if (k.num("lr_decay_steps") > 0 && scheduler != "warmup_stable_decay")
    k.warning("lr_decay_steps", "lr_decay_steps is used by the warmup_stable_decay schedule only; ignored here");
  if (k.set("lr_scheduler_timescale") && scheduler != "inverse_sqrt")
    k.warning("lr_scheduler_timescale", "lr_scheduler_timescale is used by the inverse_sqrt schedule only; ignored here");
  if (scheduler == "piecewise_constant" && k.num("lr_warmup_steps") > 0)
    k.warning("lr_warmup_steps", "piecewise_constant has no warmup (its step_rules set every step's rate); lr_warmup_steps is ignored");
  if (k.on("skip_until_initial_step") && !k.set("initial_step") && !k.set("initial_epoch"))
    k.warning("skip_until_initial_step", "skip_until_initial_step has no effect without initial_step or initial_epoch (a resumed run "
                                         "always goes on from its state's data position)");
  if (k.set("initial_step") && k.set("initial_epoch"))
    k.warning("initial_epoch", "initial_step is set, so initial_epoch is ignored");
  // block_lr is sdxl_train.py's: SDXL DreamBooth and fine-tuning only.
  if (k.set("block_lr")) {
    if (family && !findOption("block_lr")->appliesToFamily(*family))
      k.error("block_lr", "block_lr sets learning rates for the blocks of the SDXL U-Net (sdxl_train.py); " + std::string(toString(*family)) +
                              " has none (its training script refuses --block_lr: unrecognized arguments)");
    else if (config.tab() == Tab::LoRA)
      k.error("block_lr", "block_lr is for SDXL DreamBooth and fine-tuning (sdxl_train.py); LoRA training refuses it (train_network.py: "
                          "unrecognized arguments): use network_args down_lr_weight, mid_lr_weight and up_lr_weight");
  }
  // Validation: sd-scripts holds out a fraction below 1 (all images held out would leave nothing to train on).
  if (k.set("validation_split") && (k.num("validation_split") < 0 || k.num("validation_split") >= 1))
    k.error("validation_split", "validation_split must be at least 0 and below 1 (a fraction of each dataset's images), not " +
                                    k.str("validation_split"));
  // A dataset_config may set validation_split per dataset, so these only warn without one.
  if (!(k.set("validation_split") && k.num("validation_split") > 0) && !k.set("dataset_config"))
    for (const char* key : {"validation_seed", "validate_every_n_steps", "validate_every_n_epochs", "max_validation_steps"})
      if (k.set(key)) k.warning(key, std::string(key) + " has no effect without validation_split");
  if (k.set("train_data_dir") && k.set("dataset_config"))
    k.warning("train_data_dir", "dataset_config is set, so train_data_dir and reg_data_dir are ignored");
  return k.take();
}

}  // namespace sinter
