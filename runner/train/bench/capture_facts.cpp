#include "train/bench/capture_facts.h"

#include <algorithm>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/torchrun_environment.h"
#include "train/base/config_values.h"
#include "train/methods/lora_method.h"
#include "train/optim/adamw.h"
#include "train/optim/fused_backward.h"
#include "train/optim/optimizer_choice.h"
#include "train/parts/family_registration.h"

namespace sinter::train {

compile::CaptureFacts captureFacts(const Config& config, const torch::Device& device, int ranks) {
  compile::CaptureFacts facts;
  facts.cudaDevice = device.is_cuda();
  const LoraMethodOptions lora = LoraMethodOptions::fromConfig(config);
  // What of the text encoders trains, if anything: LoRA's modules in them (unless
  // network_train_unet_only), their full weights (train_text_encoder), new tokens' embedding rows
  // (textual inversion, a LoRA run's embeddings).
  const bool loraInEncoders = config.tab() == Tab::LoRA && lora.trainTextEncoders;
  const bool fullEncoders = trainsFullWeights(config.tab()) && config.getBool("train_text_encoder");
  const bool embeddingRows =
      config.tab() == Tab::TextualInversion || (config.tab() == Tab::LoRA && !config.getList("embeddings").empty());
  const bool textEncodersTrain = loraInEncoders || fullEncoders || embeddingRows;
  // What the plan names as on: AdamW's fused kernel (adamw.h) and LoRA's GEMM epilogue (networks.lora*).
  try {
    if (optimizerSettingsFromConfig(config).type == "AdamW" && fusedAdamWCompiledIn())
      facts.fusedOptimizer = "fused AdamW, one kernel per parameter group";
  } catch (const std::exception&) {
    // A bad optimizer setting is validation's to report; the plan names no fused optimizer.
  }
  facts.loraModules = config.tab() == Tab::LoRA && config.getString("network_module") != "lycoris.kohya";
  if (textEncodersTrain) {
    facts.textEncodersInStep = stagedTextEncodersFor(config);
    std::vector<std::string> parts;
    if (loraInEncoders) parts.push_back("their LoRA modules");
    if (fullEncoders) parts.push_back("their weights");
    if (embeddingRows) parts.push_back("the new tokens' embedding rows");
    for (size_t i = 0; i < parts.size(); ++i) facts.textEncodersTrainedPart += (i ? " and " : "") + parts[i];
  }
  if (textEncodersTrain && facts.textEncodersInStep.empty())
    facts.barriers.push_back("the text encoders train: this family's step encodes its captions outside the staged step "
                             "(set network_train_unet_only, or cache_text_encoder_outputs)");
  if (config.getBool("gradient_checkpointing") && lora.network.dropout > 0.0)
    facts.barriers.push_back("gradient_checkpointing with network_dropout: the recomputed blocks save and restore the random "
                             "state on the host");
  if (!isUnset(config.get("blocks_to_swap")) && config.getInt("blocks_to_swap") > 0) {
    facts.barriers.push_back("blocks_to_swap: the swapped blocks' weights are copied in from host memory on a side stream "
                             "during the step (set blocks_to_swap to 0, or compile_fullgraph off for per-block graphs)");
    facts.regionExclusions.push_back("blocks_to_swap: Linear layers excluded from capture: the swapped blocks run eagerly, their "
                                     "weights streaming from host memory; the other blocks are captured");
  }
  if (config.isSet("multires_noise_iterations"))
    facts.barriers.push_back("multires_noise_iterations: each step draws new sizes for the noise pyramid's levels, as sd-scripts "
                             "does (compile_fullgraph off captures the blocks, with the noise drawn eagerly)");
  if (config.getBool("cpu_offload_checkpointing"))
    facts.barriers.push_back("cpu_offload_checkpointing: the checkpointed blocks' inputs go to host memory and back during the "
                             "step (compile_fullgraph off captures what it can)");
  if (fusedBackwardPassRequested(config)) {
    const std::string why = "fused_backward_pass: the optimizer steps each weight inside autograd's backward pass, where its "
                            "gradient is written (the step runs eagerly, with the fused kernels)";
    facts.barriers.push_back(why);
    facts.regionBarriers.push_back(why);
  }
  // Blocks alone can be captured with trained text encoders (their context is an input that needs
  // grad), not their recomputation (graphed_regions.h): checkpointed blocks stay eager.
  // Several ranks (torchrun's environment; a bad one is reported when the run starts).
  facts.worldSize = std::max(1, ranks);
  if (ranks == 0) try {
      if (const auto env = distributed::readTorchrunEnvironment()) facts.worldSize = env->worldSize;
    } catch (const std::invalid_argument&) {
    }
  if (facts.worldSize > 1) {
    const std::string nccl = distributed::ncclVersion();
    facts.collectives = device.is_cuda() ? (nccl.empty() ? "NCCL" : "NCCL " + nccl) : "Gloo";
    facts.collectivesCapturable = device.is_cuda() && distributed::ncclCapturable(nccl);
  }
  if (config.getBool("gradient_checkpointing") || config.getBool("cpu_offload_checkpointing"))
    facts.regionBarriers.push_back("gradient_checkpointing: a block's recomputation in the backward pass is not captured "
                                   "(compile_fullgraph captures the whole step with it)");
  return facts;
}

}  // namespace sinter::train
