#pragma once
// A TensorBoard event file: a TFRecord file of serialized Event messages (tensorboard_event.h),
// each record `uint64 length, uint32 masked crc32c(length), data, uint32 masked crc32c(data)`, all
// little-endian. Named and flushed as TensorBoard's own EventFileWriter (which PyTorch's
// SummaryWriter uses) names and flushes it, so a run's folder reads the same in TensorBoard.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "io/tensorboard_event.h"

namespace sinter::io::tensorboard {

// SummaryWriter's keyword arguments that shape the file (accelerate passes log_tracker_config's
// [tensorboard] table to it).
struct EventFileOptions {
  int maxQueue = 10;            // events held in memory before they are written out
  double flushSeconds = 120;    // and at least this often
  std::string filenameSuffix;   // appended to the file name
  std::optional<std::int64_t> purgeStep;  // a restart at this step: older events from it on are hidden
};

// One record's bytes for `data` (the framing above).
std::string tfRecord(const std::string& data);

// "events.out.tfevents.<10-digit unix time>.<hostname>.<pid>.<n><suffix>", n counting the files
// this process opened.
std::string eventFileName(std::int64_t unixTime, const std::string& suffix);

// Seconds since the Unix epoch, as Event.wall_time holds them.
double wallTimeNow();

class EventFileWriter {
 public:
  // Makes `folder` (with its parents) and a new event file in it, and writes the file-version
  // event (and, with purgeStep, the session start that purges). Throws std::runtime_error naming
  // the file on failure.
  EventFileWriter(const std::string& folder, EventFileOptions options);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  const std::string& path() const { return path_; }
  // Adds one serialized Event; written out when maxQueue are waiting or flushSeconds have passed.
  void add(const std::string& event);
  void addScalars(std::int64_t step, const std::vector<Scalar>& scalars);
  void addText(std::int64_t step, const std::string& tag, const std::string& text);
  // Writes what waits and flushes the file to the operating system.
  void flush();
  void close();

 private:
  std::string path_;
  EventFileOptions options_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> waiting_;
  std::chrono::steady_clock::time_point lastFlush_;
};

}  // namespace sinter::io::tensorboard
