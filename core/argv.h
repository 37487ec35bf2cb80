#pragma once
// Command lines built from and parsed into configs, both from the registry:
// --KEY VALUE, --KEY=VALUE, --FLAG, --no-FLAG, and lists (--KEY A B C, up to the next --option).
#include <string>
#include <vector>

#include "config.h"

namespace sinter {

// Arguments (without the program name) that reproduce every explicitly set option of `config`
// that applies to its tab and family; secrets are left out.
std::vector<std::string> buildArgv(const Config& config);

struct ParsedArgs {
  Config overrides;                     // registry options given on the command line
  std::vector<std::string> extraFlags;  // names of accepted non-registry flags that were present
  std::map<std::string, std::string> extraValues;  // accepted non-registry options with a value
  std::vector<std::string> positional;
  std::vector<Diagnostic> warnings;     // sd-scripts options given that Sinter ignores, with why

  bool hasFlag(const std::string& name) const;  // one of extraFlags
};

struct ExtraArg {
  std::string name;  // without the leading --
  bool takesValue;
};

// Parses args (without the program name). `extras` are the program's own options beside the
// registry (the runner's --config_file, --dry_run, ...). Throws ConfigError on unknown options
// (with a did-you-mean), missing values, bad values and refused sd-scripts options (with why;
// foreign_options.h).
ParsedArgs parseArgv(const std::vector<std::string>& args, const std::vector<ExtraArg>& extras = {});

}  // namespace sinter
