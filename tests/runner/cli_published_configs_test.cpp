// The published sd-scripts configs and command lines of tests/data/sd_scripts_corpus run through the
// real runner's dry run as their authors ran them through sd-scripts, with only their paths pointed
// at tiny models and a generated dataset, and this machine's adaptations (README.md there lists
// both). An entry either passes, or is refused with the message EXPECTED.tsv names: a refusal by
// design (sd-scripts refuses it too, or the file is not an sd-scripts config as it stands) or a gap
// still open. A new refusal, or a listed one that no longer happens, fails the test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/registry.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::test::ProcessResult;
using sinter::test::readText;
using sinter::test::runRunner;
using sinter::test::writeText;

namespace {

const fs::path kCorpus = fs::path(SINTER_TEST_DATA_DIR) / "sd_scripts_corpus";
fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::vector<std::vector<std::string>> readTsv(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '\t');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// One published configuration: its files (a command line, a config, a dataset config) and what
// SOURCES.tsv says it trains.
struct Entry {
  std::string id;  // the files' common number, "07"
  std::string script, family;
  std::vector<std::string> files;
  std::string fileEnding(const std::string& suffix) const {
    for (const auto& f : files)
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) return f;
    return "";
  }
  std::string config() const {
    for (const auto& f : files)
      if (f.find(".dataset.toml") == std::string::npos && f.size() > 5 && f.compare(f.size() - 5, 5, ".toml") == 0) return f;
    return "";
  }
};

std::map<std::string, Entry> corpusEntries() {
  std::map<std::string, Entry> entries;
  for (const auto& row : readTsv(kCorpus / "SOURCES.tsv")) {
    Entry& e = entries[row.at(0).substr(0, 2)];
    e.id = row.at(0).substr(0, 2);
    e.script = row.at(2);
    e.family = row.at(3);
    e.files.push_back(row.at(0));
  }
  return entries;
}

// What a path-valued key of a config or command line points at here ("" keeps the value). A key
// whose value is empty is unset in sd-scripts and stays so.
std::string pathFor(const std::string& key, const std::string& original, const Entry& e, const std::string& datasetConfig) {
  static const std::map<std::string, std::string> checkpoint{
      {"sd1", "sd15.safetensors"}, {"sd2", "sd2.safetensors"}, {"sdxl", "sdxl.safetensors"}, {"flux", "flux/flux1-dev.safetensors"}};
  // A template's placeholder for a file every run needs ("" for the data folder its pipeline fills
  // in) is filled; an empty optional path stays unset.
  static const std::set<std::string> required{"pretrained_model_name_or_path", "train_data_dir", "output_dir", "ae", "clip_l", "t5xxl"};
  if (original.empty() && !required.count(key)) return "";
  if (key == "pretrained_model_name_or_path") return path(checkpoint.at(e.family));
  if (key == "ae") return path("flux/ae.safetensors");
  if (key == "clip_l") return path("flux/clip_l.safetensors");
  if (key == "t5xxl") return path("flux/t5xxl_fp16.safetensors");
  if (key == "train_data_dir" || key == "reg_data_dir") return path("images");  // DreamBooth folders: 10_demo shapes
  if (key == "image_dir") return path("images/10_demo shapes");
  if (key == "in_json" || key == "metadata_file") return path("metadata.json");
  if (key == "dataset_config") return datasetConfig;
  if (key == "sample_prompts")
    return path(original.size() > 5 && original.compare(original.size() - 5, 5, ".toml") == 0 ? "prompts.toml" : "prompts.txt");
  if (key == "output_dir" || key == "logging_dir") return path("out/" + e.id);
  return "";
}

bool isPathKey(const std::string& key) {
  static const std::set<std::string> datasetPaths{"image_dir", "metadata_file", "conditioning_data_dir"};
  const sinter::OptionSpec* spec = sinter::findOption(key);
  return datasetPaths.count(key) || (spec && spec->type == sinter::OptionType::Path);
}

// A copy of a TOML file with each path value replaced (line by line; the rest is kept as written).
std::string rewriteToml(const fs::path& file, const Entry& e, const std::string& datasetConfig) {
  static const std::regex assignment(R"re(^(\s*)([A-Za-z0-9_]+)(\s*=\s*)("([^"]*)"|'([^']*)')(.*)$)re");
  std::stringstream in(readText(file)), out;
  for (std::string line; std::getline(in, line);) {
    const bool crlf = !line.empty() && line.back() == '\r';
    if (crlf) line.pop_back();
    std::smatch m;
    if (std::regex_match(line, m, assignment) && isPathKey(m[2])) {
      const std::string value = m[5].matched ? m[5].str() : m[6].str();
      if (std::string to = pathFor(m[2], value, e, datasetConfig); !to.empty())
        line = m[1].str() + m[2].str() + m[3].str() + "\"" + to + "\"" + m[7].str();
    }
    out << line << (crlf ? "\r\n" : "\n");
  }
  const std::string copy = path("configs/" + file.filename().string());
  writeText(copy, out.str());
  return copy;
}

// The words of the published command: the lines from the one naming a training script to the last
// continued one (`\` in a shell script, `^` in a batch file; sd-scripts' documentation also lists an
// option per line with no continuation), split as a POSIX shell splits them.
std::vector<std::string> commandWords(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) {
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.pop_back();
    lines.push_back(l);
  }
  auto continued = [](const std::string& l) { return !l.empty() && (l.back() == '\\' || l.back() == '^'); };
  auto namesScript = [](const std::string& l) {
    return l.find(".py") != std::string::npos && l.find_first_not_of(" \t") != std::string::npos &&
           l[l.find_first_not_of(" \t")] != '#';
  };
  std::size_t first = 0;
  while (first < lines.size() && !namesScript(lines[first])) ++first;
  while (first > 0 && continued(lines[first - 1])) --first;
  std::string command;
  for (std::size_t i = first; i < lines.size(); ++i) {
    std::string l = lines[i];
    const bool more = continued(l);
    if (more) l.pop_back();
    command += l + " ";
    const bool nextIsOption = i + 1 < lines.size() && lines[i + 1].find_first_not_of(" \t") != std::string::npos &&
                              lines[i + 1].compare(lines[i + 1].find_first_not_of(" \t"), 2, "--") == 0;
    if (!more && !nextIsOption) break;
  }
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else word += c;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
      else if (c == '\\' && i + 1 < command.size() && std::string("\"\\$`").find(command[i + 1]) != std::string::npos) word += command[++i];
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      inWord = true;
    } else if (c == ' ' || c == '\t') {
      if (inWord) words.push_back(word);
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push_back(word);
  return words;
}

// The runner's arguments for an entry: its command with `accelerate launch` (or `python`) and the
// script's folder dropped (the runner takes accelerate's flags and the script's name), paths
// rewritten; a config alone is run as `SCRIPT --config_file CONFIG`, as its author ran it.
std::vector<std::string> runnerArgs(const Entry& e) {
  std::string datasetConfig = path("dataset_generated.toml");
  if (std::string ds = e.fileEnding(".dataset.toml"); !ds.empty()) datasetConfig = rewriteToml(kCorpus / ds, e, "");
  std::string config;
  if (std::string c = e.config(); !c.empty()) config = rewriteToml(kCorpus / c, e, datasetConfig);
  std::string launch = e.fileEnding(".sh");
  if (launch.empty()) return {e.script, "--config_file", config};

  std::vector<std::string> words = commandWords(readText(kCorpus / launch));
  std::size_t script = 0;
  while (script < words.size() && words[script].find(".py") == std::string::npos) ++script;
  std::size_t start = 0;
  for (std::size_t i = 0; i < script; ++i)
    if (words[i] == "launch" || words[i] == "python" || words[i] == "python3") start = i + 1;
  std::vector<std::string> args(words.begin() + static_cast<std::ptrdiff_t>(start), words.begin() + static_cast<std::ptrdiff_t>(script));
  args.push_back(fs::path(words.at(script)).filename().string());
  for (std::size_t i = script + 1; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.rfind("--", 0) != 0) {
      args.push_back(w);
      continue;
    }
    const auto eq = w.find('=');
    const std::string key = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool paired = eq == std::string::npos && i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0;
    if (key == "config_file" || isPathKey(key)) {
      const std::string original = eq != std::string::npos ? w.substr(eq + 1) : paired ? words[i + 1] : "";
      std::string to = key == "config_file" ? config : pathFor(key, original, e, datasetConfig);
      if (!to.empty()) {
        args.push_back("--" + key + "=" + to);
        if (paired) ++i;
        continue;
      }
    }
    args.push_back(w);
  }
  return args;
}

// This machine and the tiny models, not the config, decide these (README.md, "Adaptations"): fp16
// autocast needs a CUDA GPU and float8 a newer libtorch than some builds have; the tiny FLUX has 2
// double and 2 single blocks, too few to swap; the generated pictures are small.
std::vector<std::string> adaptations(const Entry& e, const std::vector<std::string>& args) {
  std::string all;
  for (const auto& a : args) all += a + "\n";
  if (std::string c = e.config(); !c.empty()) all += readText(kCorpus / c);
  std::vector<std::string> extra;
  if (std::regex_search(all, std::regex(R"re(mixed_precision[ =\n]+"?fp16)re"))) extra.insert(extra.end(), {"--mixed_precision", "bf16"});
  if (std::regex_search(all, std::regex(R"((^|\n)(--fp8_base(_unet)?\n|fp8_base(_unet)? *= *true))"))) extra.push_back("--no-fp8_base");
  if (e.family == "flux" && all.find("blocks_to_swap") != std::string::npos) extra.insert(extra.end(), {"--blocks_to_swap", "0"});
  // The generated pictures are 96 to 160 pixels a side: a bucket step above that and no upscaling
  // leave no bucket for them.
  if (std::regex_search(all, std::regex(R"(bucket_no_upscale *= *true)")) &&
      std::regex_search(all, std::regex(R"(bucket_reso_steps *= *(1[0-9][0-9]|[2-9][0-9][0-9]))")))
    extra.insert(extra.end(), {"--bucket_reso_steps", "32"});
  return extra;
}

class PublishedConfigs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_published_configs_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    for (const auto& [family, file] : std::vector<std::pair<std::string, std::string>>{
             {"sd15", "sd15.safetensors"}, {"sd2", "sd2.safetensors"}, {"sdxl", "sdxl.safetensors"}, {"flux", "flux/flux1-dev.safetensors"}})
      ASSERT_EQ(runRunner({"--init_checkpoint", path(file), "--model_family", family, "--model_size", "tiny"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images")}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    writeText(path("dataset_generated.toml"), "[[datasets]]\nresolution = 64\n[[datasets.subsets]]\nimage_dir = \"" + path("images/10_demo shapes") +
                                                 "\"\ncaption_extension = \".txt\"\n");
    writeText(path("prompts.txt"), "a red square --w 64 --h 64\n");
    writeText(path("prompts.toml"), "[[prompt.subset]]\nprompt = \"a red square\"\nwidth = 64\nheight = 64\n");
    // fine_tune.py's metadata: each image's caption, by the image's path.
    std::string metadata = "{";
    for (const auto& f : fs::recursive_directory_iterator(path("images")))
      if (f.path().extension() == ".png")
        metadata += std::string(metadata.size() > 1 ? ", " : "") + "\"" + f.path().string() + "\": {\"caption\": \"a shape\"}";
    writeText(path("metadata.json"), metadata + "}\n");
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(PublishedConfigs, EachRunsOrIsRefusedAsListed) {
  std::map<std::string, std::vector<std::string>> expected;  // id -> outcome, message, why
  for (const auto& row : readTsv(kCorpus / "EXPECTED.tsv")) expected[row.at(0)] = row;
  const auto entries = corpusEntries();
  ASSERT_GE(entries.size(), 30u);
  int passed = 0;
  for (const auto& [id, e] : entries) {
    std::vector<std::string> args = runnerArgs(e);
    const std::vector<std::string> adapted = adaptations(e, args);
    args.insert(args.end(), adapted.begin(), adapted.end());
    args.insert(args.end(), {"--t5_tokenizer", path("tokenizer"), "--dry_run"});
    const ProcessResult r = runRunner(args);
    std::string command;
    for (const auto& a : args) command += " " + a;
    const auto it = expected.find(id);
    if (it == expected.end()) {
      EXPECT_EQ(r.exitCode, 0) << id << " (" << e.files.front() << ") was refused:\nsinter-runner" << command << "\n" << r.err;
      passed += r.exitCode == 0;
      continue;
    }
    const std::string& message = it->second.at(2);
    EXPECT_EQ(r.exitCode, 2) << id << " is listed as refused (" << it->second.at(1) << ") but ran:\nsinter-runner" << command;
    EXPECT_NE(r.err.find(message), std::string::npos)
        << id << " is refused, but not with '" << message << "':\nsinter-runner" << command << "\n" << r.err;
  }
  EXPECT_EQ(passed + static_cast<int>(expected.size()), static_cast<int>(entries.size())) << "EXPECTED.tsv names an entry the corpus lacks";
}
