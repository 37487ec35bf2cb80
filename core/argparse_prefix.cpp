#include "core/argparse_prefix.h"

#include <algorithm>

namespace sinter {

ArgparsePrefix matchArgparsePrefix(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.empty()) return {};
  std::vector<std::string> matches;
  for (const std::string& key : candidates) {
    if (key == name) return {key, ""};
    if (key.rfind(name, 0) == 0 && std::find(matches.begin(), matches.end(), key) == matches.end()) matches.push_back(key);
  }
  if (matches.size() == 1) return {matches.front(), ""};
  if (matches.empty()) return {};
  std::sort(matches.begin(), matches.end());
  std::string list;
  for (const auto& m : matches) list += (list.empty() ? "--" : ", --") + m;
  return {"", "ambiguous option: --" + name + " could match " + list};
}

}  // namespace sinter
