#include "train/methods/applied_lora.h"

#include "core/model_family_detect.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "train/base/run_errors.h"
#include "train/methods/lora_method.h"

namespace sinter::train {

namespace {

// What a LoRA file's metadata says it was trained on (sd-scripts' ss_base_model_version, else
// modelspec.architecture), for a refusal; "" when it says nothing.
std::string trainedOn(const network::Metadata& metadata) {
  for (const char* key : {"ss_base_model_version", "modelspec.architecture"})
    if (auto it = metadata.find(key); it != metadata.end() && !it->second.empty()) return std::string(key) + " = " + it->second;
  return "";
}

// "a, b, c and 12 more".
std::string someOf(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += " and " + std::to_string(names.size() - 3) + " more";
  return out;
}

}  // namespace

bool isKohyaLoraFile(const std::string& path) {
  return hasKohyaLoraModules(io::SafetensorsFile(path).keys());
}

AppliedLora::AppliedLora(const RunContext& run, FamilyPart& family, const std::string& path, const std::vector<std::string>& keysReadApart) {
  const LoraMethodOptions options = LoraMethodOptions::fromConfig(run.config);
  network::LoraNetworkOptions networkOptions = options.network;
  networkOptions.dtype = run.precision.loraDtype;
  networkOptions.device = run.device;
  std::map<std::string, torch::Tensor> tensors;
  network::Metadata metadata;
  try {
    tensors = network::readLoraTensors(path);
    metadata = network::readLoraMetadata(path);
    for (const std::string& key : keysReadApart) tensors.erase(key);
    // LyCORIS's module shapes come from its own arguments (it takes no ranks from a file).
    if (!networkOptions.args.lycoris) networkOptions.moduleRanks = network::readLoraModuleRanks(tensors);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  network_ = std::make_unique<network::LoraNetwork>(networkOptions);
  try {
    for (const TrainableModel& model : family.trainableModels()) {
      if (model.textEncoder ? !options.trainTextEncoders : !options.trainUnet) continue;
      network_->attach(model.loraRule, *model.module);
    }
    const network::LoraLoadReport report = network_->loadStateDict(tensors, path);
    if (report.loadedModules == 0)
      throw InputError("none of its modules is a module of this run's network (" + someOf(report.unexpected) +
                       "): it is a LoRA of another model family or base model, or of other network settings (network_module, "
                       "network_train_unet_only)");
    warnings_ = report.warnings;
    for (std::string& w : network::checkWeightsMatch(report, network_->modules().size(), path, /*partialAllowed=*/false))
      warnings_.push_back(std::move(w));
  } catch (const std::exception& e) {
    network_->detach();
    const std::string says = trainedOn(metadata), ours = family.facts().baseModelVersion;
    throw InputError("--sample_grid: '" + path + "': " + userMessage(e) +
                     (says.empty() ? "" : " (the file's metadata says " + says + "; this run's model is " + ours + ")"));
  }
  // Sampling is eval mode: the network's dropouts do nothing; the adapters cast their weights to the
  // models' dtype where they are used.
  network_->setTraining(false);
}

AppliedLora::~AppliedLora() { network_->detach(); }

}  // namespace sinter::train
