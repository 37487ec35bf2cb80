#pragma once
// Textual inversion embeddings as A1111/Forge and ComfyUI load them, and as sd-scripts' textual
// inversion scripts write and read them: a safetensors file with one [vectors, width] tensor per
// text encoder, "emb_params" for SD 1.x/2.x (768 / 1024 wide), "clip_l" (768) and "clip_g" (1280)
// for SDXL; the metadata is sd-scripts' modelspec.*.
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinter::train {

// Writes the tensors (any device) atomically, cast to `dtype` where it is set.
void writeEmbeddingFile(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                        std::optional<torch::Dtype> dtype, const std::map<std::string, std::string>& metadata);

// What an encoder expects of the file: its key and its rows' shape [vectors, width].
struct ExpectedEmbedding {
  std::string key;
  std::vector<int64_t> shape;
};

// How a file is read: the option its messages start with, and whether an SD 1.x/2.x file may hold
// its one tensor under another name (sd-scripts' `weights` takes the file's first; the checkpoint
// grid takes the files a run saved, so it asks for the run's own keys).
struct EmbeddingFileReading {
  std::string option = "weights";
  bool anyNameForOne = true;
};

// The file's tensors for `expected`, in order, float32 on the CPU. A 1-D [width] tensor is one
// vector, as sd-scripts reads it. With one expected key (SD 1.x/2.x) and `anyNameForOne`, a file
// without it whose only tensor is another's is read as that tensor. Throws InputError naming the
// file, the key and both shapes where one differs, and the file's keys where one is missing;
// .pt/.ckpt files are refused (never unpickled).
std::vector<torch::Tensor> readEmbeddingFile(const std::string& path, const std::vector<ExpectedEmbedding>& expected,
                                             const EmbeddingFileReading& reading = {});

}  // namespace sinter::train
