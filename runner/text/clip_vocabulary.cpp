#include "text/clip_vocabulary.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sinter::text {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Hugging Face repositories whose tokenizer is CLIP's BPE (bigG's is the same vocabulary).
const char* const kCacheRepositories[] = {"models--openai--clip-vit-large-patch14",
                                          "models--laion--CLIP-ViT-bigG-14-laion2B-39B-b160k"};

bool hasVocabAndMerges(const fs::path& dir) {
  return fs::is_regular_file(dir / "vocab.json") && fs::is_regular_file(dir / "merges.txt");
}

// A folder that directly holds the files: the folder (vocab+merges) or its tokenizer.json.
std::string filesIn(const fs::path& dir) {
  if (hasVocabAndMerges(dir)) return dir.string();
  if (fs::is_regular_file(dir / "tokenizer.json")) return (dir / "tokenizer.json").string();
  return {};
}

// <repo>/snapshots/<revision>/: the revision refs/main names first, then the others in order.
std::string filesInCacheRepository(const fs::path& repo) {
  const fs::path snapshots = repo / "snapshots";
  if (!fs::is_directory(snapshots)) return {};
  std::ifstream ref(repo / "refs" / "main");
  std::string mainRevision;
  if (ref && std::getline(ref, mainRevision) && !mainRevision.empty()) {
    const std::string found = filesIn(snapshots / mainRevision);
    if (!found.empty()) return found;
  }
  std::vector<fs::path> revisions;
  for (const auto& entry : fs::directory_iterator(snapshots)) {
    if (entry.is_directory()) revisions.push_back(entry.path());
  }
  std::sort(revisions.begin(), revisions.end());
  for (const auto& revision : revisions) {
    std::string found = filesIn(revision);
    if (found.empty()) found = filesIn(revision / "tokenizer");
    if (!found.empty()) return found;
  }
  return {};
}

std::string readFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ClipTokenizerError("cannot read CLIP tokenizer file '" + file.string() + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

json parseJson(const fs::path& file) {
  try {
    return json::parse(readFile(file));
  } catch (const json::parse_error& e) {
    throw ClipTokenizerError("'" + file.string() + "' is not valid JSON: " + e.what());
  }
}

std::unordered_map<std::string, int32_t> readVocabObject(const json& vocab, const std::string& where) {
  if (!vocab.is_object() || vocab.empty()) {
    throw ClipTokenizerError(where + ": the vocabulary must be a non-empty JSON object of token -> id");
  }
  std::unordered_map<std::string, int32_t> ids;
  ids.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() > INT32_MAX) {
      throw ClipTokenizerError(where + ": token '" + it.key() + "' has id " + it.value().dump() +
                               ", expected a non-negative integer");
    }
    ids.emplace(it.key(), static_cast<int32_t>(it.value().get<int64_t>()));
  }
  return ids;
}

std::pair<std::string, std::string> splitMerge(const std::string& line, const std::string& where) {
  const std::size_t space = line.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 >= line.size() ||
      line.find(' ', space + 1) != std::string::npos) {
    throw ClipTokenizerError(where + ": expected two symbols separated by one space, got '" + line + "'");
  }
  return {line.substr(0, space), line.substr(space + 1)};
}

ClipVocabulary loadVocabAndMerges(const fs::path& dir) {
  ClipVocabulary vocabulary;
  const fs::path vocabFile = dir / "vocab.json", mergesFile = dir / "merges.txt";
  vocabulary.source = vocabFile.string() + " + " + mergesFile.string();
  vocabulary.tokenIds = readVocabObject(parseJson(vocabFile), vocabFile.string());
  std::istringstream merges(readFile(mergesFile));
  std::string line;
  for (int lineNumber = 1; std::getline(merges, line); ++lineNumber) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (lineNumber == 1 && line.rfind("#version", 0) == 0)) continue;
    vocabulary.merges.push_back(splitMerge(line, mergesFile.string() + " line " + std::to_string(lineNumber)));
  }
  return vocabulary;
}

ClipVocabulary loadTokenizerJson(const fs::path& file) {
  const json root = parseJson(file);
  const std::string where = file.string();
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) {
    throw ClipTokenizerError(where + ": no \"model\" object (not a Hugging Face tokenizer.json)");
  }
  const json& model = root["model"];
  if (model.contains("type") && model["type"] != "BPE") {
    throw ClipTokenizerError(where + ": model.type is " + model["type"].dump() + ", a CLIP tokenizer is \"BPE\"");
  }
  if (!model.contains("vocab") || !model.contains("merges") || !model["merges"].is_array()) {
    throw ClipTokenizerError(where + ": model.vocab and model.merges are required");
  }
  ClipVocabulary vocabulary;
  vocabulary.source = where;
  vocabulary.tokenIds = readVocabObject(model["vocab"], where + " model.vocab");
  const json& merges = model["merges"];
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string at = where + " model.merges[" + std::to_string(i) + "]";
    const json& merge = merges[i];
    if (merge.is_string()) {  // older format: "a b"
      vocabulary.merges.push_back(splitMerge(merge.get<std::string>(), at));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      vocabulary.merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else {
      throw ClipTokenizerError(at + ": expected \"a b\" or [\"a\", \"b\"], got " + merge.dump());
    }
  }
  // Special tokens may be listed only among the added tokens.
  if (root.contains("added_tokens") && root["added_tokens"].is_array()) {
    for (const json& added : root["added_tokens"]) {
      if (added.contains("content") && added["content"].is_string() && added.contains("id") &&
          added["id"].is_number_integer()) {
        vocabulary.tokenIds.emplace(added["content"].get<std::string>(), added["id"].get<int32_t>());
      }
    }
  }
  return vocabulary;
}

}  // namespace

std::string findClipTokenizerFiles(const std::string& pathText) {
  if (pathText.empty()) throw ClipTokenizerError("clip_tokenizer: no tokenizer path given");
  const fs::path path(pathText);
  if (!fs::exists(path)) throw ClipTokenizerError("clip_tokenizer: '" + pathText + "' does not exist");
  if (fs::is_regular_file(path)) {
    const std::string name = path.filename().string();
    if (name == "vocab.json" || name == "merges.txt") {
      if (!hasVocabAndMerges(path.parent_path())) {
        throw ClipTokenizerError("clip_tokenizer: '" + path.parent_path().string() +
                                 "' needs both vocab.json and merges.txt");
      }
      return path.parent_path().string();
    }
    if (name.size() >= 5 && name.compare(name.size() - 5, 5, ".json") == 0) return path.string();
    throw ClipTokenizerError("clip_tokenizer: '" + pathText +
                             "' is not a tokenizer file (expected tokenizer.json, vocab.json or a folder)");
  }
  std::string found = filesIn(path);
  if (found.empty()) found = filesIn(path / "tokenizer");
  if (found.empty()) found = filesInCacheRepository(path);
  for (const char* repository : kCacheRepositories) {
    if (found.empty()) found = filesInCacheRepository(path / repository);
    if (found.empty()) found = filesInCacheRepository(path / "hub" / repository);
  }
  if (!found.empty()) return found;
  if (fs::is_regular_file(path / "vocab.json") && !fs::is_regular_file(path / "merges.txt")) {
    throw ClipTokenizerError("clip_tokenizer: '" + pathText + "' has vocab.json but no merges.txt");
  }
  throw ClipTokenizerError("clip_tokenizer: no CLIP tokenizer files in '" + pathText +
                           "' (looked for vocab.json + merges.txt, tokenizer.json, a tokenizer/ subfolder, and "
                           "the Hugging Face cache layout models--openai--clip-vit-large-patch14/snapshots/*/)");
}

ClipVocabulary loadClipVocabulary(const std::string& path) {
  const fs::path files(findClipTokenizerFiles(path));
  ClipVocabulary vocabulary = fs::is_directory(files) ? loadVocabAndMerges(files) : loadTokenizerJson(files);
  if (vocabulary.merges.empty()) throw ClipTokenizerError(vocabulary.source + ": no BPE merges");
  for (const char* special : {"<|startoftext|>", "<|endoftext|>"}) {
    if (!vocabulary.tokenIds.count(special)) {
      throw ClipTokenizerError(vocabulary.source + ": the vocabulary has no " + special +
                               " token (not a CLIP tokenizer)");
    }
  }
  return vocabulary;
}

}  // namespace sinter::text
