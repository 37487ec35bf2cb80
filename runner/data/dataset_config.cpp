#include "data/dataset_config.h"

#include <toml.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/utf8.h"

namespace sinter::data {
namespace {

using TomlValue = toml::basic_value<toml::discard_comments, std::map, std::vector>;

enum class Kind { Bool, Int, Float, String, Resolution, FloatPair, Table };
enum Level : unsigned { kGeneral = 1, kDataset = 2, kSubset = 4 };
constexpr unsigned kAscendableSubset = kGeneral | kDataset | kSubset;  // may be set at any level
constexpr unsigned kDatasetLevel = kGeneral | kDataset;

struct KeySpec {
  const char* key;
  Kind kind;
  unsigned levels;
  const char* unsupported = nullptr;  // set when Sinter refuses a non-default value, with the reason
};

// sd-scripts' ConfigSanitizer schema for DreamBooth-style datasets (library/config_util.py).
const std::vector<KeySpec>& schema() {
  static const std::vector<KeySpec> specs = {
      // DATASET_ASCENDABLE_SCHEMA
      {"batch_size", Kind::Int, kDatasetLevel},
      {"bucket_no_upscale", Kind::Bool, kDatasetLevel},
      {"bucket_reso_steps", Kind::Int, kDatasetLevel},
      {"enable_bucket", Kind::Bool, kDatasetLevel},
      {"max_bucket_reso", Kind::Int, kDatasetLevel},
      {"min_bucket_reso", Kind::Int, kDatasetLevel},
      {"validation_seed", Kind::Int, kDatasetLevel},
      {"validation_split", Kind::Float, kDatasetLevel},
      {"resolution", Kind::Resolution, kDatasetLevel},
      {"network_multiplier", Kind::Float, kDatasetLevel},
      // SUBSET_ASCENDABLE_SCHEMA
      {"color_aug", Kind::Bool, kAscendableSubset},
      {"face_crop_aug_range", Kind::FloatPair, kAscendableSubset, "face_crop_aug_range is not supported yet"},
      {"flip_aug", Kind::Bool, kAscendableSubset},
      {"num_repeats", Kind::Int, kAscendableSubset},
      {"random_crop", Kind::Bool, kAscendableSubset},
      {"shuffle_caption", Kind::Bool, kAscendableSubset},
      {"keep_tokens", Kind::Int, kAscendableSubset},
      {"keep_tokens_separator", Kind::String, kAscendableSubset},
      {"secondary_separator", Kind::String, kAscendableSubset},
      {"caption_separator", Kind::String, kAscendableSubset},
      {"enable_wildcard", Kind::Bool, kAscendableSubset},
      {"token_warmup_min", Kind::Int, kAscendableSubset},
      {"token_warmup_step", Kind::Float, kAscendableSubset},
      {"caption_prefix", Kind::String, kAscendableSubset},
      {"caption_suffix", Kind::String, kAscendableSubset},
      {"custom_attributes", Kind::Table, kAscendableSubset},
      {"resize_interpolation", Kind::String, kAscendableSubset},
      // DO_SUBSET_ASCENDABLE_SCHEMA
      {"caption_dropout_every_n_epochs", Kind::Int, kAscendableSubset},
      {"caption_dropout_rate", Kind::Float, kAscendableSubset},
      {"caption_tag_dropout_rate", Kind::Float, kAscendableSubset},
      // DB_SUBSET_ASCENDABLE_SCHEMA
      {"caption_extension", Kind::String, kAscendableSubset},
      {"class_tokens", Kind::String, kAscendableSubset},
      {"cache_info", Kind::Bool, kAscendableSubset},
      // DB_SUBSET_DISTINCT_SCHEMA and the fine-tuning subset's metadata_file
      {"image_dir", Kind::String, kSubset},
      {"is_reg", Kind::Bool, kSubset},
      {"alpha_mask", Kind::Bool, kSubset},
      {"metadata_file", Kind::String, kSubset},
      // CN_SUBSET_DISTINCT_SCHEMA (accepted with masked_loss, as sd-scripts' ConfigSanitizer does)
      {"conditioning_data_dir", Kind::String, kSubset},
  };
  return specs;
}

const KeySpec* findSpec(const std::string& key) {
  for (const auto& s : schema())
    if (key == s.key) return &s;
  return nullptr;
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(3, key.size() / 3) + 1;
  for (const auto& c : candidates) {
    const size_t d = editDistance(key, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

const char* levelName(unsigned level) {
  return level == kGeneral ? "[general]" : level == kDataset ? "[[datasets]]" : "[[datasets.subsets]]";
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::Bool: return "a boolean (true or false)";
    case Kind::Int: return "an integer";
    case Kind::Float: return "a number";
    case Kind::String: return "a string";
    case Kind::Resolution: return "an integer or [width, height]";
    case Kind::FloatPair: return "a pair of numbers [min, max]";
    case Kind::Table: return "a table";
  }
  return "";
}

const char* tomlTypeName(const TomlValue& v) {
  switch (v.type()) {
    case toml::value_t::boolean: return "a boolean";
    case toml::value_t::integer: return "an integer";
    case toml::value_t::floating: return "a float";
    case toml::value_t::string: return "a string";
    case toml::value_t::array: return "an array";
    case toml::value_t::table: return "a table";
    default: return "a date or time";
  }
}

class Parser {
 public:
  explicit Parser(std::string fileName) : file_(std::move(fileName)) {}

  SourceLocation locate(const TomlValue& v, const std::string& key = "") const {
    const auto loc = v.location();
    SourceLocation where{file_, static_cast<int>(loc.line()), static_cast<int>(loc.column())};
    if (!key.empty()) {  // toml11 locates values; point at the key on the same line when it is there
      const auto at = loc.line_str().find(key);
      if (at != std::string::npos && static_cast<int>(at) + 1 < where.column) where.column = static_cast<int>(at) + 1;
    }
    return where;
  }

  void error(const SourceLocation& where, const std::string& key, const std::string& message) {
    diags_.push_back({Severity::Error, where, key, message});
  }

  // Validates one table's keys for `level` into a ParamLayer.
  ParamLayer readLayer(const TomlValue& table, unsigned level) {
    ParamLayer layer;
    for (const auto& [key, value] : table.as_table()) {
      if (level == kDataset && key == "subsets") continue;
      const SourceLocation where = locate(value, key);
      const KeySpec* spec = findSpec(key);
      if (!spec || !(spec->levels & level)) {
        std::string msg = "unknown key '" + key + "' in " + levelName(level);
        if (spec) {
          msg = "'" + key + "' is not allowed in " + std::string(levelName(level)) +
                (spec->levels == kSubset ? " (only in [[datasets.subsets]])" : " (only in [general] or [[datasets]])");
        } else if (key == "prior_loss_weight") {
          msg += " (sd-scripts reads prior_loss_weight from the training config, not the dataset config)";
        } else {
          std::vector<std::string> candidates;
          for (const auto& s : schema())
            if (s.levels & level) candidates.push_back(s.key);
          if (level == kDataset) candidates.push_back("subsets");
          const std::string near = suggestion(key, candidates);
          if (!near.empty()) msg += "; did you mean '" + near + "'?";
        }
        error(where, key, msg);
        continue;
      }
      Value converted;
      if (!convert(*spec, value, converted)) {
        error(where, key, "'" + key + "' must be " + kindName(spec->kind) + ", got " + tomlTypeName(value));
        continue;
      }
      if (const std::string problem = checkRange(key, converted); !problem.empty()) {
        error(where, key, problem);
        continue;
      }
      if (spec->unsupported && !isDefaultLike(converted)) {
        error(where, key, spec->unsupported);
        continue;
      }
      layer[key] = {converted, where};
    }
    return layer;
  }

  DatasetConfigFile parse(const TomlValue& root) {
    DatasetConfigFile out;
    out.path = file_;
    for (const auto& [key, value] : root.as_table()) {
      const SourceLocation where = locate(value, key);
      if (key == "general") {
        if (!value.is_table()) error(where, key, "[general] must be a table");
        else out.general = readLayer(value, kGeneral);
      } else if (key == "datasets") {
        if (!value.is_array()) {
          error(where, key, "datasets must be an array of tables ([[datasets]])");
          continue;
        }
        for (const auto& ds : value.as_array()) {
          if (!ds.is_table()) {
            error(locate(ds), key, "each [[datasets]] entry must be a table");
            continue;
          }
          DatasetConfigFile::Dataset dataset;
          dataset.where = locate(ds);
          dataset.params = readLayer(ds, kDataset);
          const auto& table = ds.as_table();
          const auto subsets = table.find("subsets");
          if (subsets == table.end()) {
            error(dataset.where, "subsets", "this [[datasets]] entry has no [[datasets.subsets]]");
          } else if (!subsets->second.is_array()) {
            error(locate(subsets->second, "subsets"), "subsets", "subsets must be an array of tables ([[datasets.subsets]])");
          } else {
            for (const auto& ss : subsets->second.as_array()) {
              if (!ss.is_table()) {
                error(locate(ss), "subsets", "each [[datasets.subsets]] entry must be a table");
                continue;
              }
              ParamLayer subset = readLayer(ss, kSubset);
              if (!subset.count("image_dir") && !subset.count("metadata_file"))
                error(locate(ss), "image_dir", "this [[datasets.subsets]] entry has no image_dir");
              dataset.subsets.push_back(std::move(subset));
            }
          }
          out.datasets.push_back(std::move(dataset));
        }
      } else {
        std::string msg = "unknown key '" + key + "' at the top level (expected [general] and [[datasets]])";
        const std::string near = suggestion(key, {"general", "datasets"});
        if (!near.empty()) msg += "; did you mean '" + near + "'?";
        if (findSpec(key)) msg = "'" + key + "' must be inside [general], [[datasets]] or [[datasets.subsets]]";
        error(where, key, msg);
      }
    }
    if (out.datasets.empty() && diags_.empty())
      error({file_, 1, 1}, "datasets", "the dataset config defines no [[datasets]]");
    if (hasErrors(diags_)) {
      std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return a.where.line != b.where.line ? a.where.line < b.where.line : a.where.column < b.where.column;
      });
      throw ConfigError(diags_);
    }
    return out;
  }

 private:
  static bool isDefaultLike(const Value& v) {
    if (const bool* b = std::get_if<bool>(&v)) return !*b;
    if (const double* d = std::get_if<double>(&v)) return *d == 0.0;
    if (const long long* i = std::get_if<long long>(&v)) return *i == 0;
    return false;
  }

  static std::string checkRange(const std::string& key, const Value& v) {
    auto intValue = [&]() { return std::get<long long>(v); };
    if (key == "batch_size" || key == "num_repeats" || key == "bucket_reso_steps" || key == "min_bucket_reso" ||
        key == "max_bucket_reso") {
      if (intValue() < (key == "num_repeats" ? 0 : 1))
        return "'" + key + "' must be " + (key == "num_repeats" ? "0 or more" : "at least 1") + ", got " +
               std::to_string(intValue());
      if (key == "num_repeats" && intValue() > kMaxRepeats)
        return "'num_repeats' must be at most " + std::to_string(kMaxRepeats) + ", got " + std::to_string(intValue());
    }
    if (key == "keep_tokens" || key == "caption_dropout_every_n_epochs" || key == "token_warmup_min") {
      if (intValue() < 0) return "'" + key + "' must not be negative, got " + std::to_string(intValue());
    }
    if (key == "caption_dropout_rate" || key == "caption_tag_dropout_rate") {
      const double d = std::get<double>(v);
      if (d < 0 || d > 1) return "'" + key + "' must be between 0 and 1, got " + formatDouble(d);
    }
    if (key == "resolution") {
      for (const auto& side : std::get<StringList>(v))
        if (std::stoll(side) <= 0) return "'resolution' must be positive";
    }
    if (key == "resize_interpolation") {
      static const std::vector<std::string> ok = {"lanczos", "area", "bilinear", "bicubic", "nearest", "box"};
      if (std::find(ok.begin(), ok.end(), std::get<std::string>(v)) == ok.end())
        return "'resize_interpolation' must be one of lanczos, area, bilinear, bicubic, nearest, box; got '" +
               std::get<std::string>(v) + "'";
    }
    return "";
  }

  static bool convert(const KeySpec& spec, const TomlValue& v, Value& out) {
    switch (spec.kind) {
      case Kind::Bool:
        if (!v.is_boolean()) return false;
        out = v.as_boolean();
        return true;
      case Kind::Int:
        if (!v.is_integer()) return false;
        out = static_cast<long long>(v.as_integer());
        return true;
      case Kind::Float:
        if (v.is_floating()) out = static_cast<double>(v.as_floating());
        else if (v.is_integer()) out = static_cast<double>(v.as_integer());
        else return false;
        return true;
      case Kind::String:
        if (!v.is_string()) return false;
        out = v.as_string().str;
        return true;
      case Kind::Resolution:
        if (v.is_integer()) {
          out = StringList{std::to_string(v.as_integer()), std::to_string(v.as_integer())};
          return true;
        }
        if (v.is_array() && v.as_array().size() == 2 && v.as_array()[0].is_integer() && v.as_array()[1].is_integer()) {
          out = StringList{std::to_string(v.as_array()[0].as_integer()), std::to_string(v.as_array()[1].as_integer())};
          return true;
        }
        return false;
      case Kind::FloatPair: {
        if (!v.is_array() || v.as_array().size() != 2) return false;
        StringList pair;
        for (const auto& x : v.as_array()) {
          if (x.is_floating()) pair.push_back(formatDouble(x.as_floating()));
          else if (x.is_integer()) pair.push_back(std::to_string(x.as_integer()));
          else return false;
        }
        out = pair;
        return true;
      }
      case Kind::Table:
        if (!v.is_table()) return false;
        out = std::string("<table>");  // kept for sd-scripts compatibility; not used by training
        return true;
    }
    return false;
  }

  std::string file_;
  std::vector<Diagnostic> diags_;
};

// toml11's message starts with "[error] " and carries its own location lines; keep its first line.
std::string firstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.rfind("[error] ", 0) == 0) line = line.substr(8);
  return line;
}

}  // namespace

bool isSubsetKey(const std::string& key) {
  const KeySpec* s = findSpec(key);
  return s && (s->levels & kSubset);
}
bool isDatasetKey(const std::string& key) {
  const KeySpec* s = findSpec(key);
  return s && (s->levels & kDataset);
}
bool isGeneralKey(const std::string& key) {
  const KeySpec* s = findSpec(key);
  return s && (s->levels & kGeneral);
}

DatasetConfigFile parseDatasetConfigToml(const std::string& rawText, const std::string& fileName) {
  if (const Utf8Problem bad = checkUtf8(rawText); !bad.valid)
    throw ConfigError({{Severity::Error, {fileName, bad.line, bad.column}, "", "the file is not valid UTF-8"}});
  const std::string text = stripUtf8Bom(rawText);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError({{Severity::Error, {fileName, 0, 0}, "", "the dataset config is empty"}});
  TomlValue root;
  try {
    std::istringstream in(text);
    root = toml::parse<toml::discard_comments, std::map, std::vector>(in, fileName);
  } catch (const toml::exception& e) {
    const auto loc = e.location();
    throw ConfigError({{Severity::Error,
                        {fileName, static_cast<int>(loc.line()), static_cast<int>(loc.column())},
                        "",
                        "TOML syntax error: " + firstLine(e.what())}});
  }
  return Parser(fileName).parse(root);
}

DatasetConfigFile loadDatasetConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({{Severity::Error, {path, 0, 0}, "dataset_config", "cannot open the dataset config"}});
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto dot = path.find_last_of('.');
  if (dot != std::string::npos && path.substr(dot) == ".json")
    throw ConfigError({{Severity::Error, {path, 0, 0}, "dataset_config",
                        "JSON dataset configs are not supported; write the same keys as TOML"}});
  return parseDatasetConfigToml(text, path);
}

}  // namespace sinter::data
