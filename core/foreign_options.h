#pragma once
// sd-scripts options that are not Sinter options. Each is either refused (setting it is an error
// that says why and what to use instead) or ignored (it cannot change what is trained; loading it
// warns why). Either way the value that asks for nothing (unset, empty, false, or sd-scripts'
// default) is accepted silently, so configs that list every key still load. None of them is ever
// stored in a Config, so the writer, argv and the app never see them.
#include <optional>
#include <string>
#include <vector>

#include "diagnostics.h"
#include "option.h"

namespace sinter {

enum class ForeignHandling : std::uint8_t { Refused, Ignored };

struct ForeignOption {
  const char* key;         // sd-scripts spelling
  OptionType type;         // sd-scripts' argparse type: Bool is a flag, List takes several values
  Value inert;             // sd-scripts' default; monostate for None
  ForeignHandling handling;
  const char* reason;      // why, and what to use instead
};

// Every such option, in sd-scripts' order.
const std::vector<ForeignOption>& foreignOptions();

// nullptr when `key` is not one of them.
const ForeignOption* findForeignOption(const std::string& key);

// True when `value` asks for nothing: unset, "", an empty list, false, 0 for a number whose
// default is None or 0, or sd-scripts' default (numbers compared by value, text also as a number).
bool isInertValue(const ForeignOption& option, const Value& value);

// The diagnostic for setting `option` to `value` at `where`: an error for a refused option, a
// warning for an ignored one; nothing when the value is inert.
std::optional<Diagnostic> foreignOptionDiagnostic(const ForeignOption& option, const Value& value,
                                                  const SourceLocation& where);

}  // namespace sinter
