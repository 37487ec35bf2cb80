#include "core/saved_train_state.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/ascii_text.h"

namespace sinter {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxStateJsonBytes = 1 << 20;  // a train_state.json is a few hundred bytes

bool allDigits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// What follows "<output_name>-" in the runner's state folder names: "state", "step%08d-state"
// (steps, a stop, a requested save) or "%06d-state" (epochs).
bool isStateFolderTail(const std::string& tail) {
  if (tail == "state") return true;
  if (!endsWith(tail, "-state")) return false;
  const std::string number = tail.substr(0, tail.size() - 6);
  if (number.rfind("step", 0) == 0) return number.size() >= 12 && allDigits(number.substr(4));
  return number.size() >= 6 && allDigits(number);
}

// The folder's global_step when it holds a Sinter training state of the version this build reads
// (one the runner would refuse is not offered).
std::optional<long long> stateStep(const fs::path& folder) {
  const fs::path file = folder / "train_state.json";
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec || size > kMaxStateJsonBytes) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", std::string()) != kTrainStateFormat ||
      doc.value("version", 0) != kTrainStateVersion)
    return std::nullopt;
  const auto step = doc.find("global_step");
  if (step == doc.end() || !step->is_number_integer()) return std::nullopt;
  return step->get<long long>();
}

}  // namespace

std::optional<SavedTrainState> findLastSavedTrainState(const std::string& outputDir, const std::string& outputName) {
  std::error_code ec;
  fs::directory_iterator it(outputDir, ec);
  if (ec) return std::nullopt;
  std::optional<SavedTrainState> best;
  fs::file_time_type bestTime{};
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    // A folder being written or swapped out (".tmp-<pid>", ".old-<pid>") does not end in -state.
    if (!endsWith(name, "-state") || !entry.is_directory(ec)) continue;
    if (!outputName.empty() &&
        (name.compare(0, outputName.size() + 1, outputName + "-") != 0 || !isStateFolderTail(name.substr(outputName.size() + 1))))
      continue;
    const std::optional<long long> step = stateStep(entry.path());
    if (!step) continue;
    const fs::file_time_type written = fs::last_write_time(entry.path() / "train_state.json", ec);
    if (!best || *step > best->step || (*step == best->step && written > bestTime)) {
      best = SavedTrainState{entry.path().string(), *step};
      bestTime = written;
    }
  }
  return best;
}

}  // namespace sinter
