#include "data/pivotal_embedding_specs.h"

#include <cctype>
#include <set>
#include <stdexcept>

#include "data/textual_inversion_captions.h"

namespace sinter::data {

namespace {

// "k=v k2=\"a b\"": the pairs in order; a quoted value may hold spaces.
std::vector<std::pair<std::string, std::string>> splitPairs(const std::string& item, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t i = 0;
  while (i < item.size()) {
    while (i < item.size() && std::isspace(static_cast<unsigned char>(item[i]))) ++i;
    if (i >= item.size()) break;
    const size_t eq = item.find('=', i);
    const size_t space = item.find_first_of(" \t", i);
    if (eq == std::string::npos || (space != std::string::npos && space < eq))
      throw std::invalid_argument(where + ": \"" + item.substr(i, space == std::string::npos ? std::string::npos : space - i) +
                                  "\" is not key=value");
    const std::string key = item.substr(i, eq - i);
    i = eq + 1;
    std::string value;
    if (i < item.size() && item[i] == '"') {
      const size_t close = item.find('"', i + 1);
      if (close == std::string::npos) throw std::invalid_argument(where + ": " + key + "'s value has no closing quote");
      value = item.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      const size_t end = item.find_first_of(" \t", i);
      value = item.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end == std::string::npos ? item.size() : end;
    }
    pairs.emplace_back(key, value);
  }
  return pairs;
}

double number(const std::string& value, const std::string& where, const std::string& key) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size()) throw std::invalid_argument(where + ": " + key + " = \"" + value + "\" is not a number");
  return v;
}

}  // namespace

std::vector<std::string> PivotalEmbeddingSpec::tokens() const { return textualInversionTokens(tokenString, vectors); }

std::vector<PivotalEmbeddingSpec> pivotalEmbeddingSpecs(const Config& config) {
  std::vector<PivotalEmbeddingSpec> specs;
  std::set<std::string> seen;
  const StringList items = config.getList("embeddings");
  for (size_t n = 0; n < items.size(); ++n) {
    const std::string where = "embeddings item " + std::to_string(n + 1);
    PivotalEmbeddingSpec s;
    std::set<std::string> keys;
    for (const auto& [key, value] : splitPairs(items[n], where)) {
      if (!keys.insert(key).second) throw std::invalid_argument(where + ": " + key + " is set twice");
      if (key == "token_string") {
        s.tokenString = value;
      } else if (key == "init_word") {
        s.initWord = value;
      } else if (key == "weights") {
        s.weightsFile = value;
      } else if (key == "num_vectors_per_token") {
        const double v = number(value, where, key);
        if (v != static_cast<int>(v) || v < 1 || v > 75)
          throw std::invalid_argument(where + ": num_vectors_per_token = " + value + " is not a whole number from 1 to 75");
        s.vectors = static_cast<int>(v);
      } else if (key == "learning_rate") {
        const double v = number(value, where, key);
        if (v < 0) throw std::invalid_argument(where + ": learning_rate = " + value + " is negative");
        s.learningRate = v;
      } else {
        throw std::invalid_argument(where + ": unknown key '" + key +
                                    "' (an embedding takes token_string, init_word, num_vectors_per_token, weights, learning_rate)");
      }
    }
    if (s.tokenString.empty()) throw std::invalid_argument(where + ": token_string is not set (the new token the embedding is for)");
    if (s.tokenString.find_first_of(" \t.") != std::string::npos)
      throw std::invalid_argument(where + ": token_string \"" + s.tokenString +
                                  "\" holds a space or a '.': A1111 and Forge read a LoRA's bundled embeddings by a name without them");
    for (const std::string& token : s.tokens())
      if (!seen.insert(token).second)
        throw std::invalid_argument(where + ": the token \"" + token + "\" is another embedding's too (token_string \"" + s.tokenString +
                                    "\" with " + std::to_string(s.vectors) + " vectors makes " +
                                    TextualInversionCaptions{s.tokenString, s.vectors, false, false}.joinedTokens() + ")");
    specs.push_back(s);
  }
  return specs;
}

std::vector<CaptionReplacement> pivotalCaptionReplacements(const std::vector<PivotalEmbeddingSpec>& specs) {
  std::vector<CaptionReplacement> out;
  for (const PivotalEmbeddingSpec& s : specs) {
    const TextualInversionCaptions captions{s.tokenString, s.vectors, false, false};
    if (const std::optional<CaptionReplacement> r = captions.promptReplacement()) out.push_back(*r);
  }
  return out;
}

}  // namespace sinter::data
