#include "distributed/process_group.h"

#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>

#if SINTER_WITH_C10D
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#if SINTER_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if SINTER_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

namespace sinter::distributed {

bool distributedCompiledIn() { return SINTER_WITH_C10D != 0; }

std::string collectiveBackends() {
  std::string names;
#if SINTER_WITH_GLOO
  names = "gloo";
#endif
#if SINTER_WITH_NCCL
  names += names.empty() ? "nccl" : ", nccl";
#endif
  return names;
}

std::string ncclVersion() {
#if SINTER_WITH_NCCL
  return c10d::getNcclVersion();
#else
  return "";
#endif
}

std::chrono::milliseconds rankTimeout() {
  if (const char* s = std::getenv("SINTER_DISTRIBUTED_TIMEOUT"); s && std::atoi(s) > 0) return std::chrono::seconds(std::atoi(s));
  return std::chrono::minutes(10);
}

bool ncclCapturable(const std::string& version) {
  int major = 0, minor = 0, patch = 0;
  char dot = 0;
  std::istringstream in(version);
  if (!(in >> major >> dot >> minor >> dot >> patch)) return false;
  return std::make_tuple(major, minor, patch) >= std::make_tuple(2, 9, 6);
}

#if SINTER_WITH_C10D

// c10d's collectives: a Backend since PyTorch 2.0, a ProcessGroup before.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

struct ProcessGroup::Impl {
  TorchrunEnvironment env;
  torch::Device device{torch::kCPU};
  std::string backend;
  c10::intrusive_ptr<c10d::Store> store;  // our own keys, apart from the collectives'
  c10::intrusive_ptr<Collectives> collectives;
};

namespace {

std::vector<uint8_t> bytesOf(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string stringOf(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

}  // namespace

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const TorchrunEnvironment& env, torch::Device device, std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->device = device;
  const std::string where = env.masterAddr + ":" + std::to_string(env.masterPort);
  c10::intrusive_ptr<c10d::Store> tcp;
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(env.masterPort);
    options.isServer = env.rank == 0;
    options.numWorkers = static_cast<size_t>(env.worldSize);
    options.waitWorkers = true;
    options.timeout = timeout;
    tcp = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(env.rank) + " of " + std::to_string(env.worldSize) + " could not meet the others at " +
                             where + " (MASTER_ADDR:MASTER_PORT): " + e.what());
  }
  impl->store = c10::make_intrusive<c10d::PrefixStore>("sinter/", tcp);
  const auto collectiveStore = c10::make_intrusive<c10d::PrefixStore>("collectives/", tcp);
  try {
    if (device.is_cuda()) {
#if SINTER_WITH_NCCL
      c10::cuda::set_device(device.index());
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl->collectives = c10::make_intrusive<c10d::ProcessGroupNCCL>(collectiveStore, env.rank, env.worldSize, options);
      impl->backend = "nccl";
#else
      throw std::runtime_error("this build has no NCCL (a CUDA libtorch with c10d's NCCL process group is needed on GPUs)");
#endif
    } else {
#if SINTER_WITH_GLOO
      auto options = c10d::ProcessGroupGloo::Options::create();
      options->timeout = timeout;
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      impl->collectives = c10::make_intrusive<c10d::ProcessGroupGloo>(collectiveStore, env.rank, env.worldSize, options);
      impl->backend = "gloo";
#else
      throw std::runtime_error("this build has no Gloo (c10d's process group for the CPU)");
#endif
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(env.rank) + ": the " + std::string(device.is_cuda() ? "NCCL" : "Gloo") +
                             " process group could not start: " + e.what());
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

PendingCollective ProcessGroup::allreduceSum(torch::Tensor tensor) {
  std::vector<torch::Tensor> tensors{std::move(tensor)};
  c10::intrusive_ptr<c10d::Work> work = impl_->collectives->allreduce(tensors, c10d::AllreduceOptions{});
  return PendingCollective([work, tensors] { work->wait(); });
}

void ProcessGroup::broadcastFromRankZero(const std::vector<torch::Tensor>& tensors) {
  // Flat buffers of one dtype (Gloo takes lists of one dtype and shape only) of up to 256 MiB (a
  // whole model at once would double its memory), on the group's device: weights kept in host
  // memory, such as swapped blocks' masters, travel through it under NCCL.
  constexpr int64_t kChunkBytes = int64_t{256} << 20;
  torch::NoGradGuard noGrad;
  auto send = [&](const std::vector<torch::Tensor>& list) {
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor& t : list) flat.push_back(t.detach().reshape({-1}).to(impl_->device));
    std::vector<torch::Tensor> buffer{torch::cat(flat)};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    impl_->collectives->broadcast(buffer, options)->wait();
    int64_t offset = 0;
    for (torch::Tensor t : list) {
      const int64_t n = t.numel();
      t.detach().copy_(buffer[0].narrow(0, offset, n).view(t.sizes()));
      offset += n;
    }
  };
  std::map<at::ScalarType, std::vector<torch::Tensor>> byType;
  for (const torch::Tensor& t : tensors) byType[t.scalar_type()].push_back(t);
  for (auto& [type, list] : byType) {
    std::vector<torch::Tensor> chunk;
    int64_t bytes = 0;
    for (const torch::Tensor& t : list) {
      chunk.push_back(t);
      bytes += t.numel() * static_cast<int64_t>(t.element_size());
      if (bytes >= kChunkBytes) send(chunk), chunk.clear(), bytes = 0;
    }
    if (!chunk.empty()) send(chunk);
  }
}

void ProcessGroup::barrier() {
  torch::Tensor one = torch::ones({1}, torch::TensorOptions().dtype(torch::kFloat32).device(impl_->device));
  allreduceSum(one).wait();
  if (impl_->device.is_cuda()) one.item<float>();  // the host waits too
}

void ProcessGroup::publish(const std::string& key, const std::string& value) { impl_->store->set(key, bytesOf(value)); }

std::string ProcessGroup::await(const std::string& key) { return stringOf(impl_->store->get(key)); }

void ProcessGroup::forget(const std::string& key) { impl_->store->deleteKey(key); }

std::vector<std::string> ProcessGroup::gatherOnRankZero(const std::string& key, const std::string& value) {
  if (rank() != 0) {
    publish(key + "/" + std::to_string(rank()), value);
    return {};
  }
  std::vector<std::string> all{value};
  for (int r = 1; r < size(); ++r) {
    const std::string k = key + "/" + std::to_string(r);
    all.push_back(await(k));
    forget(k);
  }
  return all;
}

#else  // no c10d in this build

struct ProcessGroup::Impl {
  TorchrunEnvironment env;
  torch::Device device{torch::kCPU};
  std::string backend;
};

namespace {
[[noreturn]] void noDistributedTraining() {
  throw std::runtime_error("this build of sinter-runner has no distributed training: its libtorch lacks c10d's process groups "
                           "(Gloo or NCCL)");
}
}  // namespace

// connect() refuses, so no group exists to call the rest on.
std::unique_ptr<ProcessGroup> ProcessGroup::connect(const TorchrunEnvironment&, torch::Device, std::chrono::milliseconds) {
  noDistributedTraining();
}
PendingCollective ProcessGroup::allreduceSum(torch::Tensor) { noDistributedTraining(); }
void ProcessGroup::broadcastFromRankZero(const std::vector<torch::Tensor>&) { noDistributedTraining(); }
void ProcessGroup::barrier() { noDistributedTraining(); }
void ProcessGroup::publish(const std::string&, const std::string&) { noDistributedTraining(); }
std::string ProcessGroup::await(const std::string&) { noDistributedTraining(); }
void ProcessGroup::forget(const std::string&) { noDistributedTraining(); }
std::vector<std::string> ProcessGroup::gatherOnRankZero(const std::string&, const std::string&) { noDistributedTraining(); }

#endif

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;
int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::size() const { return impl_->env.worldSize; }
const std::string& ProcessGroup::backend() const { return impl_->backend; }
torch::Device ProcessGroup::device() const { return impl_->device; }

}  // namespace sinter::distributed
