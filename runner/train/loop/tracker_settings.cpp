#include "train/loop/tracker_settings.h"

#include <toml.hpp>

#include <cmath>
#include <vector>

#include "train/base/run_errors.h"

namespace sinter::train {

namespace {

// The TOML file's first error line: toml11's messages go on with an excerpt of the file.
std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// log_tracker_config's [tensorboard] table into `file`. accelerate passes the table to
// SummaryWriter as keyword arguments, so its keys are SummaryWriter's; a key SummaryWriter does not
// take is an error there too.
void applyTensorboardTable(const toml::value& table, const std::string& path, io::tensorboard::EventFileOptions& file) {
  auto where = [&](const std::string& key) { return "log_tracker_config '" + path + "': [tensorboard] " + key; };
  for (const auto& [key, v] : table.as_table()) {
    if (key == "flush_secs") {
      if (!v.is_integer() && !v.is_floating()) throw InputError(where(key) + " must be a number of seconds");
      const double s = v.is_integer() ? static_cast<double>(v.as_integer()) : v.as_floating();
      if (!(s >= 0) || !std::isfinite(s)) throw InputError(where(key) + " must be 0 or more seconds");
      file.flushSeconds = s;
    } else if (key == "max_queue") {
      if (!v.is_integer() || v.as_integer() < 1 || v.as_integer() > 1000000)
        throw InputError(where(key) + " must be a whole number of events from 1 to 1000000");
      file.maxQueue = static_cast<int>(v.as_integer());
    } else if (key == "filename_suffix") {
      if (!v.is_string()) throw InputError(where(key) + " must be a string");
      const std::string suffix = v.as_string().str;
      if (suffix.find('/') != std::string::npos || suffix.find('\0') != std::string::npos)
        throw InputError(where(key) + " '" + suffix + "' must not hold '/': it is appended to the file name");
      file.filenameSuffix = suffix;
    } else if (key == "purge_step") {
      if (!v.is_integer() || v.as_integer() < 0) throw InputError(where(key) + " must be a step, 0 or more");
      file.purgeStep = v.as_integer();
    } else if (key == "comment") {
      // SummaryWriter appends it to a folder name it makes up, only when it is given none; the run
      // always names the folder, so it changes nothing there either.
      if (!v.is_string()) throw InputError(where(key) + " must be a string");
    } else {
      throw InputError(where(key) + " is not a setting of the TensorBoard writer (it takes flush_secs, max_queue, filename_suffix, "
                                    "purge_step and comment)");
    }
  }
}

io::tensorboard::EventFileOptions readTrackerConfig(const std::string& path) {
  toml::value root;
  try {
    root = toml::parse(path);
  } catch (const std::exception& e) {
    throw InputError("log_tracker_config '" + path + "': " + firstLine(e.what()));
  }
  io::tensorboard::EventFileOptions file;
  for (const auto& [name, v] : root.as_table()) {
    if (name == "wandb") continue;  // W&B's init kwargs: checkTrackerOptions says they are not used
    if (name != "tensorboard")
      throw InputError("log_tracker_config '" + path + "': '" + name +
                       "' is not a tracker of this build: it takes a [tensorboard] table (and a [wandb] table, which is not used)");
    if (!v.is_table()) throw InputError("log_tracker_config '" + path + "': 'tensorboard' must be a table ([tensorboard])");
    applyTensorboardTable(v, path, file);
  }
  return file;
}

// sd-scripts' prepare_accelerator: TensorBoard needs a folder; W&B is not in this build.
void checkLogWith(const Config& config) {
  const std::string with = config.getString("log_with");
  if (with == "wandb")
    throw InputError("log_with = \"wandb\": this build has no W&B client and sends nothing over the network; log to TensorBoard "
                     "instead (log_with = \"tensorboard\" with a logging_dir), and open the folder with `tensorboard --logdir`");
  if ((with == "tensorboard" || with == "all") && config.getString("logging_dir").empty())
    throw InputError("log_with = \"" + with + "\" needs logging_dir, the folder TensorBoard's logs go into");
}

bool logsToTensorboard(const Config& config) {
  const std::string with = config.getString("log_with");
  return !config.getString("logging_dir").empty() && (with.empty() || with == "tensorboard" || with == "all");
}

}  // namespace

TrackerSettings TrackerSettings::fromConfig(const Config& config) {
  checkLogWith(config);
  TrackerSettings s;
  s.tensorboard = logsToTensorboard(config);
  s.loggingDir = config.getString("logging_dir");
  s.prefix = config.getString("log_prefix");
  s.trackerName = config.getString("log_tracker_name");
  if (s.trackerName.empty())  // each script's init_trackers name
    s.trackerName = config.tab() == Tab::LoRA                ? "network_train"
                    : config.tab() == Tab::TextualInversion ? "textual_inversion"
                                                            : "finetuning";
  if (const std::string path = config.getString("log_tracker_config"); !path.empty()) s.file = readTrackerConfig(path);
  s.logConfig = config.getBool("log_config");
  return s;
}

std::string runLogFolderName(const std::string& prefix, std::time_t start) {
  std::tm local{};
  localtime_r(&start, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &local);
  return prefix + stamp;
}

void checkTrackerOptions(const Config& config, PreflightChecks& k) {
  const std::string with = config.getString("log_with");
  k.parse("log_with", [&] { checkLogWith(config); });
  if (with == "all") k.warning("log_with", "log_with = \"all\": W&B is not in this build; the run logs to TensorBoard only");
  const std::string path = config.getString("log_tracker_config");
  // A file that is not there is reported by the path checks.
  if (!path.empty() && isFile(path) && k.parse("log_tracker_config", [&] { readTrackerConfig(path); }) && toml::parse(path).contains("wandb"))
    k.warning("log_tracker_config", "log_tracker_config '" + path + "': the [wandb] table is for W&B, which is not in this build; it is not used");
  if (logsToTensorboard(config) || with == "wandb") return;
  std::vector<std::string> unused;
  for (const char* option : {"log_prefix", "log_tracker_name", "log_tracker_config"})
    if (!config.getString(option).empty()) unused.push_back(option);
  if (config.getBool("log_config")) unused.push_back("log_config");
  for (const std::string& option : unused)
    k.warning(option, option + " is set but nothing is logged: set logging_dir for a TensorBoard log");
}

}  // namespace sinter::train
