#include "core/kohya_defaults.h"

#include <map>
#include <vector>

namespace sinter {

using nlohmann::json;

const json* kohyaGuiDefault(const std::string& key) {
  // From kohya_ss's kohya_gui/ (lora_gui.py, finetune_gui.py, class_*.py): the GUI's own values
  // for fields sd-scripts either does not know or that select between other fields.
  static const std::map<std::string, json> defaults{
      // Selectors: which of the other fields kohya_ss passes on.
      {"LoRA_type", "Standard"},
      {"noise_offset_type", "Original"},
      {"model_list", ""},
      {"LyCORIS_preset", "full"},
      // Network fields (lora_gui.py), used by some LoRA types only.
      {"conv_dim", 1},
      {"conv_alpha", 1},
      {"factor", -1},
      {"unit", 1},
      {"train_on_input", true},
      {"ggpo_sigma", 0.03},
      {"ggpo_beta", 0.01},
      {"train_blocks", "all"},
      {"train_double_block_indices", "all"},
      {"train_single_block_indices", "all"},
      // accelerate launch (class_accelerate_launch.py).
      {"num_cpu_threads_per_process", 2},
      {"num_processes", 1},
      {"num_machines", 1},
      {"dynamo_backend", "no"},
      {"dynamo_mode", "default"},
      // Fine-tune data preparation (finetune_gui.py).
      {"batch_size", "1"},
      {"dataset_repeats", 40},
      {"caption_metadata_filename", "meta_cap.json"},
      {"latent_metadata_filename", "meta_lat.json"},
      {"use_latent_files", "Yes"},
      {"full_path", true},
      {"create_caption", true},
      {"create_buckets", true},
      {"generate_caption_database", true},
      {"generate_image_buckets", true},
      // FLUX.1 / SD3 panels (class_flux1.py, class_sd3.py).
      {"model_type", "flux"},
      {"t5xxl_dtype", "bf16"},
      {"text_encoder_batch_size", 1},
      {"show_timesteps_resolution", "1024"},
      {"log_tracker_config_dir", "./logs"},
  };
  auto it = defaults.find(key);
  return it == defaults.end() ? nullptr : &it->second;
}

std::string kohyaNoEffectOnTraining(const std::string& key) {
  static const std::map<std::string, std::string> why{
      {"num_cpu_threads_per_process", "accelerate's CPU threads per process; Sinter sizes its own thread pools"},
      {"persistent_data_loader_workers", "keeps data loader processes between epochs; Sinter's loader threads persist anyway"},
      {"mem_eff_attn", "a memory-saving attention; Sinter picks its own fused attention"},
      {"highvram", "a memory placement hint"},
      {"lowvram", "a memory placement hint (sd-scripts no longer has it)"},
      {"skip_cache_check", "skips checking cached latents"},
      {"async_upload", "uploads to Hugging Face in the background"},
      {"save_as_bool", "an old kohya_ss GUI switch"},
      {"show_timesteps", "plots the timestep distribution before training"},
      {"show_timesteps_resolution", "plots the timestep distribution before training"},
      {"main_process_port", "accelerate's port for several machines"},
      {"batch_size", "the batch size of fine-tune's caption and bucket preparation"},
      {"full_path", "how fine-tune's metadata names images"},
      {"create_caption", "fine-tune's caption metadata preparation"},
      {"create_buckets", "fine-tune's bucket metadata preparation"},
      {"generate_caption_database", "fine-tune's caption metadata preparation"},
      {"generate_image_buckets", "fine-tune's bucket metadata preparation"},
      {"caption_metadata_filename", "fine-tune's metadata file name"},
      {"latent_metadata_filename", "fine-tune's metadata file name"},
      {"training_preset", "the GUI's preset menu"},
      // sd-scripts' SD 3 scripts take these and mark them "[DOES NOT WORK]": they read none of them.
      {"save_clip", "sd-scripts' SD 3 scripts do not read it (\"[DOES NOT WORK]\" there)"},
      {"save_t5xxl", "sd-scripts' SD 3 scripts do not read it (\"[DOES NOT WORK]\" there)"},
      {"t5xxl_device", "sd-scripts' SD 3 scripts do not read it (\"[DOES NOT WORK]\" there)"},
      {"t5xxl_dtype", "sd-scripts' SD 3 scripts do not read it (\"[DOES NOT WORK]\" there)"},
  };
  auto it = why.find(key);
  return it == why.end() ? std::string() : it->second;
}

std::string kohyaOnlyFor(const std::string& key) {
  struct Prefix {
    const char* prefix;
    const char* family;
  };
  static const Prefix prefixes[] = {{"sd3_", "SD 3.x"},      {"hunyuan_", "HunyuanImage"}, {"anima_", "Anima"},
                                    {"lumina_", "Lumina"},   {"flux1_", "FLUX.1"},
                                    {"sdxl_", "SDXL"}};
  for (const Prefix& p : prefixes)
    if (key.rfind(p.prefix, 0) == 0 && key.find("_checkbox") == std::string::npos) return p.family;
  // Shared field names that lora_gui.py / finetune_gui.py pass to sd-scripts only for one family
  // (their `... if sd3_checkbox else None` lines).
  static const std::map<std::string, std::string> only{
      {"clip_g", "SD 3.x"},
      {"clip_g_dropout_rate", "SD 3.x"},
      {"logit_mean", "SD 3.x"},
      {"logit_std", "SD 3.x"},
      {"mode_scale", "SD 3.x"},
      {"weighting_scheme", "SD 3.x"},
      {"pos_emb_random_crop_rate", "SD 3.x"},
      {"save_clip", "SD 3.x"},
      {"save_t5xxl", "SD 3.x"},
      {"t5_dropout_rate", "SD 3.x"},
      {"t5xxl_device", "SD 3.x"},
      {"t5xxl_dtype", "SD 3.x"},
      {"text_encoder_batch_size", "SD 3.x"},
      {"enable_scaled_pos_embed", "SD 3.x"},
      {"sigmoid_scale", "Lumina, Anima and HunyuanImage"},
      {"attn_mode", "Anima and HunyuanImage"},
      {"model_type", "FLUX.1"},
      {"fp8_base_unet", "FLUX.1"},
      {"cpu_offload_checkpointing", "FLUX.1"},
      {"single_blocks_to_swap", "FLUX.1"},
      {"double_blocks_to_swap", "FLUX.1"},
      {"mem_eff_save", "FLUX.1"},
      {"split_mode", "FLUX.1"},
      {"t5xxl_max_token_length", "FLUX.1"},
      {"apply_t5_attn_mask", "FLUX.1"},
  };
  auto it = only.find(key);
  return it == only.end() ? std::string() : it->second;
}

}  // namespace sinter
