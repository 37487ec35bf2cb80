#pragma once
// safetensors: an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
// shape and [begin, end) byte range in the data section, then the raw little-endian data.
// The reader maps the file and validates everything before handing out a tensor; the writer
// writes atomically (temp file, fsync, rename).
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sinter::io {

// Every problem with a safetensors file: the message names the file and what is wrong.
class SafetensorsError : public std::runtime_error {
 public:
  SafetensorsError(const std::string& path, const std::string& what);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The file's dtype names (as the Python library spells them), their sizes and torch equivalents.
int64_t safetensorsDtypeSize(const std::string& dtype);  // -1: not a safetensors dtype
// The torch type for a dtype name, or nullopt where this libtorch has none (e.g. F8 on 1.13).
std::optional<torch::ScalarType> safetensorsDtypeToTorch(const std::string& dtype);
// The dtype name for a torch type; throws std::invalid_argument for types safetensors lacks.
std::string torchToSafetensorsDtype(torch::ScalarType type);

struct TensorInfo {
  std::string storedKey;  // the key as written in the file (may contain "_orig_mod.")
  std::string dtype;      // "F32", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0;     // byte offsets relative to the start of the data section
  uint64_t end = 0;
  int64_t numel() const;
};

// Keys saved from a torch.compile'd Python model carry "_orig_mod."; we read them without it.
std::string stripOrigMod(const std::string& key);

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;

  const std::string& path() const { return path_; }
  std::vector<std::string> keys() const;  // sorted, "_orig_mod." removed
  bool has(const std::string& key) const;
  bool hasKeyStartingWith(const std::string& start) const;  // among keys()
  const TensorInfo& info(const std::string& key) const;  // throws SafetensorsError if absent
  // A CPU tensor viewing the mapping (copy-on-write, kept alive by the tensor), or a copy where
  // the data is not aligned for its type.
  torch::Tensor tensor(const std::string& key) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  struct Mapping;
  std::string path_;
  std::shared_ptr<Mapping> mapping_;
  std::map<std::string, TensorInfo> entries_;
  std::map<std::string, std::string> metadata_;
};

// Writes tensors (any device; copied to the CPU one at a time) atomically. Entries are laid out
// as the Python library does: by dtype (widest first), then by name. "_orig_mod." is removed.
void writeSafetensors(const std::string& path,
                      const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// For files too large to hold twice: the header is written from the declared entries, then
// produce(i) (i indexes `entries`) is called once per entry, in file order, and must return a
// tensor of exactly that dtype and shape. Only one produced tensor needs to be alive at a time.
struct TensorDeclaration {
  std::string key;
  torch::ScalarType dtype;
  std::vector<int64_t> shape;
};
void writeSafetensorsStreaming(const std::string& path, const std::vector<TensorDeclaration>& entries,
                               const std::map<std::string, std::string>& metadata,
                               const std::function<torch::Tensor(size_t index)>& produce);

}  // namespace sinter::io
