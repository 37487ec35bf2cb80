#include "io/tfevents_writer.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "io/crc32c.h"

namespace sinter::io::tensorboard {

namespace {

void appendLittleEndian(std::string& out, std::uint64_t v, int size) {
  for (int i = 0; i < size; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string systemError(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::error_code(errno, std::generic_category()).message();
}

}  // namespace

std::string tfRecord(const std::string& data) {
  std::string length;
  appendLittleEndian(length, data.size(), 8);
  std::string out = length;
  appendLittleEndian(out, maskCrc32c(crc32c(length)), 4);
  out += data;
  appendLittleEndian(out, maskCrc32c(crc32c(data)), 4);
  return out;
}

std::string eventFileName(std::int64_t unixTime, const std::string& suffix) {
  static std::atomic<long long> opened{0};
  char time[32];
  std::snprintf(time, sizeof time, "%010lld", static_cast<long long>(unixTime));
  return "events.out.tfevents." + std::string(time) + "." + hostName() + "." + std::to_string(::getpid()) + "." +
         std::to_string(opened++) + suffix;
}

double wallTimeNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

EventFileWriter::EventFileWriter(const std::string& folder, EventFileOptions options) : options_(std::move(options)) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw std::runtime_error("cannot create the TensorBoard log folder '" + folder + "': " + ec.message());
  const double now = wallTimeNow();
  path_ = (std::filesystem::path(folder) / eventFileName(static_cast<std::int64_t>(now), options_.filenameSuffix)).string();
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw std::runtime_error(systemError("cannot create the TensorBoard event file", path_));
  lastFlush_ = std::chrono::steady_clock::now();
  try {
    add(fileVersionEvent(now, 0));
    if (options_.purgeStep) {
      add(fileVersionEvent(now, *options_.purgeStep));
      add(sessionStartEvent(now, *options_.purgeStep));
    }
    flush();
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
}

EventFileWriter::~EventFileWriter() {
  try {
    close();
  } catch (...) {
    // A destructor must not throw; close() is called explicitly where the error matters.
  }
}

void EventFileWriter::add(const std::string& event) {
  if (!file_) throw std::runtime_error("the TensorBoard event file '" + path_ + "' is closed");
  waiting_.push_back(event);
  const double sinceFlush = std::chrono::duration<double>(std::chrono::steady_clock::now() - lastFlush_).count();
  if (static_cast<int>(waiting_.size()) >= options_.maxQueue || sinceFlush >= options_.flushSeconds) flush();
}

void EventFileWriter::addScalars(std::int64_t step, const std::vector<Scalar>& scalars) {
  if (!scalars.empty()) add(scalarsEvent(wallTimeNow(), step, scalars));
}

void EventFileWriter::addText(std::int64_t step, const std::string& tag, const std::string& text) {
  add(textEvent(wallTimeNow(), step, tag, text));
}

void EventFileWriter::flush() {
  if (!file_) return;
  for (const std::string& event : waiting_) {
    const std::string record = tfRecord(event);
    if (std::fwrite(record.data(), 1, record.size(), file_) != record.size())
      throw std::runtime_error(systemError("cannot write the TensorBoard event file", path_));
  }
  waiting_.clear();
  if (std::fflush(file_) != 0) throw std::runtime_error(systemError("cannot write the TensorBoard event file", path_));
  lastFlush_ = std::chrono::steady_clock::now();
}

void EventFileWriter::close() {
  if (!file_) return;
  std::string flushError;
  try {
    flush();
  } catch (const std::exception& e) {
    flushError = e.what();
  }
  const int closed = std::fclose(file_);  // closed even when the flush failed
  file_ = nullptr;
  if (!flushError.empty()) throw std::runtime_error(flushError);
  if (closed != 0) throw std::runtime_error(systemError("cannot close the TensorBoard event file", path_));
}

}  // namespace sinter::io::tensorboard
