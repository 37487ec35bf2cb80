#pragma once
// The run's TensorBoard log (tracker_settings.h), with the tags and steps sd-scripts logs:
//   LoRA (train_network.py), at each step: loss/current, loss/average, lr/<group> and, for
//     D-Adaptation and Prodigy, lr/d*lr/<group> (groups as sd-scripts names them: unet,
//     textencoder, "unet plus", unet_block<n>...); at each epoch's end, at step = the epoch:
//     loss/epoch_average.
//   Full weights (sdxl_train.py, flux_train.py): loss, lr/unet, lr/text_encoder<n>, lr/d*lr/...;
//     loss/epoch at each epoch's end.
// log_config: the config as hyperparameters (the HPARAMS tab, in a folder named by the time
// beside the event file, as SummaryWriter.add_hparams writes them) and as text (config/text_summary).
// The learning rates are the scheduler's after the step (lr_scheduler.get_last_lr()), as logged
// there. Only rank 0 writes; a write that fails is reported once and ends the log, not the run.
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "io/tfevents_writer.h"
#include "train/base/event_sink.h"
#include "train/loop/tracker_settings.h"

namespace sinter::train {

// One optimizer group's learning rate as a step logs it.
struct GroupRate {
  std::string label;  // the optimizer group's ("unet", "textencoder plus", "Text Encoder 1", ...)
  double lr = 0;
  std::optional<double> d;  // D-Adaptation's and Prodigy's step size estimate
};

class TrainingLog {
 public:
  // Opens <logging_dir>/<log_prefix><start time>/<tracker name>/events.out.tfevents... and, with
  // log_config, writes the config there; nothing is opened where `settings` log nothing or
  // `writes` is false (not rank 0). Throws InputError naming logging_dir when it cannot be made.
  TrainingLog(const TrackerSettings& settings, const Config& config, bool writes, EventSink& events, std::time_t start);

  bool active() const { return writer_ != nullptr; }
  const std::string& folder() const { return folder_; }

  // `figures`: the method's figures of the step by sd-scripts' tags (scale_weight_norms' max_norm/...).
  void step(long long step, double loss, double averageLoss, const std::vector<GroupRate>& rates,
            const std::vector<std::pair<std::string, double>>& figures = {});
  // A validation pass: loss/validation/step_average and step_divergence (against the training
  // loss's average) at the step, or loss/validation/epoch_* at step = the epoch, as train_network.py.
  void validation(bool epochEnd, long long stepOrEpoch, double loss, double trainingAverage);
  void epochEnd(long long epoch, double averageLoss);
  // Writes what is waiting (the writer flushes every flush_secs on its own).
  void flush();
  void close();

 private:
  void write(const std::function<void()>& what);

  bool network_ = true;  // LoRA's tags, else full weights'
  std::string folder_;
  EventSink& events_;
  std::unique_ptr<io::tensorboard::EventFileWriter> writer_;
};

// The config as log_config writes it (sd-scripts' get_sanitized_config_or_none): every option of
// the run's method and family with a value, secrets and paths left out, in registry order.
std::vector<std::pair<std::string, Value>> sanitizedConfig(const Config& config);

}  // namespace sinter::train
