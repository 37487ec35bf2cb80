#include "train/loop/training_log.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

#include "core/registry.h"
#include "train/base/run_errors.h"

namespace sinter::train {

namespace {

// sd-scripts' append_lr_to_logs names full-weight groups unet, text_encoder1, text_encoder2.
std::string fullWeightsGroupName(const std::string& label) {
  const std::string textEncoder = "Text Encoder ";
  return label.rfind(textEncoder, 0) == 0 ? "text_encoder" + label.substr(textEncoder.size()) : "unet";
}

std::string markdownCell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Value>> sanitizedConfig(const Config& config) {
  // train_util.get_sanitized_config_or_none leaves out the keys and the paths that locate the
  // user's files; every path option is left out here (Sinter's own, such as clip_tokenizer, too).
  static const std::set<std::string> secrets{"wandb_api_key", "huggingface_token"};
  const Tab tab = config.tab();
  const std::optional<Family> family = config.family();
  std::vector<std::pair<std::string, Value>> out;
  for (const OptionSpec& spec : optionRegistry()) {
    if (spec.secret || secrets.count(spec.key) || spec.type == OptionType::Path) continue;
    if (!spec.appliesToTab(tab) || (family && !spec.appliesToFamily(*family))) continue;
    if (Value v = config.get(spec.key); !isUnset(v)) out.emplace_back(spec.key, std::move(v));
  }
  return out;
}

namespace {

// A list as accelerate passes one on: its text ("[a, b]").
std::string shown(const Value& v) {
  const auto* list = std::get_if<StringList>(&v);
  if (!list) return asString(v);
  std::string items;
  for (const std::string& item : *list) items += (items.empty() ? "" : ", ") + item;
  return "[" + items + "]";
}

std::string configTable(const std::vector<std::pair<std::string, Value>>& values) {
  std::string table = "| option | value |\n| --- | --- |\n";
  for (const auto& [key, v] : values) table += "| " + markdownCell(key) + " | " + markdownCell(shown(v)) + " |\n";
  return table;
}

std::vector<io::tensorboard::HParam> configHparams(const std::vector<std::pair<std::string, Value>>& values) {
  std::vector<io::tensorboard::HParam> out;
  for (const auto& [key, v] : values) {
    if (const auto* b = std::get_if<bool>(&v)) out.push_back({key, *b});
    else if (std::holds_alternative<long long>(v) || std::holds_alternative<double>(v)) out.push_back({key, asDouble(v)});
    else out.push_back({key, shown(v)});
  }
  return out;
}

}  // namespace

TrainingLog::TrainingLog(const TrackerSettings& settings, const Config& config, bool writes, EventSink& events, std::time_t start)
    : network_(config.tab() == Tab::LoRA), events_(events) {
  if (!settings.tensorboard || !writes) return;
  folder_ = (std::filesystem::path(settings.loggingDir) / runLogFolderName(settings.prefix, start) / settings.trackerName).string();
  try {
    writer_ = std::make_unique<io::tensorboard::EventFileWriter>(folder_, settings.file);
  } catch (const std::exception& e) {
    throw InputError(std::string("logging_dir: ") + e.what());
  }
  spdlog::info("TensorBoard log: {} (tensorboard --logdir {})", writer_->path(), settings.loggingDir);
  if (!settings.logConfig) return;
  // accelerate's store_init_configuration: SummaryWriter.add_hparams, which writes into a folder
  // named by the time beside the scalars; and the same as text, readable in the Text tab.
  const std::vector<std::pair<std::string, Value>> values = sanitizedConfig(config);
  write([&] { writer_->addText(0, "config/text_summary", configTable(values)); });
  write([&] {
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "%.6f", io::tensorboard::wallTimeNow());
    io::tensorboard::EventFileWriter hparams((std::filesystem::path(folder_) / stamp).string(), {});
    for (const std::string& event : io::tensorboard::hparamsEvents(io::tensorboard::wallTimeNow(), configHparams(values))) hparams.add(event);
    hparams.close();
  });
}

void TrainingLog::write(const std::function<void()>& what) {
  if (!writer_) return;
  try {
    what();
  } catch (const std::exception& e) {
    const std::string message = std::string(e.what()) + "; the run goes on without its TensorBoard log";
    spdlog::warn("{}", message);
    events_.emit(events::Warning{message});
    writer_.reset();
  }
}

void TrainingLog::step(long long step, double loss, double averageLoss, const std::vector<GroupRate>& rates,
                       const std::vector<std::pair<std::string, double>>& figures) {
  write([&] {
    std::vector<io::tensorboard::Scalar> scalars;
    if (network_) scalars = {{"loss/current", static_cast<float>(loss)}, {"loss/average", static_cast<float>(averageLoss)}};
    else scalars = {{"loss", static_cast<float>(loss)}};
    for (const GroupRate& r : rates) {
      const std::string name = network_ ? r.label : fullWeightsGroupName(r.label);
      scalars.push_back({"lr/" + name, static_cast<float>(r.lr)});
      if (r.d) scalars.push_back({"lr/d*lr/" + name, static_cast<float>(*r.d * r.lr)});
    }
    for (const auto& [tag, value] : figures) scalars.push_back({tag, static_cast<float>(value)});
    writer_->addScalars(step, scalars);
  });
}

void TrainingLog::validation(bool epochEnd, long long stepOrEpoch, double loss, double trainingAverage) {
  const std::string kind = epochEnd ? "epoch" : "step";
  write([&] {
    writer_->addScalars(stepOrEpoch, {{"loss/validation/" + kind + "_average", static_cast<float>(loss)},
                                      {"loss/validation/" + kind + "_divergence", static_cast<float>(loss - trainingAverage)}});
  });
}

void TrainingLog::epochEnd(long long epoch, double averageLoss) {
  write([&] { writer_->addScalars(epoch, {{network_ ? "loss/epoch_average" : "loss/epoch", static_cast<float>(averageLoss)}}); });
}

void TrainingLog::flush() {
  write([&] { writer_->flush(); });
}

void TrainingLog::close() {
  write([&] { writer_->close(); });
  writer_.reset();
}

}  // namespace sinter::train
