#include "train/loop/run_controls.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "distributed/process_group.h"
#include "train/loop/stop_request.h"

namespace sinter::train {

namespace {

using ControlClock = std::chrono::steady_clock;

double controlSecondsSince(ControlClock::time_point t) { return std::chrono::duration<double>(ControlClock::now() - t).count(); }

std::string boundaryKey(long long step) { return "control/" + std::to_string(step); }
std::string pauseKey(long long step, long long tick) { return boundaryKey(step) + "/" + std::to_string(tick); }

// How often a pause tells the other ranks it goes on: well within the time they wait for a value.
std::chrono::milliseconds pauseHeartbeat() {
  return std::min<std::chrono::milliseconds>(std::chrono::seconds(5), distributed::rankTimeout() / 4);
}

std::string oneDecimal(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", s);
  return buffer;
}

}  // namespace

RunControls::RunControls(const RunContext& run, ControlChannel* channel) : run_(run), channel_(channel) {}

std::vector<ControlCommand> RunControls::readChannel() {
  std::vector<ControlCommand> commands;
  if (!channel_) return commands;
  const bool closed = channel_->closed();  // every line it read is waiting by then
  for (const ControlLine& line : channel_->take()) {
    const ParsedControlLine parsed = parseControlLine(line.text);
    if (parsed.command) {
      commands.push_back(*parsed.command);
    } else if (!parsed.problem.empty()) {
      std::string message = "control line " + std::to_string(line.number) + ": " + parsed.problem;
      if (line.cutBytes > 0) message += " (the line had " + std::to_string(line.cutBytes) + " more bytes, not read)";
      if (beforeLog_) beforeLog_();
      spdlog::warn("{}", message);
      run_.events.emit(events::Warning{message});
    }
  }
  if (closed && !channelClosedSaid_) {
    channelClosedSaid_ = true;
    if (beforeLog_) beforeLog_();
    spdlog::info("the control channel (stdin) has ended: no more commands are read");
  }
  return commands;
}

std::vector<ControlCommand> RunControls::agree(const std::string& key, const std::vector<ControlCommand>& onRankZero) {
  distributed::ProcessGroup& group = *run_.group;
  // A marker first: the value of a boundary without commands is not empty.
  if (group.rank() == 0) {
    group.publish(key, "=" + encodeControlCommands(onRankZero));
    return onRankZero;
  }
  const std::string value = group.await(key);
  return decodeControlCommands(value.empty() ? value : value.substr(1));
}

BoundaryControls RunControls::afterStep(const StepBoundary& boundary) {
  std::vector<ControlCommand> commands;
  if (run_.rank() == 0) {
    commands = readChannel();
    if (stopRequested()) commands.push_back(ControlCommand::StopSignal);
  }
  if (run_.group) {
    commands = agree(boundaryKey(boundary.step), commands);
    // The others have read the values of long-past boundaries (their collectives keep them within
    // a step or two of rank 0).
    if (run_.group->rank() == 0 && boundary.step > 64) run_.group->forget(boundaryKey(boundary.step - 64));
  }
  BoundaryControls asked;
  for (ControlCommand c : commands) {
    if (c == ControlCommand::StopSignal) {
      asked.stop = true;
    } else if (c == ControlCommand::StopAfterEpoch) {
      endAfterEpoch(boundary, false);
      asked.acknowledgements = true;
    } else if (c != ControlCommand::ChannelClosed) {
      asked.actions.push_back(c);
    }
  }
  asked.endsRun = boundary.epochEnds && endAfterEpoch_ && *endAfterEpoch_ <= boundary.epoch && !boundary.lastStep;
  return asked;
}

void RunControls::endAfterEpoch(const StepBoundary& boundary, bool epochHandled) {
  const ControlCommand c = ControlCommand::StopAfterEpoch;
  auto note = [&](long long epoch, const char* result, const std::string& message) {
    unsent_.push_back(events::Control{controlCommandName(c), boundary.step, epoch, result, 0, message});
  };
  if (endAfterEpoch_) return note(*endAfterEpoch_, "ignored", "asked already: the run ends after epoch " + std::to_string(*endAfterEpoch_));
  if (boundary.lastStep) return note(boundary.epoch, "ignored", "the run ends at this step anyway");
  // Read at the boundary that ends an epoch, it is that epoch's end; during a pause there, the
  // epoch's end is past (its saves made), so the next one's.
  const long long epoch = boundary.epochEnds && epochHandled ? boundary.epoch + 1 : boundary.epoch;
  endAfterEpoch_ = epoch;
  note(epoch, "pending", "the run ends after epoch " + std::to_string(epoch) + ", saved as at its end");
}

void RunControls::acknowledge(ControlCommand command, long long step, long long epoch, const std::string& result, double seconds,
                              const std::string& message) {
  if (beforeLog_) beforeLog_();
  spdlog::info("control: {} at step {}: {} ({})", controlCommandName(command), step, message, result);
  run_.events.emit(events::Control{controlCommandName(command), step, epoch, result, seconds, message});
}

ControlOutcome RunControls::act(const BoundaryControls& asked, const StepBoundary& boundary, const ScheduledWork& work,
                                const ControlActions& actions) {
  beforeLog_ = actions.beforeLog;
  auto sendUnsent = [this] {
    for (const events::Control& ack : unsent_) {
      if (beforeLog_) beforeLog_();
      spdlog::info("control: {} at step {}: {} ({})", ack.command, ack.step, ack.message, ack.result);
      run_.events.emit(ack);
    }
    unsent_.clear();
  };
  sendUnsent();
  ControlOutcome out;
  if (asked.actions.empty()) return out;

  const long long step = boundary.step, epoch = boundary.epoch;
  bool scheduledSamples = work.samples, saved = work.save, paused = false;
  ControlClock::time_point pausedAt;
  auto endPause = [&] {
    const double s = controlSecondsSince(pausedAt);
    out.pausedSeconds += s;
    paused = false;
    return s;
  };
  auto handle = [&](ControlCommand c) {
    auto ack = [&](const char* result, const std::string& message, double seconds = 0) {
      acknowledge(c, step, epoch, result, seconds, message);
    };
    switch (c) {
      case ControlCommand::Sample:
        if (!actions.canSample) {
          ack("ignored", "the run's config has no sample_prompts");
        } else if (scheduledSamples) {
          scheduledSamples = false;
          ack("done", "the schedule's sample images at this step are these");
        } else {
          const double s = actions.sample();
          out.sampleSeconds += s;
          ack("done", "sample images made at step " + std::to_string(step), s);
        }
        break;
      case ControlCommand::Save:
        if (saved) {
          ack("done", work.save ? "the run saves at this step anyway" : "saved at this step already");
        } else {
          const auto start = ControlClock::now();
          actions.save();
          saved = true;
          ack("done", "saved at step " + std::to_string(step), controlSecondsSince(start));
        }
        break;
      case ControlCommand::Pause:
        if (paused) {
          ack("ignored", "paused already");
        } else if (work.runEnds) {
          ack("ignored", "the run ends at this step");
        } else {
          paused = true;
          pausedAt = ControlClock::now();
          ack("done", "paused after step " + std::to_string(step) + " (the model stays loaded; resume goes on)");
        }
        break;
      case ControlCommand::Resume:
        if (!paused) {
          ack("ignored", "the run is not paused");
        } else {
          const double s = endPause();
          ack("done", "resumed after a pause of " + oneDecimal(s) + " s", s);
        }
        break;
      case ControlCommand::StopAfterEpoch:
        endAfterEpoch(boundary, true);
        sendUnsent();
        break;
      case ControlCommand::StopSignal:
        out.stop = true;
        if (paused) {
          endPause();
          if (beforeLog_) beforeLog_();
          spdlog::info("a stop signal ends the pause at step {}", step);
        }
        break;
      case ControlCommand::ChannelClosed:
        if (paused) {
          endPause();
          const std::string message = "the control channel ended while the run was paused at step " + std::to_string(step) +
                                      ": nothing could resume it, so it goes on";
          if (beforeLog_) beforeLog_();
          spdlog::warn("{}", message);
          run_.events.emit(events::Warning{message});
        }
        break;
    }
  };
  for (ControlCommand c : asked.actions) handle(c);
  long long ticks = 0;
  while (paused)
    for (ControlCommand c : waitWhilePaused(step, ++ticks)) handle(c);
  // Every rank has read the pause's values before rank 0 forgets them.
  if (ticks > 0 && run_.group) {
    run_.group->barrier();
    if (run_.group->rank() == 0)
      for (long long t = 1; t <= ticks; ++t) run_.group->forget(pauseKey(step, t));
  }
  return out;
}

std::vector<ControlCommand> RunControls::waitWhilePaused(long long step, long long tick) {
  if (run_.group && run_.group->rank() != 0) return agree(pauseKey(step, tick), {});
  const auto heartbeat = ControlClock::now() + pauseHeartbeat();
  std::vector<ControlCommand> commands;
  for (;;) {
    const bool closed = channel_ && channel_->closed();
    commands = readChannel();
    if (stopRequested()) commands.push_back(ControlCommand::StopSignal);
    if (closed || !channel_) commands.push_back(ControlCommand::ChannelClosed);
    if (!commands.empty() || (run_.group && ControlClock::now() >= heartbeat)) break;
    // A stop signal is seen within this wait: the handler cannot wake a condition variable.
    channel_->wait(std::chrono::milliseconds(100));
  }
  return run_.group ? agree(pauseKey(step, tick), commands) : commands;
}

void RunControls::finish(long long step, long long epoch, bool stopped) {
  for (ControlCommand c : readChannel())
    acknowledge(c, step, epoch, "ignored", 0, "the run has trained its last step");
  if (endAfterEpoch_)
    acknowledge(ControlCommand::StopAfterEpoch, step, *endAfterEpoch_, stopped ? "ignored" : "done",
                0, stopped ? "a stop signal ended the run at step " + std::to_string(step) + " first"
                           : "the run ended after epoch " + std::to_string(std::min(epoch, *endAfterEpoch_)) + " as asked");
}

}  // namespace sinter::train
