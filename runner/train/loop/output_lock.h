#pragma once
// One run at a time per output: two runs into one output_dir and output_name would interleave their
// step files and leave as the final file whichever finished last. A run holds
// <output_dir>/<output_name>.lock, an flock on a file that holds its pid, for its whole life; a second
// run is refused while it is held. The kernel drops the lock when the process ends however it ends;
// the file itself is removed on every orderly exit (completed, stopped, failed), and one left behind
// (a killed run) is not held by anyone and is taken over.
#include <sys/types.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace sinter::train {

// <output_dir>/<output_name>.lock
std::string outputLockPath(const std::string& outputDir, const std::string& outputName);

// Another process (or another lock in this one) holds the file: the message names it and the
// holder's pid.
class OutputLockHeld : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputLock {
 public:
  // Takes the lock at `path`, creating the file; throws OutputLockHeld while someone holds it and
  // std::runtime_error when the file cannot be made or locked (naming it and why).
  explicit OutputLock(std::string path);
  ~OutputLock();  // removes the file, then releases the lock
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }
  // When the file was there but held by no one: the pid it names (the run that left it), or "" when
  // it named none.
  const std::optional<std::string>& takenOverFrom() const { return takenOverFrom_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::optional<std::string> takenOverFrom_;
};

}  // namespace sinter::train
