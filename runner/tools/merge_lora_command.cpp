#include "tools/merge_lora_command.h"

#include <spdlog/spdlog.h>

#include <set>

#include "core/exit_codes.h"
#include "io/safetensors.h"
#include "network/lora_file.h"
#include "network/lora_metadata.h"
#include "network/python_format.h"
#include "train/methods/embedding_file.h"
#include "train/methods/pivotal_embeddings.h"
#include "tools/bundled_embeddings.h"
#include "tools/checkpoint_lora_layout.h"
#include "tools/lora_merge.h"
#include "tools/lora_merge_inputs.h"
#include "tools/tool_files.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

namespace {

using network::Metadata;

struct CheckpointFile {
  std::string role, flag, path, saveTo;  // role: "model", "clip_l", "clip_g", "t5xxl"
};

// Each LoRA module's name that matched in none of the files, per LoRA: a warning, or, for a LoRA
// that matched nothing at all, an error before anything is written.
void checkMatches(const std::vector<LoraToMerge>& loras, const std::vector<std::map<std::string, LoraFileModule>>& modules,
                  const std::set<std::pair<size_t, std::string>>& matched, const std::string& checkpoints) {
  for (size_t i = 0; i < loras.size(); ++i) {
    if (modules[i].empty()) {  // embeddings alone (written apart) or nothing at all
      if (loras[i].embeddings.empty()) throw std::invalid_argument(loras[i].path + ": it holds no LoRA module to merge");
      continue;
    }
    std::vector<std::string> missing;
    for (const auto& [name, module] : modules[i])
      if (!matched.count({i, name})) missing.push_back(name);
    if (missing.size() == modules[i].size())
      throw std::invalid_argument(loras[i].path + ": none of its " + std::to_string(missing.size()) + " modules (such as " +
                                  missing.front() + ") names a weight of " + checkpoints + "; is it a LoRA for another model?");
    if (!missing.empty())
      spdlog::warn("{}: {} of its {} modules name no weight of {} and are skipped (as sd-scripts skips them), such as {}",
                   loras[i].path, missing.size(), modules[i].size(), checkpoints, missing.front());
  }
}

// A bundled embedding as the embedding file textual inversion writes (train/methods/embedding_file.h:
// its rows as stored, atomically), beside `output` as pivotal tuning names its files apart
// (<output stem>_<token>.safetensors); its modelspec.* says the checkpoint's architecture and the
// LoRA it came from.
void writeEmbeddingApart(const BundledEmbedding& e, const std::string& output, const network::ModelSpecBasics& checkpoint,
                         bool noMetadata) {
  const std::string path = train::pivotalEmbeddingFilePath(output, e.token);
  Metadata metadata;
  if (!noMetadata) {
    network::ModelSpecBasics basics = checkpoint;
    if (!basics.architecture.empty()) basics.architecture += "/textual-inversion";
    basics.implementation = "https://github.com/Stability-AI/generative-models";  // sai_model_spec's rule for textual inversion
    metadata = network::toolModelSpec(basics, false, e.token, mergedFromTitles({e.path}), network::unixTimeNow());
  }
  train::writeEmbeddingFile(path, e.embeddingFileTensors(), std::nullopt, metadata);
  spdlog::info("the embedding {} bundled in {} cannot go into a checkpoint: written apart as {}", e.describe(), e.path, path);
}

int mergeIntoCheckpoints(const ToolFlags& flags, const std::vector<LoraToMerge>& loras, torch::Dtype mergeDtype,
                         torch::Dtype saveDtype, const torch::Device& device) {
  std::vector<CheckpointFile> files;
  const std::string model = flags.value("sd_model").value_or(flags.valueOr("flux_model", ""));
  if (!model.empty()) files.push_back({"model", flags.value("sd_model") ? "--sd_model" : "--flux_model", model, flags.valueOr("save_to", "")});
  for (const std::string role : {"clip_l", "clip_g", "t5xxl"}) {  // FLUX's and SD 3.x's text encoders given apart
    const std::string path = flags.valueOr(role, ""), out = flags.valueOr(role + "_save_to", "");
    if (path.empty() != out.empty())
      throw std::invalid_argument("--" + role + " and --" + role + "_save_to go together (the merged " + role + " is written apart)");
    if (!path.empty()) files.push_back({role, "--" + role, path, out});
  }
  for (const CheckpointFile& f : files) {
    if (f.saveTo.empty()) throw std::invalid_argument("--save_to: the merged checkpoint's file is required");
    requireSafetensorsPath(f.role == "model" ? "--save_to" : "--" + f.role + "_save_to", f.saveTo, true);
  }
  // The family is the checkpoint's, or for text encoders alone the one that reads them.
  std::vector<CheckpointForLora> opened;
  for (const CheckpointFile& f : files)
    opened.push_back(openCheckpointForLora(f.flag, f.path, f.role, opened.empty() ? nullptr : opened.front().family));

  std::vector<std::map<std::string, LoraFileModule>> modules;
  for (const LoraToMerge& lora : loras) {
    spdlog::info("loading: {}", lora.path);
    modules.push_back(readLoraFileModules(lora.tensors, lora.path, mergeDtype));
  }
  std::vector<LoraModulesToMerge> toMerge;
  for (size_t i = 0; i < loras.size(); ++i) toMerge.push_back({&modules[i], loras[i].ratio, loras[i].lbw ? &*loras[i].lbw : nullptr});

  // Every file planned before any is written: a LoRA that fits none of them loses nothing.
  std::vector<CheckpointMergePlan> plans;
  std::set<std::pair<size_t, std::string>> matched;
  std::string names;
  for (size_t i = 0; i < files.size(); ++i) {
    plans.push_back(planCheckpointMerge(opened[i].slots, toMerge));
    matched.insert(plans.back().matched.begin(), plans.back().matched.end());
    names += (names.empty() ? "" : " or ") + files[i].path;
  }
  checkMatches(loras, modules, matched, names);
  // A checkpoint has no place for an embedding: each bundled one is written apart beside the output.
  const std::vector<BundledEmbedding> embeddings = carriedEmbeddings(loras);

  for (size_t i = 0; i < files.size(); ++i) {
    const CheckpointFile& f = files[i];
    Metadata metadata;
    // flux_merge_lora.py writes the text encoders without metadata; the checkpoint gets modelspec.*.
    if (f.role == "model" && !flags.has("no_metadata")) {
      std::vector<std::string> from{f.path};
      for (const LoraToMerge& lora : loras) from.push_back(lora.path);
      metadata = network::toolModelSpec(opened[i].layout.checkpointModelSpec, false, fileStem(f.saveTo), mergedFromTitles(from), network::unixTimeNow());
    }
    spdlog::info("merging {} module(s) into {} of {}'s tensors; saving to {}", plans[i].matched.size(), plans[i].byKey.size(),
                 f.path, f.saveTo);
    writeMergedCheckpoint(opened[i].file, f.saveTo, plans[i], mergeDtype, saveDtype, device, metadata);
    spdlog::info("saved {}", f.saveTo);
  }
  for (const BundledEmbedding& e : embeddings)
    writeEmbeddingApart(e, files.front().saveTo, opened.front().layout.checkpointModelSpec, flags.has("no_metadata"));
  return kExitOk;
}

int mergeIntoLora(const ToolFlags& flags, const std::vector<LoraToMerge>& loras, torch::Dtype mergeDtype, torch::Dtype saveDtype) {
  const std::string saveTo = flags.valueOr("save_to", "");
  if (saveTo.empty()) throw std::invalid_argument("--save_to: the merged LoRA's file is required");
  requireSafetensorsPath("--save_to", saveTo, true);
  for (const LoraToMerge& lora : loras) spdlog::info("loading: {}", lora.path);
  // merge_lora.py's merge_lora_models stops at a bundle_emb key (KeyError): the bundled embeddings
  // are carried unchanged here (each token once), as svd_merge_lora carries them.
  const std::vector<BundledEmbedding> embeddings = carriedEmbeddings(loras);
  spdlog::info("merging...");
  MergedLora merged = mergeLoraFiles(loras, mergeDtype, flags.has("concat"), flags.has("shuffle"));
  spdlog::info("merged model: dim {}, alpha {}", merged.dims, merged.alphas);
  for (auto& [key, tensor] : merged.tensors)
    if (tensor.is_floating_point()) tensor = tensor.to(saveDtype);
  for (auto& kv : bundledEmbeddingTensors(embeddings)) merged.tensors.push_back(std::move(kv));

  const Metadata metadata = mergedLoraMetadata(loras, merged.dims, merged.alphas, flags.has("no_metadata"), saveTo);
  io::writeSafetensors(saveTo, merged.tensors, metadata);
  spdlog::info("saved {}", saveTo);
  return kExitOk;
}

}  // namespace

int runMergeLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("merge_lora"));
  if (flags.has("diffusers"))
    throw std::invalid_argument("--diffusers: FLUX transformers in diffusers' layout are not read by this build; BFL's layout "
                                "(flux1-dev.safetensors, as sd-scripts trains it) is");
  const torch::Dtype mergeDtype = network::savePrecisionDtype(flags.valueOr("precision", "float"));
  const torch::Dtype saveDtype =
      flags.value("save_precision") ? network::savePrecisionDtype(*flags.value("save_precision")) : mergeDtype;
  const torch::Device device =
      toolDevice(flags.value("device") ? "--device" : "--working_device", flags.value("device").value_or(flags.valueOr("working_device", "cpu")));
  if (flags.value("loading_device") || flags.has("mem_eff_load_save"))
    spdlog::info("--loading_device / --mem_eff_load_save: not needed here: a checkpoint is read mapped and written one tensor at a time");
  if (flags.has("v2")) spdlog::info("--v2: not needed here: the checkpoint's family is read from its keys");

  const std::vector<LoraToMerge> loras = lorasToMerge(flags);
  const bool intoCheckpoint =
      flags.value("sd_model") || flags.value("flux_model") || flags.value("clip_l") || flags.value("clip_g") || flags.value("t5xxl");
  if (intoCheckpoint && (flags.has("concat") || flags.has("shuffle")))
    throw std::invalid_argument("--concat and --shuffle make one LoRA of several; with a checkpoint the LoRAs are merged into it");
  return intoCheckpoint ? mergeIntoCheckpoints(flags, loras, mergeDtype, saveDtype, device) : mergeIntoLora(flags, loras, mergeDtype, saveDtype);
}

}  // namespace sinter::tools
