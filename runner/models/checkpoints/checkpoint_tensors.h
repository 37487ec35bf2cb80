#pragma once
// Moving a module's tensors in and out of a single-file checkpoint under a key prefix, with every
// missing key and wrong shape reported together.
#include <torch/torch.h>

#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

// A checkpoint that does not hold the model asked for: the message names the file and lists the
// problems (missing keys, wrong shapes, or the family the file looks like instead).
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs every step, collecting the CheckpointErrors they throw, and throws them together (one
// message a line), so a file's problems with each of its models are reported at once.
void collectCheckpointErrors(const std::vector<std::function<void()>>& steps);

// "model family" hints for a file that does not hold what was asked: "" when nothing is recognised.
std::string describeCheckpointFamily(const io::SafetensorsFile& file);

// The shape of prefix+key, or a CheckpointError naming the file, the key and the model.
std::vector<int64_t> requireShape(const io::SafetensorsFile& file, const std::string& prefix, const std::string& key,
                                  const std::string& modelName);

// Every N among the keys that start "<prefix><blocks>.N." and end with `suffix`: the blocks that hold such a key.
std::set<int64_t> indexedBlocks(const io::SafetensorsFile& file, const std::string& prefix, const std::string& blocks,
                                const std::string& suffix);
// 1 + the highest of them (0 when there are none): how many blocks a file holds.
int64_t countIndexedBlocks(const io::SafetensorsFile& file, const std::string& prefix, const std::string& blocks,
                           const std::string& suffix);

// Why a stored tensor cannot fill `target` for its dtype: a float weight stored as an integer or
// bool type (its bytes would be taken for numbers they are not); "" when it can. Names the key
// and both dtypes.
std::string dtypeRefusal(const std::string& key, const std::string& storedDtype, const torch::Tensor& target);

// Copies every parameter and buffer of module from prefix+<its name> (converting dtype; the module
// keeps its own dtype and device). Throws CheckpointError listing all missing or misshapen keys
// and dtypes the module cannot hold there (dtypeRefusal), having copied nothing. A stored shape differing only by trailing 1-sized dims is accepted (VAE
// attention weights stored as Linear [c, c] instead of 1x1 conv [c, c, 1, 1]).
void loadModuleFromCheckpoint(torch::nn::Module& module, const io::SafetensorsFile& file, const std::string& prefix,
                              const std::string& modelName);

// The module's parameters and buffers as checkpoint entries, keys prefixed.
std::vector<std::pair<std::string, torch::Tensor>> moduleCheckpointTensors(const torch::nn::Module& module,
                                                                           const std::string& prefix);

}  // namespace sinter::models
