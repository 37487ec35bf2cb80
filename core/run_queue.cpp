#include "core/run_queue.h"

#include <filesystem>
#include <sstream>
#include <toml.hpp>

#include "core/atomic_file.h"
#include "core/diagnostics.h"
#include "core/toml_config.h"
#include "core/utf8.h"

namespace sinter {

namespace {

constexpr std::size_t kMaxQueueBytes = 4 << 20;  // thousands of entries; anything near this is not a queue

const char* const kStatusNames[] = {"pending", "running", "done", "failed", "interrupted"};

std::string firstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  const std::string prefix = "[error] ";
  if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
  return line;
}

[[noreturn]] void fail(const std::string& fileName, int line, int column, const std::string& message) {
  throw ConfigError({Diagnostic{Severity::Error, SourceLocation{fileName, line, column}, "", message}});
}

[[noreturn]] void failAt(const toml::value& v, const std::string& fileName, const std::string& message) {
  const toml::source_location loc = v.location();
  fail(fileName, static_cast<int>(loc.line()), static_cast<int>(loc.column()), message);
}

std::string stringValue(const toml::value& v, const std::string& fileName, const std::string& what) {
  if (!v.is_string()) failAt(v, fileName, what + " must be a string");
  return v.as_string().str;
}

std::string runName(std::size_t index) { return "run " + std::to_string(index + 1); }

QueueEntry readEntry(const toml::value& table, std::size_t index, const std::string& fileName) {
  const std::string name = runName(index);
  if (!table.is_table()) failAt(table, fileName, name + ": each [[run]] must be a table");
  QueueEntry entry;
  entry.line = static_cast<int>(table.location().line());
  bool hasConfig = false;
  for (const auto& [key, value] : table.as_table()) {
    if (key == "config") {
      entry.config = stringValue(value, fileName, name + ": config");
      if (entry.config.empty()) failAt(value, fileName, name + ": config is empty");
      hasConfig = true;
    } else if (key == "status") {
      const std::string text = stringValue(value, fileName, name + ": status");
      const auto status = queueStatusFromString(text);
      if (!status)
        failAt(value, fileName, name + ": status \"" + text + "\" is none of pending, running, done, failed, interrupted");
      entry.status = *status;
    } else if (key == "output_dir") {
      entry.outputDir = stringValue(value, fileName, name + ": output_dir");
    } else if (key == "working_dir") {
      entry.workingDir = stringValue(value, fileName, name + ": working_dir");
    } else if (key == "resume") {
      entry.resume = stringValue(value, fileName, name + ": resume");
    } else if (key == "message") {
      entry.message = stringValue(value, fileName, name + ": message");
    } else {
      failAt(value, fileName,
             name + ": unknown key '" + key + "' (a run has config, status, output_dir, working_dir, resume and message)");
    }
  }
  if (!hasConfig) fail(fileName, entry.line, 1, name + ": no config (the run's TOML file: config = \"FILE.toml\")");
  return entry;
}

}  // namespace

const char* toString(QueueStatus status) { return kStatusNames[static_cast<int>(status)]; }

std::optional<QueueStatus> queueStatusFromString(const std::string& text) {
  for (int i = 0; i < 5; ++i)
    if (text == kStatusNames[i]) return static_cast<QueueStatus>(i);
  return std::nullopt;
}

RunQueue parseRunQueue(const std::string& text, const std::string& fileName) {
  if (text.size() > kMaxQueueBytes)
    fail(fileName, 0, 0, "file is too large for a run queue (" + std::to_string(text.size()) + " bytes; the limit is 4 MiB)");
  const Utf8Problem utf8 = checkUtf8(text);
  if (!utf8.valid) fail(fileName, utf8.line, utf8.column, "the file is not valid UTF-8 (byte offset " + std::to_string(utf8.offset) + ")");
  if (text.find('\0') != std::string::npos) fail(fileName, 0, 0, "the file contains NUL bytes; it is not a TOML text file");
  toml::value root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, fileName);
  } catch (const toml::exception& e) {
    fail(fileName, static_cast<int>(e.location().line()), static_cast<int>(e.location().column()),
         "TOML syntax error: " + firstLine(e.what()));
  } catch (const std::exception& e) {
    fail(fileName, 0, 0, "TOML syntax error: " + firstLine(e.what()));
  }

  RunQueue queue;
  for (const auto& [key, value] : root.as_table()) {
    if (key == "on_failure") {
      const std::string mode = stringValue(value, fileName, "on_failure");
      if (mode == "continue") queue.onFailure = QueueOnFailure::Continue;
      else if (mode == "stop") queue.onFailure = QueueOnFailure::Stop;
      else failAt(value, fileName, "on_failure \"" + mode + "\" is neither \"continue\" nor \"stop\"");
    } else if (key == "on_end_command") {
      if (!value.is_array()) failAt(value, fileName, "on_end_command must be a list: the program, then its arguments");
      for (const auto& item : value.as_array()) queue.onEndCommand.push_back(stringValue(item, fileName, "each item of on_end_command"));
      if (!queue.onEndCommand.empty() && queue.onEndCommand.front().empty()) failAt(value, fileName, "on_end_command names no program");
    } else if (key == "run") {
      if (!value.is_array()) failAt(value, fileName, "run must be a list of tables: each entry a [[run]]");
      const auto& runs = value.as_array();
      for (std::size_t i = 0; i < runs.size(); ++i) queue.entries.push_back(readEntry(runs[i], i, fileName));
    } else {
      failAt(value, fileName, "unknown key '" + key + "' (a queue has on_failure, on_end_command and [[run]] entries)");
    }
  }
  return queue;
}

RunQueue loadRunQueueFile(const std::string& path) {
  std::string text;
  try {
    text = readWholeFile(path);
  } catch (const std::exception& e) {
    fail(path, 0, 0, e.what());
  }
  return parseRunQueue(text, path);
}

std::string writeRunQueue(const RunQueue& queue) {
  std::string out = "# A Sinter run queue: the app's Queue panel and `sinter-runner --queue FILE` run its entries in order.\n";
  out += std::string("on_failure = ") + (queue.onFailure == QueueOnFailure::Stop ? "\"stop\"" : "\"continue\"") + "\n";
  if (!queue.onEndCommand.empty()) {
    out += "on_end_command = [";
    for (std::size_t i = 0; i < queue.onEndCommand.size(); ++i) out += (i ? ", " : "") + quoteTomlString(queue.onEndCommand[i]);
    out += "]\n";
  }
  for (const QueueEntry& entry : queue.entries) {
    out += "\n[[run]]\nconfig = " + quoteTomlString(entry.config) + "\n";
    out += std::string("status = \"") + toString(entry.status) + "\"\n";
    if (!entry.outputDir.empty()) out += "output_dir = " + quoteTomlString(entry.outputDir) + "\n";
    if (!entry.workingDir.empty()) out += "working_dir = " + quoteTomlString(entry.workingDir) + "\n";
    if (!entry.resume.empty()) out += "resume = " + quoteTomlString(entry.resume) + "\n";
    if (!entry.message.empty()) out += "message = " + quoteTomlString(entry.message) + "\n";
  }
  return out;
}

void saveRunQueueFile(const std::string& path, const RunQueue& queue) { writeFileAtomically(path, writeRunQueue(queue)); }

std::string resolveQueuePath(const std::string& queueFile, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(queueFile).parent_path() / p).lexically_normal().string();
}

int markInterruptedRuns(RunQueue& queue, const std::string& message) {
  int marked = 0;
  for (QueueEntry& entry : queue.entries) {
    if (entry.status != QueueStatus::Running) continue;
    entry.status = QueueStatus::Interrupted;
    entry.message = message;
    ++marked;
  }
  return marked;
}

std::optional<std::size_t> nextPendingRun(const RunQueue& queue, std::size_t from) {
  for (std::size_t i = from; i < queue.entries.size(); ++i)
    if (queue.entries[i].status == QueueStatus::Pending) return i;
  return std::nullopt;
}

std::string describeQueueEntry(const RunQueue& queue, std::size_t index) {
  const int line = index < queue.entries.size() ? queue.entries[index].line : 0;
  return runName(index) + (line > 0 ? " (line " + std::to_string(line) + ")" : "");
}

}  // namespace sinter
