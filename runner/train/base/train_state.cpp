#include "train/base/train_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/saved_train_state.h"
#include "io/safetensors.h"

namespace sinter::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = kTrainStateFormat;  // core/saved_train_state.h: the app reads them too
constexpr int kVersion = kTrainStateVersion;

std::string formatted(const char* pattern, const std::string& name, int64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, static_cast<long long>(n));
  return name + buf;
}

void writeTextFileSynced(const fs::path& path, const std::string& text) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw TrainStateError("cannot write " + path.string());
    out << text;
    out.flush();
    if (!out) throw TrainStateError("cannot write " + path.string() + " (disk full?)");
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

NamedTensors readAll(const fs::path& path) {
  try {
    io::SafetensorsFile file(path.string());
    NamedTensors out;
    for (const std::string& key : file.keys()) out.emplace_back(key, file.tensor(key).clone());
    return out;
  } catch (const std::exception& e) {  // SafetensorsError, or libtorch's for a dtype it cannot make
    throw TrainStateError("resume: " + path.string() + ": " + e.what());
  }
}

}  // namespace

std::string lastStateFolderName(const std::string& outputName) { return outputName + "-state"; }
std::string stepStateFolderName(const std::string& outputName, int64_t step) {
  return formatted("-step%08lld-state", outputName, step);
}
std::string epochStateFolderName(const std::string& outputName, int64_t epoch) {
  return formatted("-%06lld-state", outputName, epoch);
}

torch::Tensor generatorState(const at::Generator& generator) {
  at::Generator handle = generator;  // shares the generator; mutex() is not const
  std::lock_guard<std::mutex> lock(handle.mutex());
  return handle.get_state().clone();
}

void setGeneratorState(at::Generator& generator, const torch::Tensor& state) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state.to(torch::kUInt8).contiguous());
}

const torch::Tensor& requireTensor(const NamedTensors& tensors, const std::string& key, const std::string& what) {
  for (const auto& kv : tensors)
    if (kv.first == key) return kv.second;
  throw TrainStateError("training state: " + what + " has no '" + key + "'");
}

void saveTrainState(const std::string& folder, const TrainState& state) {
  const fs::path final(folder);
  const fs::path temp = final.string() + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(temp, ec);
  fs::create_directories(temp, ec);
  if (ec) throw TrainStateError("cannot create " + temp.string() + ": " + ec.message());
  try {
    io::writeSafetensors((temp / "network.safetensors").string(), state.network);
    io::writeSafetensors((temp / "optimizer.safetensors").string(), state.optimizer);
    io::writeSafetensors((temp / "rng.safetensors").string(), state.rng);
    if (!state.ema.empty()) io::writeSafetensors((temp / "ema.safetensors").string(), state.ema);
    nlohmann::json doc = state.progress;
    doc["format"] = kFormat;
    doc["version"] = kVersion;
    writeTextFileSynced(temp / "train_state.json", doc.dump(2) + "\n");
  } catch (const TrainStateError&) {
    fs::remove_all(temp, ec);
    throw;
  } catch (const std::exception& e) {
    fs::remove_all(temp, ec);
    throw TrainStateError("cannot write the training state " + folder + ": " + e.what());
  }
  // Swap in: the old state survives until the new one has its final name.
  const fs::path old = final.string() + ".old-" + std::to_string(::getpid());
  const bool hadOld = fs::exists(final);
  if (hadOld) {
    fs::rename(final, old, ec);
    if (ec) throw TrainStateError("cannot replace " + folder + ": " + ec.message());
  }
  fs::rename(temp, final, ec);
  if (ec) {
    if (hadOld) fs::rename(old, final, ec);
    throw TrainStateError("cannot move the training state into " + folder);
  }
  if (hadOld) fs::remove_all(old, ec);
}

nlohmann::json loadTrainStateProgress(const std::string& folder) {
  const fs::path file = fs::path(folder) / "train_state.json";
  std::ifstream in(file);
  if (!in) throw TrainStateError("resume: " + file.string() + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json progress;
  try {
    progress = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw TrainStateError("resume: " + file.string() + " is not valid JSON: " + e.what());
  }
  if (!progress.is_object() || !progress.contains("format") || progress["format"] != kFormat)
    throw TrainStateError("resume: " + file.string() + " is not a Sinter training state");
  if (!progress.contains("version") || progress["version"] != kVersion)
    throw TrainStateError("resume: " + file.string() + " has version " + (progress.contains("version") ? progress["version"].dump() : "none") +
                          ", this build reads " + std::to_string(kVersion));
  return progress;
}

TrainState loadTrainState(const std::string& folder) {
  const fs::path dir(folder);
  if (!fs::is_directory(dir)) throw TrainStateError("resume: " + folder + " is not a training state folder");
  for (const char* name : {"train_state.json", "network.safetensors", "optimizer.safetensors", "rng.safetensors"})
    if (!fs::exists(dir / name)) throw TrainStateError("resume: " + (dir / name).string() + " is missing");
  TrainState state;
  state.progress = loadTrainStateProgress(folder);
  state.network = readAll(dir / "network.safetensors");
  state.optimizer = readAll(dir / "optimizer.safetensors");
  state.rng = readAll(dir / "rng.safetensors");
  if (fs::exists(dir / "ema.safetensors")) state.ema = readAll(dir / "ema.safetensors");
  return state;
}

}  // namespace sinter::train
