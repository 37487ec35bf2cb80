#pragma once
// The control channel's commands during a run (DESIGN.md §3, §8): at each step boundary rank 0
// takes what the channel (control_channel.h) and a stop signal asked, every rank receives the same
// (through the rendezvous store, the one value a boundary already cost), and every rank acts on it
// at that boundary: samples and saves made now, a pause that waits here (the model loaded), the
// end of the run after the current epoch. Each command is acknowledged by a `control` event;
// a line that is no command by a `warning` naming it.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/events.h"
#include "train/loop/control_channel.h"
#include "train/loop/control_commands.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// A step boundary as the loop sees it when the step has ended.
struct StepBoundary {
  long long step = 0;
  long long epoch = 0;     // the step's, 1-based
  bool epochEnds = false;  // the step was its epoch's last
  bool lastStep = false;   // max_train_steps reached: the run ends here
};

// What was asked at a boundary: the same on every rank.
struct BoundaryControls {
  bool stop = false;     // a stop signal: save and stop after this step
  bool endsRun = false;  // stop_after_epoch, at the end of its epoch: the run ends here as a completed run
  std::vector<ControlCommand> actions;  // sample, save, pause, resume, in the order given
  bool acknowledgements = false;  // something to acknowledge (stop_after_epoch read here)
  // Whether the boundary has anything to do (the loop reports the step before it acts).
  bool any() const { return stop || endsRun || acknowledgements || !actions.empty(); }
};

// What the schedules do at the boundary anyway, so that a command does not do it twice.
struct ScheduledWork {
  bool samples = false;  // sample images (sample_every_n_steps or _epochs)
  bool save = false;     // a step or epoch save, or the stop's or the run's end's
  bool runEnds = false;  // the run ends at this boundary (its last step, a stop, stop_after_epoch)
};

// What the commands do, the loop's to give: `sample` renders the prompts and returns its seconds
// (0 where the rank does not sample); `save` saves the model (and state) as save_every_n_steps names them.
struct ControlActions {
  bool canSample = false;  // the config has sample_prompts
  std::function<double()> sample;
  std::function<void()> save;
  std::function<void()> beforeLog;  // ends the terminal's progress line
};

struct ControlOutcome {
  double sampleSeconds = 0;  // kept out of the steps' time, as the schedule's samples are
  double pausedSeconds = 0;  // kept out of the steps' time, it/s, ETA and the total
  bool stop = false;         // a stop signal came during a pause
};

class RunControls {
 public:
  // `channel`: rank 0's channel, or null (no --control, or another rank).
  RunControls(const RunContext& run, ControlChannel* channel);

  // Every rank, after each step: rank 0 reads the channel and whether a stop signal came, and
  // decides for all. stop_after_epoch is taken here, so that the loop knows before its saves
  // whether the run ends at this boundary.
  BoundaryControls afterStep(const StepBoundary& boundary);
  // Every rank, after the schedules' work at the boundary: acknowledges what afterStep took and
  // acts on `asked` in order. A pause waits here, acting on what comes meanwhile, until resume, a
  // stop signal, or the end of the channel (which can then never resume it; a warning says so).
  ControlOutcome act(const BoundaryControls& asked, const StepBoundary& boundary, const ScheduledWork& work,
                     const ControlActions& actions);
  // After the last step (`stopped`: by a stop signal), in epoch `epoch`: the commands that came too
  // late, acknowledged as ignored, and an end after an epoch that was asked, as done.
  void finish(long long step, long long epoch, bool stopped);

 private:
  // Rank 0: the channel's commands since the last call (a warning for each line that is none).
  std::vector<ControlCommand> readChannel();
  // The commands rank 0 decided under `key`, on every rank.
  std::vector<ControlCommand> agree(const std::string& key, const std::vector<ControlCommand>& onRankZero);
  // One wait of a pause (`tick` counts them): the commands that came, or none (a heartbeat that
  // keeps the other ranks' wait in the store from timing out).
  std::vector<ControlCommand> waitWhilePaused(long long step, long long tick);
  void endAfterEpoch(const StepBoundary& boundary, bool epochHandled);
  void acknowledge(ControlCommand command, long long step, long long epoch, const std::string& result, double seconds,
                   const std::string& message);

  const RunContext& run_;
  ControlChannel* channel_;
  bool channelClosedSaid_ = false;
  std::optional<long long> endAfterEpoch_;  // stop_after_epoch: the epoch the run ends with
  std::vector<events::Control> unsent_;     // acknowledgements afterStep made, sent by act
  std::function<void()> beforeLog_;
};

}  // namespace sinter::train
