#pragma once
// The words of the run's control channel (`--control stdin`, DESIGN.md §3): one command a line,
// read by the loop at the next step boundary (control_channel.h, run_controls.h).
#include <optional>
#include <string>
#include <vector>

namespace sinter::train {

enum class ControlCommand {
  Sample,          // "sample": the sample prompts rendered now, as sample_every_n_steps would
  Save,            // "save": the model (and with save_state its state) saved now, as save_every_n_steps would
  StopAfterEpoch,  // "stop_after_epoch": the run ends with the current epoch, saved as at its end
  Pause,           // "pause": the run waits at this step boundary, the model loaded
  Resume,          // "resume": a paused run goes on
  // Never typed: what rank 0 tells the others happened at a boundary or during a pause.
  StopSignal,     // SIGINT/SIGTERM: save and stop here
  ChannelClosed,  // the channel ended during a pause: nothing can resume it, so it goes on
};

// The word of a command ("stop_after_epoch"); the agreement between ranks spells them so too.
std::string controlCommandName(ControlCommand command);

// One line of the channel: a command; nothing for a blank line; else `problem` says what is wrong
// with it (the words a user can type are the first five above, in any case, with spaces around).
struct ParsedControlLine {
  std::optional<ControlCommand> command;
  std::string problem;
};
ParsedControlLine parseControlLine(const std::string& line);

// Commands as one store value for the ranks ("save pause"), and back; an unknown word throws
// std::runtime_error (every rank runs the same build: it means a broken store).
std::string encodeControlCommands(const std::vector<ControlCommand>& commands);
std::vector<ControlCommand> decodeControlCommands(const std::string& text);

}  // namespace sinter::train
