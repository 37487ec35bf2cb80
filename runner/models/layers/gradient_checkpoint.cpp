#include "models/layers/gradient_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/version.h>

namespace sinter::models {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct BlockHolder : torch::CustomClassHolder {
  CheckpointedBlock block;
  bool preserveRngState;
  bool offloadInputs;
  BlockHolder(CheckpointedBlock b, bool preserveRng, bool offload)
      : block(std::move(b)), preserveRngState(preserveRng), offloadInputs(offload) {}
};

// A device tensor's copy in (pinned, where CUDA has it) host memory; host tensors as they are.
torch::Tensor toHost(const torch::Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  torch::Tensor host = torch::empty(t.sizes(), t.options().device(torch::kCPU).pinned_memory(true));
  host.copy_(t, /*non_blocking=*/true);
  return host;
}

// CUDA autocast's state, which the recomputation runs under as the forward did (the per-device
// calls replaced the GPU-only ones in PyTorch 2.4; the old ones warn on every call there).
#if (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cudaAutocastEnabled() { return at::autocast::is_autocast_enabled(at::kCUDA); }
at::ScalarType cudaAutocastDtype() { return at::autocast::get_autocast_dtype(at::kCUDA); }
void setCudaAutocast(bool enabled, at::ScalarType dtype) {
  at::autocast::set_autocast_enabled(at::kCUDA, enabled);
  at::autocast::set_autocast_dtype(at::kCUDA, dtype);
}
#else
bool cudaAutocastEnabled() { return at::autocast::is_enabled(); }
at::ScalarType cudaAutocastDtype() { return at::autocast::get_autocast_gpu_dtype(); }
void setCudaAutocast(bool enabled, at::ScalarType dtype) {
  at::autocast::set_enabled(enabled);
  at::autocast::set_autocast_gpu_dtype(dtype);
}
#endif

// The generators a block may draw from: the CPU one and, for CUDA inputs, that device's.
std::vector<at::Generator> generatorsFor(at::TensorList inputs) {
  std::vector<at::Generator> gens = {at::detail::getDefaultCPUGenerator()};
  for (const torch::Tensor& t : inputs)
    if (t.defined() && !t.is_cpu()) {
      gens.push_back(at::globalContext().defaultGenerator(t.device()));
      break;
    }
  return gens;
}

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  // inputs as a TensorList: the autograd machinery treats only Tensor and TensorList arguments as
  // differentiable inputs (a std::vector would be taken for a constant).
  static torch::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<BlockHolder> holder, at::TensorList inputs) {
    c10::List<bool> needsGrad;
    c10::List<at::Tensor> rngStates;
    for (const torch::Tensor& t : inputs) needsGrad.push_back(t.defined() && t.requires_grad());
    if (holder->preserveRngState)
      for (at::Generator& g : generatorsFor(inputs)) rngStates.push_back(g.get_state());
    ctx->saved_data["block"] = c10::IValue::make_capsule(holder);
    ctx->saved_data["needs_grad"] = needsGrad;
    ctx->saved_data["rng"] = rngStates;
    ctx->saved_data["autocast"] = cudaAutocastEnabled();
    ctx->saved_data["autocast_dtype"] = cudaAutocastDtype();
    if (holder->offloadInputs) {
      // Host copies, kept outside autograd's saved variables (which would pin the device tensors).
      // A block's inputs share one device; the host copies go back to it.
      c10::List<at::Tensor> host;
      std::string device = "cpu";
      for (const torch::Tensor& t : inputs) {
        host.push_back(toHost(t));
        if (t.defined() && !t.is_cpu()) device = t.device().str();
      }
      ctx->saved_data["host_inputs"] = host;
      ctx->saved_data["device"] = device;
    } else {
      ctx->save_for_backward(inputs.vec());
    }
    return holder->block(inputs.vec());  // grad mode is off here: no activations kept
  }

  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    auto holder = c10::static_intrusive_pointer_cast<BlockHolder>(ctx->saved_data["block"].toCapsule());
    const c10::List<bool> needsGrad = ctx->saved_data["needs_grad"].toBoolList();
    variable_list saved;
    if (holder->offloadInputs) {
      const c10::List<at::Tensor> host = ctx->saved_data["host_inputs"].toTensorList();
      const torch::Device device(ctx->saved_data["device"].toStringRef());
      for (size_t i = 0; i < host.size(); ++i) {
        const torch::Tensor t = host.get(i);
        saved.push_back(t.defined() ? t.to(device, /*non_blocking=*/true) : t);
      }
    } else {
      saved = ctx->get_saved_variables();
    }
    variable_list inputs;
    for (size_t i = 0; i < saved.size(); ++i)
      inputs.push_back(saved[i].defined() ? saved[i].detach().requires_grad_(needsGrad[i]) : saved[i]);

    // Recompute with the forward's RNG state, then put the current state back.
    std::vector<at::Generator> gens;
    if (holder->preserveRngState) gens = generatorsFor(inputs);
    const c10::List<at::Tensor> forwardStates = ctx->saved_data["rng"].toTensorList();
    std::vector<at::Tensor> currentStates;
    for (size_t i = 0; i < gens.size() && i < forwardStates.size(); ++i) {
      currentStates.push_back(gens[i].get_state());
      gens[i].set_state(forwardStates[i]);
    }
    torch::Tensor output;
    {
      const bool wasAutocast = cudaAutocastEnabled();
      const at::ScalarType wasDtype = cudaAutocastDtype();
      setCudaAutocast(ctx->saved_data["autocast"].toBool(), ctx->saved_data["autocast_dtype"].toScalarType());
      torch::AutoGradMode gradOn(true);
      output = holder->block(inputs);
      setCudaAutocast(wasAutocast, wasDtype);
    }
    for (size_t i = 0; i < currentStates.size(); ++i) gens[i].set_state(currentStates[i]);

    if (output.requires_grad()) torch::autograd::backward({output}, {gradOutputs[0]});
    variable_list grads = {torch::Tensor()};  // for the block holder
    for (size_t i = 0; i < inputs.size(); ++i)
      grads.push_back(needsGrad[i] && inputs[i].defined() ? inputs[i].grad() : torch::Tensor());
    return grads;
  }
};

}  // namespace

torch::Tensor runCheckpointed(CheckpointedBlock block, const std::vector<torch::Tensor>& inputs, bool preserveRngState,
                              bool offloadInputs) {
  return CheckpointFunction::apply(c10::make_intrusive<BlockHolder>(std::move(block), preserveRngState, offloadInputs),
                                   at::TensorList(inputs));
}

}  // namespace sinter::models
