// Every option key that runner/, gui/ or core/ code reads from or writes to a Config by its name
// exists in the registry: a misspelt key would otherwise read the default silently.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/registry.h"

namespace fs = std::filesystem;

namespace {

struct KeyUse {
  std::string file;
  int line = 0;
  std::string key;
};

// The call forms that take an option key: Config's one-argument getters and set/whereSet, the
// validation checker's helpers, the runner's optional-value readers and the app's editors.
std::vector<KeyUse> optionKeysIn(const std::string& file, const std::string& text) {
  static const std::regex forms[] = {
      // config.getBool("key"), c.has("key"), resolved.set("key", value): a Config's one-argument
      // reads (the dataset_config chain's reads take a default too, and its own keys).
      std::regex(R"(\b(?:config|c|cfg|resolved|fresh|presetConfig|written|loaded\.config)(?:\.|->)(?:get|getBool|getInt|getDouble|getString|getList|has|erase|whereSet)\(\s*\"([a-z0-9_]+)\"\s*\))"),
      std::regex(R"(\b(?:config|c|cfg|resolved|fresh|presetConfig)(?:\.|->)set\(\s*\"([a-z0-9_]+)\"\s*,)"),
      // core/validation.cpp's Checker.
      std::regex(R"(\bk\.(?:on|set|num|str|error|warning)\(\s*\"([a-z0-9_]+)\")"),
      std::regex(R"(\b(?:optionalDouble|optionalInt|optionAsJson)\(\s*\w+,\s*\"([a-z0-9_]+)\")"),
      std::regex(R"(\b(?:editor|setOption\(\s*\w+(?:\(\))?,)\s*\(?\s*\"([a-z0-9_]+)\")"),
  };
  std::vector<KeyUse> uses;
  std::istringstream in(text);
  int lineNo = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNo;
    for (const std::regex& form : forms)
      for (auto it = std::sregex_iterator(line.begin(), line.end(), form); it != std::sregex_iterator(); ++it)
        uses.push_back({file, lineNo, (*it)[1].str()});
  }
  return uses;
}

std::vector<KeyUse> unknownKeys(const std::vector<KeyUse>& uses) {
  std::vector<KeyUse> unknown;
  for (const KeyUse& u : uses)
    if (!sinter::findOption(u.key)) unknown.push_back(u);
  return unknown;
}

}  // namespace

TEST(OptionKeysInSource, TheScanFindsMisspeltKeys) {
  const std::string snippet =
      "bool a = config.getBool(\"cache_latents\");\n"
      "double b = config.getDouble(\"learnig_rate\");\n"
      "k.error(\"output_nam\", \"...\");\n"
      "test::setOption(form, \"network_dimm\", 4LL);\n"
      "auto c = layer.getInt(\"num_repeats\", 1);\n";  // a dataset_config key: not a Config call
  const std::vector<KeyUse> uses = optionKeysIn("snippet.cpp", snippet);
  ASSERT_EQ(uses.size(), 4u);
  const std::vector<KeyUse> unknown = unknownKeys(uses);
  ASSERT_EQ(unknown.size(), 3u);
  EXPECT_EQ(unknown[0].key, "learnig_rate");
  EXPECT_EQ(unknown[0].line, 2);
  EXPECT_EQ(unknown[1].key, "output_nam");
  EXPECT_EQ(unknown[2].key, "network_dimm");
}

TEST(OptionKeysInSource, EveryKeyInRunnerGuiAndCoreIsInTheRegistry) {
  std::vector<KeyUse> uses;
  for (const char* area : {"runner", "gui", "core", "tests/gui", "tests/runner"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(SINTER_SOURCE_DIR) / area)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      for (KeyUse& u : optionKeysIn(fs::relative(entry.path(), SINTER_SOURCE_DIR).string(), text.str())) uses.push_back(u);
    }
  }
  EXPECT_GT(uses.size(), 200u) << "the scan no longer sees the code's option reads";
  for (const KeyUse& u : unknownKeys(uses)) ADD_FAILURE() << u.file << ":" << u.line << ": '" << u.key << "' is not an option in the registry";
}
