#pragma once
// DreamBooth and fine-tune (sd-scripts' sdxl_train.py and flux_train.py): the family's denoiser,
// and with train_text_encoder its text encoders (SDXL), trained whole: in the models' own dtype
// (fp32 with mixed_precision "no", bf16/fp16 with full_bf16/full_fp16), or under mixed precision
// as float32 masters computed through bf16/fp16 copies (train/base/compute_copies.h), and saved as the family's
// single-file checkpoint (SDXL: all four models, the trained ones updated; FLUX: the transformer in
// BFL's layout) in save_precision, with modelspec.* metadata.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "network/lora_metadata.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// Why this build cannot train the config's full-weight run, or nullopt: fused_backward_pass with
// fp32 master weights (mixed precision without full_bf16/full_fp16), fp8_base (frozen float8
// weights), blocks_to_swap without fused_backward_pass (a swapped block's weights are stepped in
// the backward pass, while it is on the device), train_text_encoder where the family trains its
// denoiser alone (FamilyRegistration::fullWeightsTextEncoderRefusal: FLUX).
struct Refusal {
  std::string key, message;
};
// `config`'s values have parsed (run_preflight.cpp checks them first).
std::optional<Refusal> fullWeightsRefusal(const Config& config);

class FullWeightsMethod : public MethodPart {
 public:
  explicit FullWeightsMethod(const RunContext& run);

  void attach(FamilyPart& family) override;
  bool trainsTextEncoders() const override { return trainTextEncoders_; }
  std::vector<OptimizerGroup> parameterGroups() const override { return groups_; }
  void describeRun(const data::Dataset& dataset, long long batchesPerEpoch, long long numEpochs, long long maxTrainSteps,
                   int gradientAccumulationSteps) override;
  void saveModel(const std::string& path, const SaveStamp& stamp) override;
  NamedTensors stateTensors() const override;
  ComputeCopies* computeCopies() override { return copies_.get(); }
  void loadStateTensors(const NamedTensors& tensors, const std::string& source) override;
  void trainedWeightsChanged() override;

 private:
  const Config& config_;
  FamilyPart* family_ = nullptr;
  bool trainTextEncoders_ = false;
  bool float32Masters_ = false;
  torch::Dtype computeDtype_;
  std::unique_ptr<ComputeCopies> copies_;  // float32 masters: the models compute through these
  std::vector<OptimizerGroup> groups_;
  NamedTensors trained_;  // "<model label>/<parameter name>" -> the parameter
  network::LoraRunFacts facts_;
  void useFloat32Masters(FamilyPart& family);
  // Waits for swapped blocks' updated weights to reach their host masters (before reading them).
  void settleSwappedWeights() const;
  std::optional<torch::Dtype> saveDtype_;  // save_precision; unset: as trained
};

}  // namespace sinter::train
