#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/config.h"
#include "core/registry.h"

using namespace sinter;

TEST(Registry, KeysAreUniqueAndDescribed) {
  std::set<std::string> keys;
  for (const auto& spec : optionRegistry()) {
    EXPECT_TRUE(keys.insert(spec.key).second) << "duplicate key " << spec.key;
    EXPECT_GT(std::string(spec.label).size(), 1u) << spec.key;
    EXPECT_GT(std::string(spec.tooltip).size(), 5u) << spec.key;
    EXPECT_NE(spec.tabs, 0) << spec.key;
    EXPECT_NE(spec.families, 0) << spec.key;
  }
}

TEST(Registry, DefaultsAreValidValues) {
  for (const auto& spec : optionRegistry()) {
    if (isUnset(spec.defaultValue)) continue;
    Value out;
    EXPECT_EQ(checkValue(spec, spec.defaultValue, out), "") << spec.key;
  }
}

TEST(Registry, HasEveryOptionTheFoundationNames) {
  const char* required[] = {
      "model_family", "training_type", "pretrained_model_name_or_path", "vae", "ae", "clip_l", "t5xxl",
      "clip_tokenizer", "t5_tokenizer", "v_parameterization", "output_dir", "output_name", "save_model_as",
      "save_precision", "training_comment", "no_metadata", "train_data_dir", "reg_data_dir", "dataset_config",
      "resolution", "enable_bucket", "min_bucket_reso", "max_bucket_reso", "bucket_reso_steps",
      "bucket_no_upscale", "caption_extension", "shuffle_caption", "keep_tokens", "caption_dropout_rate",
      "caption_tag_dropout_rate", "flip_aug", "random_crop", "color_aug", "cache_latents", "cache_latents_to_disk",
      "cache_text_encoder_outputs", "cache_text_encoder_outputs_to_disk", "vae_batch_size",
      "max_data_loader_n_workers", "prior_loss_weight", "max_token_length", "train_batch_size", "max_train_steps",
      "max_train_epochs", "gradient_accumulation_steps", "mixed_precision", "full_bf16", "full_fp16", "fp8_base",
      "gradient_checkpointing", "seed", "max_grad_norm", "noise_offset", "multires_noise_iterations",
      "multires_noise_discount", "min_snr_gamma", "loss_type", "huber_c", "ip_noise_gamma", "min_timestep",
      "max_timestep", "sdpa", "xformers", "split_attn", "blocks_to_swap", "clip_skip", "train_text_encoder",
      "learning_rate_te1", "learning_rate_te2", "guidance_scale", "timestep_sampling", "sigmoid_scale",
      "discrete_flow_shift", "model_prediction_type", "t5xxl_max_token_length", "apply_t5_attn_mask",
      "network_module", "network_dim", "network_alpha", "network_args", "network_dropout", "network_weights",
      "dim_from_weights", "network_train_unet_only", "network_train_text_encoder_only", "unet_lr",
      "text_encoder_lr", "optimizer_type", "optimizer_args", "learning_rate", "lr_scheduler", "lr_warmup_steps",
      "lr_scheduler_num_cycles", "lr_scheduler_power", "compile", "compile_backend", "compile_mode",
      "compile_dynamic", "compile_fullgraph", "compile_cache_size_limit", "compile_args", "compile_text_encoders",
      "compile_vae", "cuda_allow_tf32", "cuda_cudnn_benchmark", "save_every_n_epochs", "save_every_n_steps",
      "save_last_n_epochs", "save_last_n_steps", "save_state", "save_state_on_train_end", "resume",
      "sample_prompts", "sample_every_n_steps", "sample_every_n_epochs", "sample_sampler", "sample_at_first",
      "logging_dir", "log_with", "log_prefix", "wandb_api_key", "profile_steps"};
  for (const char* key : required) EXPECT_NE(findOption(key), nullptr) << key;
}

TEST(Registry, SdScriptsDefaults) {
  EXPECT_EQ(asInt(findOption("max_train_steps")->defaultValue), 1600);
  EXPECT_EQ(asString(findOption("caption_extension")->defaultValue), ".caption");
  EXPECT_DOUBLE_EQ(asDouble(findOption("learning_rate")->defaultValue), 2e-6);
  EXPECT_EQ(asInt(findOption("min_bucket_reso")->defaultValue), 256);
  EXPECT_EQ(asInt(findOption("max_data_loader_n_workers")->defaultValue), 8);
  EXPECT_EQ(asString(findOption("compile_backend")->defaultValue), "inductor");
  EXPECT_EQ(asString(findOption("compile_dynamic")->defaultValue), "auto");
  EXPECT_TRUE(isUnset(findOption("seed")->defaultValue));
  EXPECT_DOUBLE_EQ(asDouble(findOption("guidance_scale")->defaultValue), 3.5);
}

TEST(Registry, CompileKeysApplyToSdxlAndFluxOnly) {
  for (const auto& spec : optionRegistry()) {
    if (spec.section != Section::Compile) continue;
    EXPECT_TRUE(spec.appliesToFamily(Family::SDXL)) << spec.key;
    EXPECT_TRUE(spec.appliesToFamily(Family::FLUX)) << spec.key;
    EXPECT_FALSE(spec.appliesToFamily(Family::SD15)) << spec.key;
    EXPECT_FALSE(spec.appliesToFamily(Family::SD2)) << spec.key;
    EXPECT_FALSE(spec.appliesToFamily(Family::SD3)) << spec.key;
  }
}

// SD 3.x: sd3_train_utils.add_sd3_training_arguments' options with its defaults, the flow-matching
// options it shares with FLUX.1, and none of the DDPM families' noise and SNR options (issue 55).
TEST(Registry, Sd3Options) {
  struct Own {
    const char* key;
    Value def;
  };
  for (const Own& o : {Own{"clip_g", Value{}}, Own{"apply_lg_attn_mask", Value{false}}, Own{"training_shift", Value{1.0}},
                       Own{"clip_l_dropout_rate", Value{0.0}}, Own{"clip_g_dropout_rate", Value{0.0}},
                       Own{"t5_dropout_rate", Value{0.0}}, Own{"enable_scaled_pos_embed", Value{false}},
                       Own{"pos_emb_random_crop_rate", Value{0.0}}}) {
    const OptionSpec* spec = findOption(o.key);
    ASSERT_NE(spec, nullptr) << o.key;
    EXPECT_EQ(spec->families, static_cast<std::uint8_t>(Family::SD3)) << o.key;
    EXPECT_EQ(spec->tabs, kAllTabs) << o.key;
    EXPECT_EQ(spec->defaultValue, o.def) << o.key;
  }
  for (const char* key : {"vae", "clip_l", "t5xxl", "t5_tokenizer", "clip_tokenizer", "t5xxl_max_token_length", "apply_t5_attn_mask",
                          "weighting_scheme", "logit_mean", "logit_std", "mode_scale", "cache_text_encoder_outputs",
                          "cache_text_encoder_outputs_to_disk", "min_timestep", "max_timestep", "gradient_checkpointing", "fp8_base",
                          "fp8_base_unet", "t5xxl_lr", "blocks_to_swap"})
    EXPECT_TRUE(findOption(key)->appliesToFamily(Family::SD3)) << key;
  for (const char* key : {"noise_offset", "multires_noise_iterations", "min_snr_gamma", "v_parameterization", "zero_terminal_snr",
                          "scale_v_pred_loss_like_noise_pred", "debiased_estimation_loss", "max_token_length", "clip_skip",
                          "ip_noise_gamma", "vram_budget_gb", "compile",
                          "guidance_scale", "timestep_sampling", "discrete_flow_shift", "ae"})
    EXPECT_FALSE(findOption(key)->appliesToFamily(Family::SD3)) << key;
  EXPECT_EQ(findOption("model_family")->choices.back(), "sd3");
  const auto& modules = findOption("network_module")->choices;
  EXPECT_NE(std::find(modules.begin(), modules.end(), "networks.lora_sd3"), modules.end());
}

TEST(Registry, SuggestsCloseKeys) {
  EXPECT_EQ(suggestKey("learning_rat"), "learning_rate");
  EXPECT_EQ(suggestKey("compile_backed"), "compile_backend");
  EXPECT_EQ(suggestKey("netwrk_dim"), "network_dim");
  EXPECT_EQ(suggestKey("zzzzzzzzzzzzzzzzzzzzzz"), "");
}
