// sd-scripts options Sinter refuses or ignores, in a TOML config and on the command line.
#include <gtest/gtest.h>

#include "core/argv.h"
#include "core/foreign_options.h"
#include "core/toml_config.h"

using namespace sinter;

namespace {

std::vector<Diagnostic> tomlErrors(const std::string& text, const std::string& file) {
  try {
    parseConfigToml(text, file);
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
  return {};
}

std::vector<Diagnostic> argvErrors(const std::vector<std::string>& args) {
  try {
    parseArgv(args);
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace

TEST(ForeignOptions, RefusedKeyInTomlNamesFileLineKeyAndWhy) {
  const auto errors = tomlErrors("[training]\nlearning_rate = 1e-4\ndeepspeed = true\n", "my_lora.toml");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key, "deepspeed");
  EXPECT_EQ(errors[0].where.file, "my_lora.toml");
  EXPECT_EQ(errors[0].where.line, 3);
  const std::string text = errors[0].format();
  EXPECT_NE(text.find("my_lora.toml:3:"), std::string::npos) << text;
  EXPECT_NE(text.find("deepspeed = true is refused"), std::string::npos) << text;
  EXPECT_NE(text.find("--nproc_per_node"), std::string::npos) << text;
}

TEST(ForeignOptions, EveryRefusedKeyIsRefusedWithItsReason) {
  for (const ForeignOption& f : foreignOptions()) {
    if (f.handling != ForeignHandling::Refused) continue;
    const std::string value = f.type == OptionType::Bool ? "true"
                              : f.type == OptionType::List ? "[\"x.safetensors\"]"
                              : (f.type == OptionType::Int || f.type == OptionType::Float) ? "7"
                                                                                           : "\"something\"";
    const auto errors = tomlErrors(std::string(f.key) + " = " + value + "\n", "c.toml");
    ASSERT_EQ(errors.size(), 1u) << f.key;
    EXPECT_EQ(errors[0].severity, Severity::Error) << f.key;
    EXPECT_NE(errors[0].message.find(f.reason), std::string::npos) << f.key;
  }
}

TEST(ForeignOptions, ValuesThatAskForNothingLoadAndAreNotStored) {
  // As kohya_ss and sd-scripts write them: false, empty, None-like, or sd-scripts' default.
  LoadResult r = parseConfigToml(
      "deepspeed = false\nzero_stage = 2\nhuggingface_repo_id = \"\"\n"
      "dynamo_backend = \"inductor\"\nbase_weights = []\ndouble_blocks_to_swap = 0\nseed = 1\n",
      "kohya.toml");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.config.explicitValues().size(), 1u);  // only seed
  EXPECT_TRUE(r.config.has("seed"));
  // A non-default value of the same keys is refused.
  EXPECT_EQ(tomlErrors("zero_stage = 3\n", "z.toml").size(), 1u);
  EXPECT_EQ(tomlErrors("double_blocks_to_swap = 4\n", "z.toml").size(), 1u);
}

TEST(ForeignOptions, IgnoredKeyLoadsWithAWarningSayingWhy) {
  LoadResult r = parseConfigToml("persistent_data_loader_workers = true\nmem_eff_attn = true\n", "w.toml");
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0].severity, Severity::Warning);
  EXPECT_EQ(r.warnings[0].key, "persistent_data_loader_workers");
  EXPECT_EQ(r.warnings[0].where.line, 1);
  EXPECT_NE(r.warnings[0].message.find("is ignored"), std::string::npos);
  EXPECT_EQ(r.warnings[1].where.line, 2);
  EXPECT_TRUE(r.config.explicitValues().empty());
}

TEST(ForeignOptions, RefusedAndIgnoredKeysOnTheCommandLine) {
  auto errors = argvErrors({"--seed", "1", "--deepspeed", "--zero_stage", "3", "--huggingface_repo_id=me/lora"});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].key, "deepspeed");
  EXPECT_EQ(errors[0].where.file, "command line");
  EXPECT_NE(errors[0].format().find("DeepSpeed is not in Sinter"), std::string::npos) << errors[0].format();
  EXPECT_EQ(errors[1].key, "zero_stage");
  // A Hub upload's only effect is outside the run: the run goes on with a warning naming it.
  ParsedArgs hub = parseArgv({"--huggingface_repo_id=me/lora", "--async_upload"});
  ASSERT_EQ(hub.warnings.size(), 2u);
  EXPECT_NE(hub.warnings[0].message.find("huggingface_repo_id is ignored: its only effect is outside the run"), std::string::npos)
      << hub.warnings[0].message;
  // --strict reading of a config refuses it.
  EXPECT_THROW(parseConfigToml("huggingface_repo_id = \"me/lora\"\n", "hub.toml", ConfigReading::Strict), ConfigError);
  EXPECT_EQ(parseConfigToml("huggingface_repo_id = \"me/lora\"\n", "hub.toml").warnings.size(), 1u);
  // A list option consumes its values up to the next option, as sd-scripts' nargs="*" does.
  errors = argvErrors({"--base_weights", "a.safetensors", "b.safetensors", "--seed", "1"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("a.safetensors b.safetensors"), std::string::npos) << errors[0].message;

  // Inert values pass; ignored options come back as warnings; neither is an override.
  ParsedArgs p = parseArgv({"--no-deepspeed", "--zero_stage", "2", "--dynamo_backend", "inductor", "--lowram", "--seed", "4"});
  EXPECT_EQ(p.overrides.explicitValues().size(), 1u);
  EXPECT_EQ(p.overrides.getInt("seed"), 4);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].key, "lowram");
  EXPECT_TRUE(p.positional.empty());
}

TEST(ForeignOptions, NeverWrittenByTheWriterNorBuiltIntoArgv) {
  // They never reach a Config, so the writer and argv cannot emit them; a Config refuses them too.
  LoadResult r = parseConfigToml("cache_info = true\nuse_safetensors = true\nlearning_rate = 0.001\n", "c.toml");
  const std::string written = writeConfigToml(r.config);
  EXPECT_EQ(written.find("cache_info"), std::string::npos) << written;
  EXPECT_EQ(written.find("use_safetensors"), std::string::npos) << written;
  EXPECT_NE(written.find("learning_rate"), std::string::npos) << written;
  for (const std::string& arg : buildArgv(r.config)) EXPECT_EQ(findForeignOption(arg.substr(2)), nullptr) << arg;
  EXPECT_THROW(r.config.get("deepspeed"), std::out_of_range);
}
