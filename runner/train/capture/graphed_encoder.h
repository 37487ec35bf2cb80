#pragma once
// An encoder's forward pass without gradients (the VAE or the text encoders in a caching pass),
// replayed from a CUDA graph captured for each input signature (shapes and dtypes) up to a
// limit: compile_vae and compile_text_encoders. Beyond the limit, where a capture fails, or
// without CUDA graphs (a CPU build or device), it runs eagerly. Capturing first runs the pass once
// on the real inputs (then undone: the generators it draws from are put back), so the outputs are
// the eager pass's, and replays draw fresh random numbers as eager calls would.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace sinter::compile {
class CapturedGraph;
}

namespace sinter::train {

class GraphedEncoder {
 public:
  using Pass = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>& inputs)>;

  // `capture` false: every call is eager (the plan did not ask, or cannot capture here).
  GraphedEncoder(std::string label, torch::Device device, Pass pass, bool capture, int cacheLimit,
                 std::vector<at::Generator> generators = {});
  ~GraphedEncoder();

  // The pass's outputs for `inputs` (device tensors), as new tensors the caller owns.
  std::vector<torch::Tensor> operator()(const std::vector<torch::Tensor>& inputs);

 private:
  struct Captured {
    std::vector<torch::Tensor> inputs, outputs;  // the graph's static memory
    std::unique_ptr<compile::CapturedGraph> graph;
  };
  std::string label_;
  torch::Device device_;
  Pass pass_;
  bool capture_;
  int cacheLimit_;
  std::vector<at::Generator> generators_;
  std::map<std::string, Captured> graphs_;
  std::set<std::string> failed_;
};

}  // namespace sinter::train
