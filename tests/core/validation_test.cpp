#include <gtest/gtest.h>

#include "core/compile_settings.h"
#include "core/toml_config.h"
#include "core/validation.h"

using namespace sinter;

namespace {
Config parse(const std::string& text) { return parseConfigToml(text, "v.toml").config; }

const Diagnostic* find(const std::vector<Diagnostic>& d, const std::string& key, Severity s) {
  for (const auto& x : d)
    if (x.key == key && x.severity == s) return &x;
  return nullptr;
}
}  // namespace

TEST(Validation, FullgraphWithSplitAttentionIsRejectedWithItsLine) {
  auto d = validateConfig(parse("model_family = \"flux\"\nsplit_attn = true\ncompile_fullgraph = true\n"));
  const Diagnostic* e = find(d, "compile_fullgraph", Severity::Error);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->where.line, 3);
  EXPECT_NE(e->format().find("v.toml:3:"), std::string::npos);
}

TEST(Validation, BlocksToSwapOnlyForFlux) {
  EXPECT_NE(find(validateConfig(parse("model_family = \"sdxl\"\nblocks_to_swap = 8\n")), "blocks_to_swap", Severity::Error), nullptr);
  EXPECT_FALSE(hasErrors(validateConfig(parse("model_family = \"flux\"\nblocks_to_swap = 8\n"))));
}

TEST(Validation, CompileSettingsForOtherFamiliesAreWarned) {
  auto d = validateConfig(parse("model_family = \"sd15\"\ncompile = true\ncompile_mode = \"max-autotune\"\n"));
  EXPECT_FALSE(hasErrors(d));
  const Diagnostic* w = find(d, "compile", Severity::Warning);
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->message.find("SDXL and FLUX only"), std::string::npos);
  EXPECT_NE(find(d, "compile_mode", Severity::Warning), nullptr);
}

TEST(Validation, SdScriptsRules) {
  EXPECT_NE(find(validateConfig(parse("full_bf16 = true\n")), "full_bf16", Severity::Error), nullptr);
  EXPECT_FALSE(hasErrors(validateConfig(parse("full_bf16 = true\nmixed_precision = \"bf16\"\n"))));
  EXPECT_NE(find(validateConfig(parse("cache_latents = true\nrandom_crop = true\n")), "random_crop", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("model_family = \"sdxl\"\ncache_text_encoder_outputs = true\nshuffle_caption = true\n"
                                      "network_train_unet_only = true\n")),
                 "shuffle_caption", Severity::Error),
            nullptr);
  EXPECT_NE(find(validateConfig(parse("model_family = \"sdxl\"\ncache_text_encoder_outputs = true\n")),
                 "cache_text_encoder_outputs", Severity::Error),
            nullptr);
  // FLUX caches T5-XXL's outputs and encodes CLIP-L in the step (sd-scripts' partial cache).
  EXPECT_EQ(find(validateConfig(parse("model_family = \"flux\"\nnetwork_module = \"networks.lora_flux\"\ncache_text_encoder_outputs = true\n")),
                 "cache_text_encoder_outputs", Severity::Error),
            nullptr);
  EXPECT_NE(find(validateConfig(parse("network_train_unet_only = true\nnetwork_train_text_encoder_only = true\n")),
                 "network_train_text_encoder_only", Severity::Error),
            nullptr);
  EXPECT_NE(find(validateConfig(parse("min_bucket_reso = 2048\nmax_bucket_reso = 1024\n")), "min_bucket_reso", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("min_timestep = 500\nmax_timestep = 400\n")), "min_timestep", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("resolution = \"1024x1024\"\n")), "resolution", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("dim_from_weights = true\n")), "dim_from_weights", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("model_family = \"flux\"\nnetwork_module = \"networks.lora\"\n")), "network_module", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("compile = true\ncompile_args = [\"inductor\", \"default\"]\n")), "compile_args", Severity::Error), nullptr);
  EXPECT_NE(find(validateConfig(parse("compile = true\ncompile_args = [\"inductor\", \"turbo\", \"auto\", \"false\"]\n")), "compile_args", Severity::Error), nullptr);
  EXPECT_TRUE(validateConfig(parse("model_family = \"sdxl\"\nresolution = \"1024,1024\"\n")).empty());
}

TEST(Validation, ValidationSplitOptions) {
  // A fraction below 1: the registry's range takes 0..1, the rule refuses 1 itself.
  const Diagnostic* one = find(validateConfig(parse("validation_split = 1.0\n")), "validation_split", Severity::Error);
  ASSERT_NE(one, nullptr);
  EXPECT_NE(one->message.find("below 1"), std::string::npos) << one->message;
  // Outside the registry's ranges the config does not even parse; the message names the key.
  for (const char* bad : {"validation_split = 1.5\n", "validation_split = -0.1\n", "max_validation_steps = 0\n",
                          "validate_every_n_steps = 0\n", "validate_every_n_epochs = 0\n", "validation_seed = -1\n"}) {
    try {
      parse(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::exception& e) {
      const std::string key = std::string(bad).substr(0, std::string(bad).find(' '));
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(validateConfig(parse("validation_split = 0.1\nvalidation_seed = 3\nvalidate_every_n_steps = 50\n"
                                   "validate_every_n_epochs = 2\nmax_validation_steps = 10\n"))
                  .empty());
  // Without a split the schedule does nothing, unless a dataset_config may set one per dataset.
  EXPECT_NE(find(validateConfig(parse("validate_every_n_steps = 50\n")), "validate_every_n_steps", Severity::Warning), nullptr);
  EXPECT_NE(find(validateConfig(parse("validation_split = 0.0\nvalidation_seed = 1\n")), "validation_seed", Severity::Warning), nullptr);
  EXPECT_EQ(find(validateConfig(parse("dataset_config = \"d.toml\"\nvalidate_every_n_steps = 50\n")), "validate_every_n_steps",
                 Severity::Warning),
            nullptr);
}

TEST(Validation, ResolutionSidesArePositive) {
  for (const char* bad : {"0", "1024,0", "0,1024", "-512", "00"}) {
    const Diagnostic* e = find(validateConfig(parse(std::string("resolution = \"") + bad + "\"\n")), "resolution", Severity::Error);
    ASSERT_NE(e, nullptr) << bad;
    EXPECT_NE(e->message.find("positive integers"), std::string::npos) << e->message;
    EXPECT_EQ(e->where.line, 1);
  }
  EXPECT_NE(find(validateConfig(parse("resolution = 0\n")), "resolution", Severity::Error), nullptr);  // an integer, as sd-scripts configs write it
  for (const char* good : {"1024", "1024,768", " 512 , 512 ", "0512"})
    EXPECT_EQ(find(validateConfig(parse(std::string("resolution = \"") + good + "\"\n")), "resolution", Severity::Error), nullptr) << good;
}

// output_name is the stem of every file a run writes: a name inside output_dir, never a path.
TEST(Validation, OutputNameMustStayInsideOutputDir) {
  struct Case {
    std::string toml, says;
  };
  const std::vector<Case> bad{
      {R"(output_name = "../escaped")", "path separator"},
      {R"(output_name = "sub/name")", "path separator"},
      {R"(output_name = "/etc/passwd")", "path separator"},
      {R"(output_name = "..\\escaped")", "path separator"},
      {R"(output_name = "..")", "\"..\""},
      {R"(output_name = ".")", "\".\""},
      {R"(output_name = "a\u0000b")", "NUL"},
      {R"(output_name = "line\nbreak")", "control character"},
      {"output_name = \"" + std::string(231, 'x') + "\"", "at most 230"},
  };
  for (const Case& c : bad) {
    const auto diags = validateConfig(parse("model_family = \"sdxl\"\n" + c.toml + "\n"));
    const Diagnostic* e = find(diags, "output_name", Severity::Error);
    ASSERT_NE(e, nullptr) << c.toml;
    EXPECT_NE(e->message.find(c.says), std::string::npos) << c.toml << ": " << e->message;
    EXPECT_EQ(e->where.line, 2) << c.toml;
    // The value is quoted, with control characters written out, on one line.
    EXPECT_EQ(e->format().find('\n'), std::string::npos) << e->format();
    EXPECT_EQ(e->format().find('\0'), std::string::npos);
  }
  const std::vector<Diagnostic> nulDiags = validateConfig(parse(R"(output_name = "a\u0000b")" "\n"));
  const Diagnostic* nul = find(nulDiags, "output_name", Severity::Error);
  ASSERT_NE(nul, nullptr);
  EXPECT_NE(nul->format().find("a\\x00b"), std::string::npos) << nul->format();
  for (const char* good : {"my_lora", "my lora v1.5", "キャラ", "x-step"})
    EXPECT_EQ(find(validateConfig(parse(std::string("output_name = \"") + good + "\"\n")), "output_name", Severity::Error), nullptr) << good;
  EXPECT_EQ(find(validateConfig(parse("output_name = \"" + std::string(230, 'x') + "\"\n")), "output_name", Severity::Error), nullptr);
}

TEST(CompileRequest, DefaultsAndDeprecatedCompileArgs) {
  CompileRequest plain = resolveCompileRequest(parse("compile = true\n"));
  EXPECT_TRUE(plain.enabled);
  EXPECT_EQ(plain.cacheSizeLimit, 8);
  EXPECT_EQ(plain.logLine("U-Net"), "Compiling U-Net with torch.compile: backend=inductor, mode=default, dynamic=None, fullgraph=False");

  CompileRequest old = resolveCompileRequest(parse("compile = true\ncompile_mode = \"default\"\n"
                                                   "compile_args = [\"cudagraphs\", \"max-autotune\", \"False\", \"True\"]\n"));
  EXPECT_EQ(old.backend, "cudagraphs");
  EXPECT_EQ(old.mode, "max-autotune");
  EXPECT_EQ(old.dynamic, "false");
  EXPECT_TRUE(old.fullgraph);
  EXPECT_EQ(old.cacheSizeLimit, 32);
  EXPECT_FALSE(old.notes.empty());

  CompileRequest limited = resolveCompileRequest(parse("compile = true\ncompile_cache_size_limit = 3\ncompile_dynamic = \"true\"\n"));
  EXPECT_EQ(limited.cacheSizeLimit, 3);
  EXPECT_EQ(limited.dynamicAsPython(), "True");
  EXPECT_FALSE(resolveCompileRequest(parse("compile_args = [\"a\",\"b\",\"c\",\"d\"]\n")).enabled);
}

// SD 1.x/2.x have no compile panel: validation warns that the settings are ignored, and the
// request the run reads is the eager default, saying why.
TEST(CompileRequest, OffForFamiliesWithoutTheCompilePanel) {
  for (const char* family : {"sd15", "sd2"}) {
    const CompileRequest r = resolveCompileRequest(parse(std::string("model_family = \"") + family +
                                                         "\"\ncompile = true\ncompile_fullgraph = true\ncuda_allow_tf32 = true\n"));
    EXPECT_FALSE(r.enabled) << family;
    EXPECT_FALSE(r.fullgraph) << family;
    EXPECT_FALSE(r.allowTf32) << family;
    ASSERT_EQ(r.notes.size(), 1u) << family;
    EXPECT_NE(r.notes[0].find("apply to SDXL and FLUX only"), std::string::npos) << r.notes[0];
  }
  EXPECT_TRUE(resolveCompileRequest(parse("model_family = \"sdxl\"\ncompile = true\n")).enabled);
}

// sd-scripts' rules for the noise, loss, bucket and memory options (verify_training_args,
// verify_bucket_reso_steps, flux_train*.py's asserts).
TEST(Validation, NoiseLossBucketAndFusedOptionRules) {
  auto error = [](const std::string& text, const std::string& key) {
    return find(validateConfig(parse(text)), key, Severity::Error) != nullptr;
  };
  auto warning = [](const std::string& text, const std::string& key) {
    return find(validateConfig(parse(text)), key, Severity::Warning) != nullptr;
  };
  EXPECT_TRUE(error("adaptive_noise_scale = 0.00357\n", "adaptive_noise_scale"));
  EXPECT_FALSE(hasErrors(validateConfig(parse("noise_offset = 0.0357\nadaptive_noise_scale = 0.00357\n"))));
  EXPECT_TRUE(error("scale_v_pred_loss_like_noise_pred = true\n", "scale_v_pred_loss_like_noise_pred"));
  EXPECT_TRUE(warning("zero_terminal_snr = true\n", "zero_terminal_snr"));
  EXPECT_FALSE(warning("zero_terminal_snr = true\nv_parameterization = true\n", "zero_terminal_snr"));
  // SDXL and FLUX LoRA buckets are multiples of 32; flux_train.py's of 16.
  const Diagnostic* b = find(validateConfig(parse("model_family = \"sdxl\"\nbucket_reso_steps = 8\n")), "bucket_reso_steps", Severity::Error);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(b->message.find("multiple of 32"), std::string::npos) << b->message;
  EXPECT_FALSE(error("model_family = \"sdxl\"\nbucket_reso_steps = 32\n", "bucket_reso_steps"));
  EXPECT_TRUE(error("model_family = \"flux\"\nbucket_reso_steps = 16\n", "bucket_reso_steps"));
  EXPECT_FALSE(error("model_family = \"flux\"\ntraining_type = \"finetune\"\nbucket_reso_steps = 16\n", "bucket_reso_steps"));
  EXPECT_TRUE(error("model_family = \"flux\"\ncpu_offload_checkpointing = true\nblocks_to_swap = 8\n", "cpu_offload_checkpointing"));
  EXPECT_TRUE(error("model_family = \"sdxl\"\ntraining_type = \"finetune\"\nfused_backward_pass = true\nfused_optimizer_groups = 4\n",
                    "fused_optimizer_groups"));
}

// fp8_scaled needs fp8_base (or fp8_base_unet), fp8_fast needs fp8_scaled; fp8_scaled is not with
// blocks_to_swap; fp8_fast_backward turned off means nothing without fp8_fast.
TEST(Validation, Fp8ComputeOptionsNeedTheOneBefore) {
  const std::string flux = "model_family = \"flux\"\n";
  auto diagnose = [&](const std::string& text) { return validateConfig(parse(flux + text)); };
  const Diagnostic* scaled = find(diagnose("fp8_scaled = true\n"), "fp8_scaled", Severity::Error);
  ASSERT_NE(scaled, nullptr);
  EXPECT_NE(scaled->message.find("fp8_base"), std::string::npos) << scaled->message;
  const Diagnostic* fast = find(diagnose("fp8_base = true\nfp8_fast = true\n"), "fp8_fast", Severity::Error);
  ASSERT_NE(fast, nullptr);
  EXPECT_NE(fast->message.find("fp8_scaled"), std::string::npos) << fast->message;
  EXPECT_FALSE(hasErrors(diagnose("fp8_base = true\nfp8_scaled = true\nfp8_fast = true\n")));
  EXPECT_FALSE(hasErrors(diagnose("fp8_base_unet = true\nfp8_scaled = true\nfp8_fast = true\n")));
  EXPECT_NE(find(diagnose("fp8_base = true\nfp8_scaled = true\nblocks_to_swap = 4\n"), "fp8_scaled", Severity::Error), nullptr);
  EXPECT_NE(find(diagnose("fp8_fast_backward = false\n"), "fp8_fast_backward", Severity::Warning), nullptr);
  EXPECT_EQ(find(diagnose("fp8_base = true\nfp8_scaled = true\nfp8_fast = true\nfp8_fast_backward = false\n"), "fp8_fast_backward",
                 Severity::Warning),
            nullptr);
  // FLUX's only: asked of SDXL it is reported like any other option of another family.
  EXPECT_FALSE(validateConfig(parse("model_family = \"sdxl\"\nfp8_base = true\nfp8_scaled = true\n")).empty());
}

// Textual inversion is sd-scripts' SD 1.x/2.x and SDXL scripts': FLUX.1 and SD 3.x are refused by
// name, as the runner's training table refuses them; the other training types take every family.
TEST(Validation, TextualInversionTrainsSdAndSdxlOnly) {
  for (const char* family : {"flux", "sd3"}) {
    const auto d = validateConfig(parse(std::string("training_type = \"textual_inversion\"\nmodel_family = \"") + family + "\"\n"));
    const Diagnostic* e = find(d, "model_family", Severity::Error);
    ASSERT_NE(e, nullptr) << family;
    EXPECT_NE(e->message.find(std::string(family) + " has no textual inversion"), std::string::npos) << e->message;
    EXPECT_EQ(e->where.line, 2);
  }
  for (const char* family : {"sd15", "sd2", "sdxl"})
    EXPECT_EQ(find(validateConfig(parse(std::string("training_type = \"textual_inversion\"\nmodel_family = \"") + family + "\"\n")),
                   "model_family", Severity::Error),
              nullptr)
        << family;
  EXPECT_FALSE(hasErrors(validateConfig(parse("training_type = \"lora\"\nmodel_family = \"flux\"\n"))));
}
