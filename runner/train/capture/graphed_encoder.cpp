#include "train/capture/graphed_encoder.h"

#include <spdlog/spdlog.h>

#include "compile/cuda_graph.h"
#include "train/capture/state_snapshot.h"
#include "train/capture/tensor_signature.h"

namespace sinter::train {

namespace {

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors) out.push_back(t.clone());
  return out;
}

}  // namespace

GraphedEncoder::GraphedEncoder(std::string label, torch::Device device, Pass pass, bool capture, int cacheLimit,
                               std::vector<at::Generator> generators)
    : label_(std::move(label)),
      device_(device),
      pass_(std::move(pass)),
      capture_(capture && device.is_cuda() && compile::cudaGraphsCompiledIn()),
      cacheLimit_(cacheLimit),
      generators_(std::move(generators)) {}

GraphedEncoder::~GraphedEncoder() = default;

std::vector<torch::Tensor> GraphedEncoder::operator()(const std::vector<torch::Tensor>& inputs) {
  torch::NoGradGuard noGrad;
  const std::string signature = tensorSignature(inputs);
  auto it = graphs_.find(signature);
  if (it == graphs_.end() && capture_ && !failed_.count(signature) && static_cast<int>(graphs_.size()) < cacheLimit_) {
    Captured c;
    c.inputs = clones(inputs);
    // The warm-up pass draws random numbers (the VAE samples its latents): put them back after.
    StateSnapshot generators({}, generators_);
    try {
      const compile::CapturedGraph* pool = graphs_.empty() ? nullptr : graphs_.begin()->second.graph.get();
      c.graph = std::make_unique<compile::CapturedGraph>(device_, [&] { c.outputs = pass_(c.inputs); }, /*warmups=*/1,
                                                         generators_, pool);
      generators.restore();
      it = graphs_.emplace(signature, std::move(c)).first;
      spdlog::info("{}: captured a CUDA graph for inputs {}", label_, signature);
    } catch (const std::exception& e) {
      generators.restore();
      failed_.insert(signature);
      spdlog::warn("{}: inputs {} are not captured and run eagerly: {}", label_, signature, e.what());
    }
  }
  if (it == graphs_.end()) return pass_(inputs);
  Captured& c = it->second;
  for (size_t i = 0; i < inputs.size(); ++i) c.inputs[i].copy_(inputs[i]);
  c.graph->replay();
  return clones(c.outputs);  // the next replay overwrites the graph's outputs
}

}  // namespace sinter::train
