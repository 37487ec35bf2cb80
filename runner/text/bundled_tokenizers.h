#pragma once
// The tokenizer files that ship with Sinter (resources/tokenizers/<name> in the repository):
// the build copies them to share/sinter/tokenizers/ beside bin/, and `cmake --install` puts them
// at the same place under the prefix, so sinter-runner finds them relative to its own binary in
// the build tree and after install alike.
#include <optional>
#include <string>
#include <vector>

namespace sinter::text {

// Where the bundled tokenizer `name` ("clip") is looked for, in order: relative to the running
// binary (build tree and install prefix), then the repository's own copy the binary was built from.
std::vector<std::string> bundledTokenizerCandidates(const std::string& name);

// The first candidate folder that exists, or nullopt.
std::optional<std::string> findBundledTokenizer(const std::string& name);

// The tokenizer folder a run uses: `configured` when set, else the bundled `name`. Throws
// std::runtime_error naming `optionKey` and the places looked in when neither is there.
std::string tokenizerFolder(const std::string& optionKey, const std::string& configured, const std::string& name);

// "clip_tokenizer: bundled with Sinter (<folder>)" or "clip_tokenizer: <folder>", for the log, the dry
// run and the start event.
std::string describeTokenizer(const std::string& optionKey, const std::string& folder, const std::string& name);

}  // namespace sinter::text
