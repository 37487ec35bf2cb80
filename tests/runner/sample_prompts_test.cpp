// sample_prompts files in sd-scripts' three forms: each option of a text line, the .toml and
// .json forms, and every bad line refused naming the file and the line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "sample/sample_prompts.h"

namespace fs = std::filesystem;
using namespace sinter::sample;

namespace {

std::string writeFile(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_prompts_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
  return (dir / name).string();
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const PromptError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(SamplePrompts, TextLineOptions) {
  const SamplePrompt p = parsePromptLine("a cat, best quality --n low quality, blurry --w 832 --h 1216 --d 42 --s 28 --l 6.5 "
                                         "--ss euler_a --g 3.5",
                                         "p.txt:1");
  EXPECT_EQ(p.prompt, "a cat, best quality");
  EXPECT_EQ(p.negativePrompt, "low quality, blurry");
  EXPECT_EQ(p.width, 832);
  EXPECT_EQ(p.height, 1216);
  EXPECT_EQ(p.seed, 42);
  EXPECT_EQ(p.steps, 28);
  EXPECT_DOUBLE_EQ(*p.scale, 6.5);
  EXPECT_DOUBLE_EQ(*p.guidanceScale, 3.5);
  EXPECT_EQ(p.sampler, "euler_a");
  // Upper-case option names, as sd-scripts' re.IGNORECASE; steps clamped to 1..1000; nothing set stays unset.
  const SamplePrompt q = parsePromptLine("a dog --S 5000 --SS DDIM", "p.txt:2");
  EXPECT_EQ(q.steps, 1000);
  EXPECT_EQ(q.sampler, "ddim");
  EXPECT_FALSE(q.width.has_value());
  EXPECT_FALSE(q.seed.has_value());
  EXPECT_EQ(parsePromptLine("just a prompt", "x").prompt, "just a prompt");
  // Options of sd-scripts' other models are read too, so their files pass.
  const SamplePrompt other = parsePromptLine("a bird --fs 3.0 --ctr 0.5 --rcfg 1.0 --cn control.png", "p.txt:3");
  EXPECT_DOUBLE_EQ(*other.flowShift, 3.0);
  EXPECT_DOUBLE_EQ(*other.cfgTruncRatio, 0.5);
  EXPECT_DOUBLE_EQ(*other.renormCfg, 1.0);
  EXPECT_EQ(other.controlnetImage, "control.png");
}

TEST(SamplePrompts, TextFileSkipsCommentsAndBlankLinesAndNumbersTheRest) {
  const std::string file = writeFile("p.txt", "# my prompts\n\na cat --d 1\n  \na dog --w 512\n");
  const std::vector<SamplePrompt> prompts = loadSamplePrompts(file);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].prompt, "a cat");
  EXPECT_EQ(prompts[0].index, 0);
  EXPECT_EQ(prompts[1].index, 1);
  EXPECT_EQ(prompts[1].where, file + ":5");
}

TEST(SamplePrompts, TomlSubsetsTakeThePromptTablesDefaults) {
  const std::string file = writeFile("p.toml",
                                     "[prompt]\nsample_steps = 20\nwidth = 1024\nheight = 1024\nscale = 5.0\n"
                                     "negative_prompt = \"blurry\"\n\n"
                                     "[[prompt.subset]]\nprompt = \"a cat\"\nseed = 1\n\n"
                                     "[[prompt.subset]]\nprompt = \"a dog\"\nwidth = 768\nsample_sampler = \"euler\"\n");
  const std::vector<SamplePrompt> prompts = loadSamplePrompts(file);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].prompt, "a cat");
  EXPECT_EQ(prompts[0].steps, 20);
  EXPECT_EQ(prompts[0].width, 1024);
  EXPECT_EQ(prompts[0].seed, 1);
  EXPECT_EQ(prompts[0].negativePrompt, "blurry");
  EXPECT_EQ(prompts[1].width, 768);
  EXPECT_EQ(prompts[1].sampler, "euler");
  EXPECT_DOUBLE_EQ(*prompts[1].scale, 5.0);
  EXPECT_EQ(prompts[1].index, 1);
}

TEST(SamplePrompts, JsonLinesAndObjects) {
  const std::string file =
      writeFile("p.json", "[\"a cat --d 3\", {\"prompt\": \"a dog\", \"width\": 640, \"scale\": 4.5, \"negative_prompt\": \"x\"}]");
  const std::vector<SamplePrompt> prompts = loadSamplePrompts(file);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].seed, 3);
  EXPECT_EQ(prompts[1].prompt, "a dog");
  EXPECT_EQ(prompts[1].width, 640);
  EXPECT_DOUBLE_EQ(*prompts[1].scale, 4.5);
}

TEST(SamplePrompts, EachBadLineNamesFileAndLine) {
  struct Case {
    std::string name, text, says;
  };
  const std::vector<Case> cases{
      {"unknown.txt", "ok\na cat --q 3\n", "unknown.txt:2: unknown option --q"},
      {"width.txt", "a cat --w wide\n", "width.txt:1: width must be a whole number"},
      {"negative_seed.txt", "a cat --d -5\n", "seed must be a whole number of 0 or more"},
      {"scale.txt", "a cat --l 7.5x\n", "scale must be a number"},
      {"empty_value.txt", "a cat --n \n", "--n needs a value"},
      {"sampler.txt", "\n\na cat --ss euler_b\n", "sampler.txt:3: unknown sampler 'euler_b'"},
      {"no_subset.toml", "[prompt]\nwidth = 512\n", "[[prompt.subset]]"},
      {"bad_key.toml", "[prompt]\n[[prompt.subset]]\nprompt = \"a\"\nwidht = 5\n", "unknown key 'widht'"},
      {"broken.toml", "[prompt\n", "broken.toml:1: not valid TOML"},
      {"bad.json", "[\"a\", 3]", "bad.json: entry 2: must be a prompt line or an object"},
      {"object.json", "{\"prompt\": \"a\"}", "a list of prompt lines or objects"},
      {"prompts.csv", "a cat", "a .txt, .toml or .json file"},
  };
  for (const Case& c : cases) {
    const std::string file = writeFile(c.name, c.text);
    const std::string error = errorOf([&] { loadSamplePrompts(file); });
    EXPECT_NE(error.find(c.says), std::string::npos) << c.name << ": " << error;
  }
  EXPECT_NE(errorOf([] { loadSamplePrompts("/nonexistent/p.txt"); }).find("cannot read"), std::string::npos);
}
