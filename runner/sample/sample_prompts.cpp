#include "sample/sample_prompts.h"

#include <nlohmann/json.hpp>
#include <toml.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/ascii_text.h"

namespace sinter::sample {

namespace {



long long parseInteger(const std::string& text, const std::string& what, const std::string& where) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < 0)
    throw PromptError(where + ": " + what + " must be a whole number of 0 or more, not '" + text + "'");
  return v;
}

double parseNumber(const std::string& text, const std::string& what, const std::string& where) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < 0) throw PromptError(where + ": " + what + " must be a number of 0 or more, not '" + text + "'");
  return v;
}

std::string checkedSampler(const std::string& name, const std::string& where) {
  const std::string wanted = lowerAscii(trimAscii(name));
  for (const std::string& s : sampleSamplerNames())
    if (s == wanted) return s;
  std::string list;
  for (const std::string& s : sampleSamplerNames()) list += (list.empty() ? "" : ", ") + s;
  throw PromptError(where + ": unknown sampler '" + name + "' (sd-scripts' samplers: " + list + ")");
}

// One option by its sd-scripts key name (the .toml and .json forms), from a string or a number.
void setOption(SamplePrompt& p, const std::string& key, const std::string& text, const std::string& where) {
  if (key == "prompt") p.prompt = text;
  else if (key == "negative_prompt") p.negativePrompt = text;
  else if (key == "width") p.width = static_cast<int>(parseInteger(text, "width", where));
  else if (key == "height") p.height = static_cast<int>(parseInteger(text, "height", where));
  else if (key == "seed") p.seed = parseInteger(text, "seed", where);
  else if (key == "sample_steps") p.steps = static_cast<int>(std::clamp<long long>(parseInteger(text, "sample_steps", where), 1, 1000));
  else if (key == "scale") p.scale = parseNumber(text, "scale", where);
  else if (key == "guidance_scale") p.guidanceScale = parseNumber(text, "guidance_scale", where);
  else if (key == "sample_sampler") p.sampler = checkedSampler(text, where);
  else if (key == "controlnet_image") p.controlnetImage = text;
  else if (key == "cfg_trunc_ratio") p.cfgTruncRatio = parseNumber(text, "cfg_trunc_ratio", where);
  else if (key == "renorm_cfg") p.renormCfg = parseNumber(text, "renorm_cfg", where);
  else if (key == "flow_shift") p.flowShift = parseNumber(text, "flow_shift", where);
  else
    throw PromptError(where + ": unknown key '" + key +
                      "' (prompt, negative_prompt, width, height, seed, sample_steps, scale, guidance_scale, sample_sampler, "
                      "controlnet_image, cfg_trunc_ratio, renorm_cfg, flow_shift)");
}

std::string readAll(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw PromptError("cannot read sample_prompts file " + file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<SamplePrompt> fromText(const std::string& file) {
  std::istringstream in(readAll(file));
  std::vector<SamplePrompt> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);
    if (trimAscii(line).empty() || line[0] == '#') continue;
    out.push_back(parsePromptLine(trimAscii(line), file + ":" + std::to_string(n)));
  }
  return out;
}

using TomlValue = toml::basic_value<toml::discard_comments, std::map, std::vector>;

std::string tomlScalar(const TomlValue& v, const std::string& key, const std::string& where) {
  if (v.is_string()) return v.as_string().str;
  if (v.is_integer()) return std::to_string(v.as_integer());
  if (v.is_floating()) {
    std::ostringstream s;
    s << v.as_floating();
    return s.str();
  }
  throw PromptError(where + ": " + key + " must be a string or a number");
}

std::vector<SamplePrompt> fromToml(const std::string& file) {
  TomlValue root;
  try {
    std::istringstream in(readAll(file));
    root = toml::parse<toml::discard_comments, std::map, std::vector>(in, file);
  } catch (const toml::syntax_error& e) {
    throw PromptError(file + ":" + std::to_string(e.location().line()) + ": not valid TOML");
  }
  if (!root.is_table() || !root.contains("prompt") || !root.at("prompt").is_table())
    throw PromptError(file + ": a .toml sample_prompts file needs a [prompt] table with [[prompt.subset]] entries");
  const TomlValue& table = root.at("prompt");
  if (!table.contains("subset") || !table.at("subset").is_array())
    throw PromptError(file + ": [prompt] needs [[prompt.subset]] entries, one per image");
  std::vector<SamplePrompt> out;
  for (const TomlValue& subset : table.at("subset").as_array()) {
    if (!subset.is_table()) throw PromptError(file + ": each [[prompt.subset]] must be a table");
    SamplePrompt p;
    p.where = file + ":" + std::to_string(subset.location().line());
    // The [prompt] table's keys are defaults; the subset's override them.
    for (const TomlValue* source : {&table, &subset})
      for (const auto& [key, value] : source->as_table())
        if (key != "subset") setOption(p, key, tomlScalar(value, key, p.where), p.where);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<SamplePrompt> fromJson(const std::string& file) {
  const nlohmann::json root = nlohmann::json::parse(readAll(file), nullptr, false);
  if (root.is_discarded()) throw PromptError(file + ": not valid JSON");
  if (!root.is_array()) throw PromptError(file + ": a .json sample_prompts file is a list of prompt lines or objects");
  std::vector<SamplePrompt> out;
  for (size_t i = 0; i < root.size(); ++i) {
    const std::string where = file + ": entry " + std::to_string(i + 1);
    const nlohmann::json& entry = root[i];
    if (entry.is_string()) {
      out.push_back(parsePromptLine(entry.get<std::string>(), where));
      continue;
    }
    if (!entry.is_object()) throw PromptError(where + ": must be a prompt line or an object");
    SamplePrompt p;
    p.where = where;
    for (const auto& [key, value] : entry.items()) {
      if (value.is_string()) setOption(p, key, value.get<std::string>(), where);
      else if (value.is_number()) setOption(p, key, value.dump(), where);
      else throw PromptError(where + ": " + key + " must be a string or a number");
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& sampleSamplerNames() {
  static const std::vector<std::string> names{"ddim",  "pndm",  "lms",   "euler",    "euler_a",   "heun",      "dpm_2",
                                              "dpm_2_a", "dpmsolver", "dpmsolver++", "dpmsingle", "k_lms", "k_euler",
                                              "k_euler_a", "k_dpm_2", "k_dpm_2_a"};
  return names;
}

SamplePrompt parsePromptLine(const std::string& line, const std::string& where) {
  SamplePrompt p;
  p.where = where;
  // As sd-scripts: split at " --"; the first part is the prompt, each other part one option.
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = line.find(" --", start)) != std::string::npos; start = at + 3) parts.push_back(line.substr(start, at - start));
  parts.push_back(line.substr(start));
  p.prompt = parts[0];
  struct Flag {
    const char* name;
    const char* key;
  };
  // Longest names first, so that "ss" is not read as "s".
  static const Flag flags[] = {{"ss", "sample_sampler"}, {"n", "negative_prompt"}, {"w", "width"},         {"h", "height"},
                               {"d", "seed"},            {"s", "sample_steps"},    {"l", "scale"},         {"g", "guidance_scale"},
                               {"cn", "controlnet_image"}, {"ctr", "cfg_trunc_ratio"}, {"rcfg", "renorm_cfg"}, {"fs", "flow_shift"}};
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const size_t space = part.find(' ');
    const std::string name = lowerAscii(part.substr(0, space));
    const std::string value = space == std::string::npos ? std::string() : trimAscii(part.substr(space + 1));
    const Flag* flag = nullptr;
    for (const Flag& f : flags)
      if (name == f.name) flag = &f;
    if (!flag)
      throw PromptError(where + ": unknown option --" + name + " (--n, --w, --h, --d, --s, --l, --g, --ss, --cn, --ctr, --rcfg, --fs)");
    if (value.empty()) throw PromptError(where + ": --" + name + " needs a value");
    setOption(p, flag->key, value, where);
  }
  return p;
}

std::vector<SamplePrompt> loadSamplePrompts(const std::string& file) {
  const std::string ext = lowerAscii(std::filesystem::path(file).extension().string());
  std::vector<SamplePrompt> prompts;
  if (ext == ".txt") prompts = fromText(file);
  else if (ext == ".toml") prompts = fromToml(file);
  else if (ext == ".json") prompts = fromJson(file);
  else throw PromptError("sample_prompts " + file + ": a .txt, .toml or .json file");
  for (size_t i = 0; i < prompts.size(); ++i) prompts[i].index = static_cast<int>(i);
  return prompts;
}

ResolvedSample resolveSample(const ResolvedSample& defaults, const SamplePrompt& p, std::uint64_t seedWhenUnset) {
  ResolvedSample s = defaults;
  s.index = p.index;
  s.prompt = p.prompt;
  s.negativePrompt = p.negativePrompt;
  if (p.width) s.width = *p.width;
  if (p.height) s.height = *p.height;
  if (p.steps) s.steps = *p.steps;
  if (p.scale) s.scale = *p.scale;
  if (p.guidanceScale && s.guidanceScale) s.guidanceScale = *p.guidanceScale;
  if (p.sampler) s.samplerName = *p.sampler;
  s.seedGiven = p.seed.has_value();
  s.seed = p.seed ? static_cast<std::uint64_t>(*p.seed) : seedWhenUnset;
  return s;
}

}  // namespace sinter::sample
