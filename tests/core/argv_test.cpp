#include <gtest/gtest.h>

#include "core/argv.h"
#include "test_support.h"

using namespace sinter;

TEST(Argv, EveryOptionSurvivesBuildAndParse) {
  for (Tab tab : allTabs()) {
    for (Family family : allFamilies()) {
      Config c = test::fullConfig(tab, family);
      ParsedArgs parsed = parseArgv(buildArgv(c));
      for (const auto& spec : optionRegistry()) {
        if (!spec.appliesToTab(tab) || !spec.appliesToFamily(family) || spec.secret) continue;
        EXPECT_EQ(asString(parsed.overrides.get(spec.key)), asString(c.get(spec.key))) << spec.key;
      }
    }
  }
}

TEST(Argv, FlagsNegationListsAndInlineValues) {
  ParsedArgs p = parseArgv({"--cache_latents", "--no-shuffle_caption", "--network_args", "conv_dim=4", "conv_alpha=1",
                            "--learning_rate=1e-4", "--lr_warmup_steps", "100", "--min_timestep", "0"});
  EXPECT_TRUE(p.overrides.getBool("cache_latents"));
  EXPECT_TRUE(p.overrides.has("shuffle_caption"));
  EXPECT_FALSE(p.overrides.getBool("shuffle_caption"));
  EXPECT_EQ(p.overrides.getList("network_args"), (StringList{"conv_dim=4", "conv_alpha=1"}));
  EXPECT_DOUBLE_EQ(p.overrides.getDouble("learning_rate"), 1e-4);
  EXPECT_TRUE(std::holds_alternative<long long>(p.overrides.get("lr_warmup_steps")));
  EXPECT_EQ(p.overrides.getInt("min_timestep"), 0);
}

TEST(Argv, ProgramOptionsAndErrors) {
  ParsedArgs p = parseArgv({"--config_file", "a.toml", "--dry_run", "--seed", "3"},
                           {{"config_file", true}, {"dry_run", false}});
  EXPECT_EQ(p.extraValues.at("config_file"), "a.toml");
  EXPECT_EQ(p.extraFlags, std::vector<std::string>{"dry_run"});
  EXPECT_EQ(p.overrides.getInt("seed"), 3);

  try {
    parseArgv({"--learnin_rate", "1", "--seed", "x", "--compile_mode", "fast", "--seed"});
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 4u);
    EXPECT_NE(e.diagnostics()[0].message.find("did you mean --learning_rate"), std::string::npos);
    EXPECT_NE(e.diagnostics()[1].message.find("expects an integer"), std::string::npos);
    EXPECT_NE(e.diagnostics()[2].message.find("not one of"), std::string::npos);
    EXPECT_NE(e.diagnostics()[3].message.find("needs a value"), std::string::npos);
  }
}

// sd-scripts' argparse reads an unambiguous prefix as the option it starts (published command lines
// use --max_train_epoch and --save_every_n_epoch); a prefix of several is refused there and here.
TEST(Argv, UnambiguousPrefixesAreReadAsArgparseReadsThem) {
  ParsedArgs p = parseArgv({"--max_train_epoch", "50", "--save_every_n_epoch=2", "--config", "a.toml"},
                           {{"config_file", true}});
  EXPECT_EQ(p.overrides.getInt("max_train_epochs"), 50);
  EXPECT_EQ(p.overrides.getInt("save_every_n_epochs"), 2);
  EXPECT_EQ(p.extraValues.at("config_file"), "a.toml");
  ASSERT_EQ(p.warnings.size(), 3u);
  EXPECT_NE(p.warnings[0].message.find("--max_train_epoch read as --max_train_epochs"), std::string::npos);

  try {
    parseArgv({"--learning_rat", "1"});
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_NE(e.diagnostics()[0].message.find("ambiguous option: --learning_rat could match --learning_rate, "),
              std::string::npos) << e.diagnostics()[0].message;
  }
  // A typo that starts no option stays unknown, with the suggestion.
  EXPECT_THROW(parseArgv({"--men_eff_attn"}), ConfigError);
}

// sd-scripts' --text_encoder_lr takes several values: the first is the text encoders' rate, the
// second networks.lora_flux's T5-XXL rate (t5xxl_lr), the third networks.lora_sd3's (sd3_t5xxl_lr),
// the rest named in a warning.
TEST(Argv, TextEncoderLrsSecondValueIsT5xxls) {
  ParsedArgs p = parseArgv({"--text_encoder_lr", "1e-4", "5e-5", "--seed", "3"});
  EXPECT_DOUBLE_EQ(p.overrides.getDouble("text_encoder_lr"), 1e-4);
  EXPECT_DOUBLE_EQ(p.overrides.getDouble("t5xxl_lr"), 5e-5);
  EXPECT_EQ(p.overrides.getInt("seed"), 3);
  EXPECT_TRUE(p.warnings.empty());
  // A third value is networks.lora_sd3's T5-XXL rate (sd3_t5xxl_lr); each falls back to the one before it.
  ParsedArgs same = parseArgv({"--text_encoder_lr", "1e-4", "1e-4", "9e-5"});
  EXPECT_FALSE(same.overrides.has("t5xxl_lr"));
  EXPECT_DOUBLE_EQ(same.overrides.getDouble("sd3_t5xxl_lr"), 9e-5);
  EXPECT_TRUE(same.warnings.empty());
  ParsedArgs four = parseArgv({"--text_encoder_lr", "1e-4", "5e-5", "5e-5", "9e-5"});
  EXPECT_DOUBLE_EQ(four.overrides.getDouble("t5xxl_lr"), 5e-5);
  EXPECT_FALSE(four.overrides.has("sd3_t5xxl_lr"));
  ASSERT_EQ(four.warnings.size(), 1u);
  EXPECT_NE(four.warnings[0].message.find("9e-5 not"), std::string::npos) << four.warnings[0].message;
  EXPECT_THROW(parseArgv({"--text_encoder_lr", "1e-4", "fast"}), ConfigError);
}

TEST(Argv, SecretsAreNotPutOnCommandLines) {
  Config c;
  c.set("wandb_api_key", std::string("abc"));
  c.set("seed", 5LL);
  auto args = buildArgv(c);
  EXPECT_EQ(args, (std::vector<std::string>{"--seed", "5"}));
}
