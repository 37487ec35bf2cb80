#pragma once
// What a run's options ask of its experiment trackers, read as sd-scripts reads them
// (train_util.prepare_accelerator and init_trackers, accelerate's TensorBoardTracker):
//   logging_dir set, log_with unset or "tensorboard"/"all": a TensorBoard log in
//     <logging_dir>/<log_prefix><YYYYmmddHHMMSS>/<log_tracker_name>/events.out.tfevents...
//   log_tracker_name: default "network_train" (LoRA), "finetuning" (full weights);
//   log_tracker_config: a TOML file of the trackers' init kwargs; its [tensorboard] table goes to
//     the event file writer (SummaryWriter's flush_secs, max_queue, filename_suffix, purge_step);
//   log_config: the training config, paths and secrets left out, written into the log.
// This build has no W&B client: log_with = "wandb" is refused, "all" logs to TensorBoard alone.
#include <ctime>
#include <string>

#include "core/config.h"
#include "io/tfevents_writer.h"
#include "train/parts/preflight_checks.h"

namespace sinter::train {

struct TrackerSettings {
  bool tensorboard = false;  // false: nothing is logged
  std::string loggingDir;
  std::string prefix;       // log_prefix
  std::string trackerName;  // log_tracker_name or the method's default
  io::tensorboard::EventFileOptions file;
  bool logConfig = false;

  // Throws InputError naming the option (and log_tracker_config's file and key) when one is wrong.
  static TrackerSettings fromConfig(const Config& config);
};

// sd-scripts' folder of one run in logging_dir: log_prefix + the local start time, "%Y%m%d%H%M%S".
std::string runLogFolderName(const std::string& prefix, std::time_t start);

// The preflight's errors and warnings on the logging options (run_preflight.h).
void checkTrackerOptions(const Config& config, PreflightChecks& k);

}  // namespace sinter::train
