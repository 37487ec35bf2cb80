#include <gtest/gtest.h>

#include <cctype>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "core/atomic_file.h"
#include "core/ecosystem_keys.h"
#include "core/foreign_options.h"
#include "core/registry.h"
#include "core/toml_config.h"
#include "test_support.h"

using namespace sinter;
namespace fs = std::filesystem;

namespace {

std::string dataPath(const std::string& name) { return std::string(SINTER_TEST_DATA_DIR) + "/" + name; }

// Parses text expecting failure; returns the single formatted message list.
std::vector<Diagnostic> expectErrors(const std::string& text, const std::string& file = "bad.toml") {
  try {
    parseConfigToml(text, file);
  } catch (const ConfigError& e) {
    EXPECT_FALSE(e.diagnostics().empty());
    return e.diagnostics();
  }
  ADD_FAILURE() << "accepted:\n" << text.substr(0, 200);
  return {};
}

}  // namespace

TEST(TomlConfig, EveryOptionSurvivesSaveAndLoadForEveryTabAndFamily) {
  for (Tab tab : allTabs()) {
    for (Family family : allFamilies()) {
      Config c = test::fullConfig(tab, family);
      const std::string text = writeConfigToml(c);
      Config back = parseConfigToml(text, "roundtrip.toml").config;
      for (const auto& spec : optionRegistry()) {
        if (!spec.appliesToTab(tab) || !spec.appliesToFamily(family)) continue;
        if (spec.secret) {
          EXPECT_EQ(text.find(spec.key), std::string::npos) << "secret written: " << spec.key;
          continue;
        }
        EXPECT_EQ(asString(back.get(spec.key)), asString(c.get(spec.key)))
            << spec.key << " on " << toString(tab) << "/" << toString(family);
      }
      // Load then save gives the same bytes.
      EXPECT_EQ(writeConfigToml(back), text) << toString(tab) << "/" << toString(family);
    }
  }
}

TEST(TomlConfig, FloatsKeepTheirValueAndIntegersStayIntegers) {
  Config c;
  c.set("learning_rate", 1e-4);
  c.set("lr_warmup_steps", 100LL);
  c.set("caption_dropout_rate", 0.1);
  c.set("min_snr_gamma", 5.0);
  const std::string text = writeConfigToml(c);
  EXPECT_NE(text.find("learning_rate = 0.0001\n"), std::string::npos) << text;
  EXPECT_NE(text.find("lr_warmup_steps = 100\n"), std::string::npos) << text;
  EXPECT_NE(text.find("caption_dropout_rate = 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("min_snr_gamma = 5.0\n"), std::string::npos) << text;
  Config back = parseConfigToml(text, "x.toml").config;
  EXPECT_TRUE(std::holds_alternative<long long>(back.get("lr_warmup_steps")));
  EXPECT_DOUBLE_EQ(back.getDouble("learning_rate"), 1e-4);
}

TEST(TomlConfig, OmissionRules) {
  Config c;
  c.set("model_family", std::string("sdxl"));
  c.set("compile", true);
  c.set("compile_dynamic", std::string("auto"));
  c.set("compile_cache_size_limit", 0LL);
  c.set("wandb_api_key", std::string("secret-key"));
  c.set("huggingface_token", std::string("hf_secret"));
  c.set("output_name", std::string(""));
  std::string text = writeConfigToml(c);
  EXPECT_EQ(text.find("compile_dynamic"), std::string::npos);
  EXPECT_EQ(text.find("compile_cache_size_limit"), std::string::npos);
  EXPECT_NE(text.find("compile_backend = \"inductor\""), std::string::npos) << text;
  EXPECT_NE(text.find("compile = true"), std::string::npos);
  EXPECT_EQ(text.find("secret"), std::string::npos);
  EXPECT_EQ(text.find("wandb_api_key"), std::string::npos);
  EXPECT_EQ(text.find("output_name"), std::string::npos);
  EXPECT_EQ(text.find("seed"), std::string::npos);  // None is never written
  EXPECT_NE(text.find("[compile]"), std::string::npos);

  // A concrete 0.0 is a value, not "unset".
  Config flux;
  flux.set("model_family", std::string("flux"));
  flux.set("guidance_scale", 0.0);
  EXPECT_NE(writeConfigToml(flux).find("guidance_scale = 0.0\n"), std::string::npos);

  // Compile keys only for SDXL and FLUX.
  for (const char* fam : {"sd15", "sd2"}) {
    Config sd = c;
    sd.set("model_family", std::string(fam));
    std::string t = writeConfigToml(sd);
    EXPECT_EQ(t.find("compile"), std::string::npos) << fam << "\n" << t;
    EXPECT_EQ(t.find("cuda_allow_tf32"), std::string::npos);
  }
  Config fluxCompile = c;
  fluxCompile.set("model_family", std::string("flux"));
  EXPECT_NE(writeConfigToml(fluxCompile).find("compile = true"), std::string::npos);

  // Network options only on the LoRA tab.
  Config db;
  db.set("training_type", std::string("dreambooth"));
  db.set("network_dim", 16LL);
  EXPECT_EQ(writeConfigToml(db).find("network_dim"), std::string::npos);
}

TEST(TomlConfig, ReadsTheSectionedStyleKohyaSsWritesForSdScripts) {
  LoadResult r = loadConfigFile(dataPath("sd_scripts_sectioned.toml"));
  const Config& c = r.config;
  EXPECT_EQ(c.getString("pretrained_model_name_or_path"), "/models/sd_xl_base_1.0.safetensors");
  EXPECT_EQ(c.getInt("network_dim"), 32);
  EXPECT_DOUBLE_EQ(c.getDouble("network_alpha"), 16);
  EXPECT_EQ(c.getList("network_args"), (StringList{"conv_dim=4", "conv_alpha=1"}));
  EXPECT_EQ(c.getString("optimizer_type"), "AdamW8bit");
  EXPECT_EQ(c.getInt("lr_warmup_steps"), 100);
  EXPECT_EQ(c.getString("resolution"), "1024,1024");
  EXPECT_EQ(c.getInt("seed"), 42);
  EXPECT_TRUE(c.getBool("xformers"));
  EXPECT_EQ(c.whereSet("network_dim").line, 8);
}

TEST(TomlConfig, FlatKeysAndCompatibleSpellings) {
  Config c = parseConfigToml("resolution = 1024\ncompile_dynamic = false\nseed = 0\n", "flat.toml").config;
  EXPECT_EQ(c.getString("resolution"), "1024");
  EXPECT_EQ(c.getString("compile_dynamic"), "false");
  EXPECT_EQ(c.getInt("seed"), 0);
}

TEST(TomlConfig, UnknownKeyNamesFileLineColumnAndSuggests) {
  auto d = expectErrors("[training]\nlearning_rat = 1e-4\n", "run.toml");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where.file, "run.toml");
  EXPECT_EQ(d[0].where.line, 2);
  EXPECT_GT(d[0].where.column, 0);
  EXPECT_NE(d[0].message.find("did you mean 'learning_rate'"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].format().find("run.toml:2:"), std::string::npos) << d[0].format();
}

TEST(TomlConfig, ReportsEveryBadValueWithItsLine) {
  auto d = expectErrors("seed = \"42\"\ntrain_batch_size = 0\ncompile_mode = \"fast\"\nnetwork_args = \"a=1\"\n"
                        "cache_latents = 1\nlearning_rate = 2.0\n");
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0].where.line, 1);
  EXPECT_NE(d[0].message.find("seed must be an integer"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].where.line, 2);
  EXPECT_NE(d[1].message.find("below the minimum 1"), std::string::npos) << d[1].message;
  EXPECT_EQ(d[2].where.line, 3);
  EXPECT_NE(d[2].message.find("default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs"), std::string::npos);
  EXPECT_EQ(d[3].where.line, 4);
  EXPECT_EQ(d[4].where.line, 5);
  EXPECT_NE(d[5].message.find("above the maximum"), std::string::npos) << d[5].message;
}

TEST(TomlConfig, DuplicateKeys) {
  // In one table TOML itself forbids it.
  auto same = expectErrors("seed = 1\nseed = 2\n");
  EXPECT_EQ(same[0].where.line, 2);
  EXPECT_NE(same[0].message.find("duplicate"), std::string::npos) << same[0].message;
  // In two sections sd-scripts flattens them and the later wins: so here, with a warning naming both lines.
  const std::string text = "[a]\nseed = 1\n[b]\nseed = 2\n";
  LoadResult r = parseConfigToml(text, "two.toml");
  EXPECT_EQ(r.config.getInt("seed"), 2);
  EXPECT_EQ(r.config.whereSet("seed").line, 4);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].where.line, 4);
  EXPECT_NE(r.warnings[0].message.find("set twice, on line 2 and here: the later value is used"), std::string::npos) << r.warnings[0].message;
  try {
    parseConfigToml(text, "two.toml", ConfigReading::Strict);
    ADD_FAILURE() << "strict reading accepted a key set twice";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics()[0].where.line, 4);
    EXPECT_NE(e.diagnostics()[0].message.find("first set on line 2"), std::string::npos) << e.diagnostics()[0].message;
  }
}

TEST(TomlConfig, KeysThatAreNoOptionAreIgnoredWithAWarningUnlessTheyAreTypos) {
  const std::string text =
      "[general]\nsdxl = true\nepoch = 10\nmy_own_note = \"v3 run\"\n[training]\nlearning_rate = 1e-4\n";
  LoadResult r = parseConfigToml(text, "kohya.toml");
  EXPECT_EQ(r.config.explicitValues().size(), 1u);  // learning_rate only
  ASSERT_EQ(r.warnings.size(), 3u);
  // kohya_ss's `sdxl` checkbox looks like a typo of sdpa but is known: said what it is.
  EXPECT_EQ(r.warnings[0].key, "sdxl");
  EXPECT_EQ(r.warnings[0].where.line, 2);
  EXPECT_NE(r.warnings[0].message.find("kohya_ss"), std::string::npos) << r.warnings[0].message;
  EXPECT_EQ(r.warnings[1].key, "epoch");
  EXPECT_NE(r.warnings[2].message.find("unknown key 'my_own_note' is ignored"), std::string::npos) << r.warnings[2].message;
  // A near miss of an option stays an error with the suggestion.
  EXPECT_NE(expectErrors("[training]\nlearning_rat = 1e-4\n")[0].message.find("did you mean 'learning_rate'"), std::string::npos);
  // Strict: every one of them is an error.
  try {
    parseConfigToml(text, "kohya.toml", ConfigReading::Strict);
    ADD_FAILURE() << "strict reading accepted unknown keys";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 3u);
  }
}

TEST(TomlConfig, ValuesSdScriptsReadsLooselyAsItReadsThem) {
  LoadResult r = parseConfigToml("resume = false\ntext_encoder_lr = [5e-5, 5e-5]\nunet_lr = 1e-4\n", "loose.toml");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_FALSE(r.config.has("resume")) << "resume = false is no resume";
  EXPECT_DOUBLE_EQ(r.config.getDouble("text_encoder_lr"), 5e-5);
  // Two values: the first is the text encoders' rate, the second T5-XXL's (networks.lora_flux
  // reads it; t5xxl_lr here); a third networks.lora_sd3's T5-XXL's (sd3_t5xxl_lr); a fourth is read
  // by no network of sd-scripts and is named.
  LoadResult two = parseConfigToml("text_encoder_lr = [1e-5, 2e-5]\n", "two.toml");
  EXPECT_DOUBLE_EQ(two.config.getDouble("text_encoder_lr"), 1e-5);
  EXPECT_DOUBLE_EQ(two.config.getDouble("t5xxl_lr"), 2e-5);
  EXPECT_EQ(two.config.whereSet("t5xxl_lr").line, 1);
  EXPECT_TRUE(two.warnings.empty());
  LoadResult three = parseConfigToml("text_encoder_lr = [1e-5, 2e-5, 3e-5]\n", "three.toml");
  EXPECT_DOUBLE_EQ(three.config.getDouble("t5xxl_lr"), 2e-5);
  EXPECT_DOUBLE_EQ(three.config.getDouble("sd3_t5xxl_lr"), 3e-5);
  EXPECT_TRUE(three.warnings.empty());
  // Each value falls back to the one before: an equal one sets nothing, a differing one after an equal one does.
  LoadResult skipped = parseConfigToml("text_encoder_lr = [1e-5, 1e-5, 3e-5]\n", "skipped.toml");
  EXPECT_FALSE(skipped.config.has("t5xxl_lr"));
  EXPECT_DOUBLE_EQ(skipped.config.getDouble("sd3_t5xxl_lr"), 3e-5);
  EXPECT_FALSE(parseConfigToml("text_encoder_lr = [1e-5, 2e-5, 2e-5]\n", "same.toml").config.has("sd3_t5xxl_lr"));
  LoadResult four = parseConfigToml("text_encoder_lr = [1e-5, 2e-5, 3e-5, 4e-5]\n", "four.toml");
  ASSERT_EQ(four.warnings.size(), 1u);
  EXPECT_NE(four.warnings[0].message.find("0.00004 not (a second value is T5-XXL's"), std::string::npos) << four.warnings[0].message;
  EXPECT_NE(expectErrors("text_encoder_lr = [1e-5, 2e-5, -3.0]\n")[0].message.find("text_encoder_lr's third value (sd3_t5xxl_lr)"),
            std::string::npos);
  EXPECT_FALSE(r.config.has("t5xxl_lr")) << "an equal second value changes nothing";
  EXPECT_NE(expectErrors("text_encoder_lr = [1e-5, -1.0]\n")[0].message.find("text_encoder_lr's second value (t5xxl_lr)"),
            std::string::npos);
  // An empty list is unset; a list of text is still a bad value.
  EXPECT_FALSE(parseConfigToml("text_encoder_lr = []\n", "e.toml").config.has("text_encoder_lr"));
  EXPECT_NE(expectErrors("text_encoder_lr = [\"fast\"]\n")[0].message.find("text_encoder_lr must be a number"), std::string::npos);
  // Strict: both refused as before.
  for (const char* text : {"resume = false\n", "text_encoder_lr = [1e-5, 2e-5]\n"}) {
    EXPECT_THROW(parseConfigToml(text, "s.toml", ConfigReading::Strict), ConfigError) << text;
  }
}

TEST(TomlConfig, SyntaxErrorNamesTheLine) {
  auto d = expectErrors("seed = 1\noutput_name = \"unterminated\n", "broken.toml");
  EXPECT_EQ(d[0].where.file, "broken.toml");
  EXPECT_EQ(d[0].where.line, 2);
  EXPECT_NE(d[0].message.find("syntax"), std::string::npos) << d[0].message;
}

TEST(TomlConfig, RejectsFilesThatAreNotConfigs) {
  EXPECT_NE(expectErrors("")[0].message.find("empty"), std::string::npos);
  EXPECT_NE(expectErrors("  \n\n")[0].message.find("empty"), std::string::npos);
  auto latin1 = expectErrors("output_name = \"caf\xe9\"\n");
  EXPECT_EQ(latin1[0].where.line, 1);
  EXPECT_NE(latin1[0].message.find("UTF-8"), std::string::npos);
  std::string big(10 * 1024 * 1024, '#');
  EXPECT_NE(expectErrors(big)[0].message.find("too large"), std::string::npos);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::string junk(4096, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng() & 0xFF);
    auto d = expectErrors(junk, "random.bin");
    EXPECT_EQ(d[0].where.file, "random.bin");
  }
}

TEST(TomlConfig, SaveIsAtomicAndLoadsBack) {
  fs::path dir = fs::temp_directory_path() / ("sinter_toml_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "run.toml").string();
  Config c = test::fullConfig(Tab::LoRA, Family::SDXL);
  saveConfigFile(path, c);
  saveConfigFile(path, c);  // replacing an existing file
  for (const auto& entry : fs::directory_iterator(dir)) EXPECT_EQ(entry.path().filename(), "run.toml");
  Config back = loadConfigFile(path).config;
  EXPECT_EQ(readWholeFile(path), writeConfigToml(back));
  EXPECT_THROW(saveConfigFile((dir / "missing" / "x.toml").string(), c), std::runtime_error);
  EXPECT_THROW(loadConfigFile((dir / "absent.toml").string()), ConfigError);
  fs::remove_all(dir);
}

TEST(TomlConfig, EcosystemKeysAreNoOptions) {
  // A key other tools write is ignored only where it is neither a Sinter option nor an sd-scripts one.
  for (const char* key : {"sdxl", "epoch", "noise_offset_type", "lr_restart_cycles", "LoRA_type", "conv_dim"})
    EXPECT_NE(findEcosystemKey(key), nullptr) << key;
  std::set<std::string> seen;
  for (const EcosystemKey& k : ecosystemKeys()) {
    EXPECT_TRUE(seen.insert(k.key).second) << "twice: " << k.key;
    EXPECT_EQ(findOption(k.key), nullptr) << k.key << " is a Sinter option";
    EXPECT_EQ(findForeignOption(k.key), nullptr) << k.key << " is an sd-scripts option of the four scripts";
    EXPECT_GT(std::string(k.what).size(), 8u) << k.key;
    // Shown in parentheses after the source: an acronym or a name keeps its capitals ("SD3 ...", not "sD3 ...").
    const std::string what = k.what;
    EXPECT_FALSE(std::islower(static_cast<unsigned char>(what[0])) && std::isupper(static_cast<unsigned char>(what[1]))) << k.key << ": " << what;
  }
}
