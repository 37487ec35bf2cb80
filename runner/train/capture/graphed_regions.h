#pragma once
// Per-block CUDA graphs (compile_fullgraph=false, DESIGN.md §6): each region of a model (an SDXL
// input, middle or output block) replays its forward pass and its backward pass from two graphs
// per input signature, as torch.cuda.make_graphed_callables does; the rest of the step runs
// eagerly around them. A region's graphs are captured the first time it runs with gradients, with
// its signature: eager warm-up passes on copies of the inputs, then the forward graph; its backward
// pass runs eagerly that once (autograd runs it on its device thread, inside the step's backward
// pass, where capturing fails), and the step calls captureBackwards() when its backward pass is
// over. So graphs are captured in the order they replay (forwards in order, backwards in reverse)
// and can share one memory pool, as PyTorch's recipe requires.
//
// The backward graph returns the gradients of the region's inputs to autograd and adds those of
// the weights it trains into their gradient buffers itself (one multi-tensor add), so the
// optimizer sees the same gradients as after an eager backward pass. An input that needs grad (the
// U-Net's context when the text encoders train) gets its gradient from every region that reads it,
// summed by autograd as in an eager pass; a region that reads no such input and trains nothing
// (SDXL's input_blocks.0, conv_in, in a LoRA run) replays its forward graph alone. A region's
// activations are kept from its forward replay to its backward replay, as an eager pass keeps
// them: gradient checkpointing's recomputation is not captured (autograd's engine, called inside
// a capture on a forward pass recorded in the same capture, touches the legacy stream), so
// checkpointed blocks stay eager (sdxl_unet_regions.h).
//
// A region that cannot be captured runs eagerly from then on; the cause is reported once.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sinter::compile {
class CapturedGraph;
}

namespace sinter::train {

// What a region's backward pass differentiates by, from `out` = body(inputs) recorded with
// gradients: the inputs its autograd graph reaches (their indices, ascending), and the other leaves
// it accumulates into, which are what the region trains. An input that requires grad but that the
// output does not read is not among them.
struct RegionLeaves {
  std::vector<size_t> inputs;
  std::vector<torch::Tensor> weights;
};
RegionLeaves regionLeaves(const torch::Tensor& out, const std::vector<torch::Tensor>& inputs);

class GraphedRegions {
 public:
  using Body = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

  // `cacheLimit`: captured signatures per region at most. `generators`: those the regions draw
  // from (LoRA dropout), registered with every graph and restored after each warm-up.
  GraphedRegions(torch::Device device, int cacheLimit, std::vector<at::Generator> generators, int warmups = 3);
  ~GraphedRegions();
  GraphedRegions(const GraphedRegions&) = delete;
  GraphedRegions& operator=(const GraphedRegions&) = delete;

  // `body(inputs)` as the region `name`: replayed from its graphs when gradients are recorded and
  // the signature is captured (or can be), else eagerly (uncapturable regions, the cache limit
  // reached, passes without gradients unless reuseForInference finds their shapes captured). Equal to body(inputs), with the same gradients.
  torch::Tensor run(const std::string& name, const std::vector<torch::Tensor>& inputs, const Body& body);

  // Passes without gradients (sample images) replay a region's captured forward graph where its
  // inputs have a captured signature's shapes, when `on`; else they run eagerly. Only for models
  // whose regions draw no random numbers (no LoRA dropout): a training graph would apply it.
  void reuseForInference(bool on) { reuseForInference_ = on; }
  long long inferenceReplays() const { return inferenceReplays_; }

  // Captures the backward graphs of the regions captured in this step (after its backward pass).
  void captureBackwards();

  // Seconds spent warming up and capturing since the last call.
  double takeCaptureSeconds();
  // "region inputs: why" for each signature that could not be captured, since the last call.
  std::vector<std::string> takeFailures();
  long long replayed() const { return replayed_; }
  long long eager() const { return eager_; }

  struct Entry;  // one region's graphs for one signature (graphed_regions.cpp)

 private:
  // `key`: "name (inputs signature)".
  Entry* capture(const std::string& name, const std::string& key, const std::vector<torch::Tensor>& inputs, const Body& body);
  void captureBackward(Entry& entry);

  torch::Device device_;
  int cacheLimit_;
  std::vector<at::Generator> generators_;
  int warmups_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // by key: region and signature
  std::map<std::string, Entry*> byShape_;                  // by region and shapeSignature
  std::map<std::string, int> signaturesPerRegion_;
  std::set<std::string> failed_;  // keys whose capture failed (reported once)
  std::vector<std::string> newFailures_;
  std::vector<Entry*> pendingBackwards_;  // in the order their backward passes ran
  const compile::CapturedGraph* poolOwner_ = nullptr;  // the first graph: every region's graphs share its pool
  double captureSeconds_ = 0;
  long long replayed_ = 0, eager_ = 0, inferenceReplays_ = 0;
  bool reuseForInference_ = false;
};

}  // namespace sinter::train
