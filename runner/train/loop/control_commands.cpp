#include "train/loop/control_commands.h"

#include <sstream>
#include <stdexcept>
#include <utility>

namespace sinter::train {

namespace {

constexpr std::pair<ControlCommand, const char*> kControlNames[] = {
    {ControlCommand::Sample, "sample"},       {ControlCommand::Save, "save"},
    {ControlCommand::StopAfterEpoch, "stop_after_epoch"}, {ControlCommand::Pause, "pause"},
    {ControlCommand::Resume, "resume"},       {ControlCommand::StopSignal, "stop_signal"},
    {ControlCommand::ChannelClosed, "channel_closed"},
};
constexpr int kTypedControlCommands = 5;  // the first five of kControlNames

std::optional<ControlCommand> controlCommandByName(const std::string& word, int among) {
  for (int i = 0; i < among; ++i)
    if (word == kControlNames[i].second) return kControlNames[i].first;
  return std::nullopt;
}

bool isControlLineBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A line as the warning quotes it: at most 80 bytes, control characters shown as '?'.
std::string quotedControlLine(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size() && i < 80; ++i) out += static_cast<unsigned char>(line[i]) < 0x20 ? '?' : line[i];
  if (line.size() > 80) out += "...";
  return "'" + out + "'";
}

}  // namespace

std::string controlCommandName(ControlCommand command) {
  for (const auto& [c, name] : kControlNames)
    if (c == command) return name;
  return "?";
}

ParsedControlLine parseControlLine(const std::string& line) {
  size_t begin = 0, end = line.size();
  while (begin < end && isControlLineBlank(line[begin])) ++begin;
  while (end > begin && isControlLineBlank(line[end - 1])) --end;
  if (begin == end) return {};
  std::string word = line.substr(begin, end - begin);
  for (char& c : word)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (const std::optional<ControlCommand> command = controlCommandByName(word, kTypedControlCommands)) return {command, ""};
  return {std::nullopt, quotedControlLine(line) + " is not a command; the commands are sample, save, stop_after_epoch, pause and resume, one a line"};
}

std::string encodeControlCommands(const std::vector<ControlCommand>& commands) {
  std::string out;
  for (ControlCommand c : commands) out += (out.empty() ? "" : " ") + controlCommandName(c);
  return out;
}

std::vector<ControlCommand> decodeControlCommands(const std::string& text) {
  std::vector<ControlCommand> out;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const std::optional<ControlCommand> command = controlCommandByName(word, static_cast<int>(std::size(kControlNames)));
    if (!command) throw std::runtime_error("rank 0 sent an unknown control command '" + word + "'");
    out.push_back(*command);
  }
  return out;
}

}  // namespace sinter::train
