#pragma once
// argparse's abbreviations, which sd-scripts' scripts inherit: a name that is no option but the
// prefix of exactly one is that option; the prefix of several is refused, naming them.
#include <string>
#include <vector>

namespace sinter {

struct ArgparsePrefix {
  std::string full;       // the option `name` abbreviates, or ""
  std::string ambiguity;  // "ambiguous option: --x could match --a, --b" when it starts several, or ""
};

// `name` against `candidates` (without the leading --); an exact candidate is itself.
ArgparsePrefix matchArgparsePrefix(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace sinter
