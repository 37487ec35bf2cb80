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
    parseArgv({"--learning_rat", "1", "--seed", "x", "--compile_mode", "fast", "--seed"});
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 4u);
    EXPECT_NE(e.diagnostics()[0].message.find("did you mean --learning_rate"), std::string::npos);
    EXPECT_NE(e.diagnostics()[1].message.find("expects an integer"), std::string::npos);
    EXPECT_NE(e.diagnostics()[2].message.find("not one of"), std::string::npos);
    EXPECT_NE(e.diagnostics()[3].message.find("needs a value"), std::string::npos);
  }
}

TEST(Argv, SecretsAreNotPutOnCommandLines) {
  Config c;
  c.set("wandb_api_key", std::string("abc"));
  c.set("seed", 5LL);
  auto args = buildArgv(c);
  EXPECT_EQ(args, (std::vector<std::string>{"--seed", "5"}));
}
