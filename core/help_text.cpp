#include "core/help_text.h"

#include "core/registry.h"

namespace sinter {

namespace {

std::string valueHint(const OptionSpec& spec) {
  switch (spec.type) {
    case OptionType::Bool: return "";
    case OptionType::Int: return " N";
    case OptionType::Float: return " X";
    case OptionType::Path: return spec.pathKind == PathKind::Directory ? " DIR" : " FILE";
    case OptionType::List: return " VALUE...";
    case OptionType::Enum: {
      std::string out = " {";
      for (std::size_t i = 0; i < spec.choices.size(); ++i) out += (i ? "," : "") + spec.choices[i];
      return out + "}";
    }
    default: return " TEXT";
  }
}

std::string familiesText(std::uint8_t families) {
  if (families == kAllFamilies) return "";
  std::string out;
  for (Family f : allFamilies())
    if (families & static_cast<std::uint8_t>(f)) out += (out.empty() ? "" : ",") + std::string(toString(f));
  return " [" + out + "]";
}

// Wraps `text` at `width` columns, indenting continuation lines.
std::string wrap(const std::string& text, std::size_t indent, std::size_t width) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    pos = end + 1;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

}  // namespace

std::string registryHelpText(const std::string& usage) {
  std::string out = usage;
  if (!out.empty() && out.back() != '\n') out += "\n";
  for (Section section : allSections()) {
    out += "\n" + std::string(toString(section)) + " options:\n";
    for (const auto& spec : optionRegistry()) {
      if (spec.section != section) continue;
      std::string head = "  --" + std::string(spec.key) + valueHint(spec);
      if (spec.type == OptionType::Bool) head += ", --no-" + std::string(spec.key);
      std::string desc = spec.tooltip;
      if (!isUnset(spec.defaultValue) && spec.type != OptionType::Bool)
        desc += " Default: " + asString(spec.defaultValue) + ".";
      if (spec.minValue || spec.maxValue) {
        auto bound = [&](double b) {
          return spec.type == OptionType::Int ? std::to_string(static_cast<long long>(b)) : formatDouble(b);
        };
        desc += " Range: " + (spec.minValue ? bound(*spec.minValue) : std::string("-inf")) + ".." +
                (spec.maxValue ? bound(*spec.maxValue) : std::string("inf")) + ".";
      }
      if (spec.deprecated) desc += " (deprecated)";
      out += head + familiesText(spec.families) + "\n" + wrap(desc, 6, 100);
    }
  }
  return out;
}

}  // namespace sinter
