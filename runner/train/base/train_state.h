#pragma once
// save_state / resume: a folder per state, named as sd-scripts names them (<output_name>-state,
// <output_name>-step%08d-state, <output_name>-%06d-state), holding
//   network.safetensors    the LoRA weights (kohya names, fp32)
//   optimizer.safetensors  AdamW's step, lrs, exp_avg, exp_avg_sq
//   rng.safetensors        generator states ("cpu", "device", ...)
//   ema.safetensors        the EMA of the trained weights (ema_decay), only where the run keeps one
//   train_state.json       format/version, counters, scheduler and data position (the caller's)
// The folder is written under a temporary name and renamed into place; the previous state of the
// same name is removed only once the new one is complete.
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sinter::train {

class TrainStateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string lastStateFolderName(const std::string& outputName);                 // "<name>-state"
std::string stepStateFolderName(const std::string& outputName, int64_t step);    // "<name>-step00000100-state"
std::string epochStateFolderName(const std::string& outputName, int64_t epoch);  // "<name>-000001-state"

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

struct TrainState {
  NamedTensors network;
  NamedTensors optimizer;
  NamedTensors rng;
  NamedTensors ema;  // empty: the state has no EMA (optim/weight_ema.h)
  nlohmann::json progress = nlohmann::json::object();  // global_step, epoch, data position, ...
};

// The generator's state as a CPU byte tensor, and back (CPU and CUDA generators alike).
torch::Tensor generatorState(const at::Generator& generator);
void setGeneratorState(at::Generator& generator, const torch::Tensor& state);

void saveTrainState(const std::string& folder, const TrainState& state);
// A missing folder, a missing or corrupt file, or another format is a TrainStateError naming it.
TrainState loadTrainState(const std::string& folder);
// train_state.json alone (format and version checked), for checks before anything loads.
nlohmann::json loadTrainStateProgress(const std::string& folder);

// Lookup helper: the tensor named `key` in `tensors`, or a TrainStateError naming `what`.
const torch::Tensor& requireTensor(const NamedTensors& tensors, const std::string& key, const std::string& what);

}  // namespace sinter::train
