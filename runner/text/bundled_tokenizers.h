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

}  // namespace sinter::text
