#pragma once
// LoRA's part of a run (sd-scripts' train_network.py): adapters on the family's target Linears
// (networks.lora for SDXL), sd-scripts' parameter groups, kohya files with ss_* and modelspec.*
// metadata, and the network's tensors in a training state.
#include <memory>
#include <optional>

#include "network/lora_max_norm.h"
#include "network/lora_metadata.h"
#include "network/lora_network.h"
#include "network/lycoris_step_deltas.h"
#include "train/methods/pivotal_embeddings.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// An option's value as sd-scripts' metadata writes it (None where unset or not an option here).
nlohmann::ordered_json configOptionAsJson(const Config& config, const std::string& key);

// network_dim, network_alpha, network_dropout and network_args (device and dtype are the run's).
network::LoraNetworkOptions loraNetworkOptions(const Config& config);

// Compute copies of every adapter's lora_down and lora_up, wired into the adapters, when the models
// compute in another dtype than the network's (fp32 LoRA under bf16/fp16 mixed precision); else null.
std::unique_ptr<ComputeCopies> loraComputeCopies(network::LoraNetwork& network, torch::Dtype computeDtype);
// The network's parameter groups (sd-scripts' prepare_optimizer_params) as the optimizer takes them.
std::vector<OptimizerGroup> loraOptimizerGroups(const std::vector<network::LoraParamGroup>& groups);
// How the update keeps LyCORIS's step deltas (network/lycoris_step_deltas.h), once started.
StepDerivedWeights lycorisStepDerivedWeights(network::LycorisStepDeltas& deltas);

// The config's LoRA options, typed.
struct LoraMethodOptions {
  network::LoraNetworkOptions network;  // dim, alpha, dropout, args (device and dtype from the run)
  bool trainUnet = true;                // !network_train_text_encoder_only
  bool trainTextEncoders = true;        // !network_train_unet_only
  std::string weightsFile;              // network_weights
  bool dimFromWeights = false;
  bool partialWeights = false;          // network_weights_partial: network_weights may fill only some modules
  std::optional<double> textEncoderLr, unetLr;
  std::optional<double> t5xxlLr;     // text_encoder_lr's second value (FLUX's T5-XXL, SD 3's CLIP-G and T5-XXL)
  std::optional<double> sd3T5xxlLr;  // its third (SD 3's T5-XXL alone)
  double learningRate = 0;  // learning_rate (the registry holds its default)
  std::string optimizerArgsText;  // as ss_optimizer shows it
  std::string optimizerClass;     // "torch.optim.adamw.AdamW"
  std::optional<std::string> savePrecision;
  bool noMetadata = false;
  std::optional<double> scaleWeightNorms;  // scale_weight_norms

  static LoraMethodOptions fromConfig(const Config& config);
};

class LoraMethod : public MethodPart {
 public:
  explicit LoraMethod(const RunContext& run);

  void attach(FamilyPart& family) override;
  // Pivotal tuning's embeddings train through the text encoders even where their LoRA does not.
  bool trainsTextEncoders() const override { return options_.trainTextEncoders || embeddings_ != nullptr; }
  std::vector<OptimizerGroup> parameterGroups() const override;
  ComputeCopies* computeCopies() override { return copies_.get(); }
  std::function<void()> afterOptimizerStep() override;
  // LyCORIS's LoHa, LoKr and DoRA deltas built once per step (network/lycoris_step_deltas.h).
  std::optional<StepDerivedWeights> derivePerStep() override;
  torch::Tensor stepFigures() const override { return maxNorm_ ? maxNorm_->figures() : torch::Tensor(); }
  std::vector<std::string> stepFigureNames() const override;
  void describeRun(const data::Dataset& dataset, long long batchesPerEpoch, long long numEpochs, long long maxTrainSteps,
                   int gradientAccumulationSteps) override;
  void saveModel(const std::string& path, const SaveStamp& stamp) override;
  NamedTensors stateTensors() const override;
  void loadStateTensors(const NamedTensors& tensors, const std::string& source) override;
  void trainedWeightsChanged() override;
  std::vector<data::CaptionReplacement> samplePromptReplacements() const override;
  std::vector<std::string> filesBeside(const std::string& modelPath) const override;

 private:
  const Config& config_;
  LoraMethodOptions options_;
  std::unique_ptr<network::LoraNetwork> network_;
  torch::Dtype computeDtype_;  // the models' activations
  std::unique_ptr<ComputeCopies> copies_;
  std::unique_ptr<network::LoraMaxNorm> maxNorm_;
  std::unique_ptr<network::LycorisStepDeltas> stepDeltas_;
  network::LoraRunFacts facts_;
  network::Metadata ssMetadata_;
  torch::Dtype saveDtype_;
  std::unique_ptr<PivotalEmbeddings> embeddings_;  // the config's `embeddings`; null: none
};

}  // namespace sinter::train
