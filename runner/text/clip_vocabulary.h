#pragma once
// Reading the CLIP tokenizer's files from where users keep them: a folder with vocab.json +
// merges.txt, a tokenizer.json (Hugging Face format: model.vocab + model.merges), a diffusers
// model folder (its tokenizer/ subfolder) or a Hugging Face cache folder
// (models--openai--clip-vit-large-patch14/snapshots/<revision>/).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sinter::text {

class ClipTokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClipVocabulary {
  std::unordered_map<std::string, int32_t> tokenIds;
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  std::string source;  // the file(s) read, for messages
};

// Resolves `path` (file or folder, see above) to either a tokenizer.json file or a folder holding
// vocab.json and merges.txt. Throws ClipTokenizerError saying what was looked for.
std::string findClipTokenizerFiles(const std::string& path);

// Loads and validates the vocabulary; errors name the file and, for merges.txt, the line.
ClipVocabulary loadClipVocabulary(const std::string& path);

}  // namespace sinter::text
