// The U-Net with its activations channels_last (SdxlUnetImpl::setChannelsLast; on CUDA the fused-kernel
// switch turns it on) against NCHW: the same output and gradients (input, every LoRA's down and up,
// the convolutions' conv_dim LoRA included), the output contiguous NCHW, every block given NHWC
// (the skips' concatenations keep it), the convolution kernels converted and back. In float64, but
// GroupNorm32 computes in float32 whatever the dtype, and the two layouts sum in different orders:
// the random tiny U-Net amplifies that rounding (its gradients are ill-conditioned,
// models_joint_qkv_test.cpp), hence 1e-3.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/layers/conv2d.h"
#include "models/layers/linear.h"
#include "models/unet/sdxl_unet.h"
#include "models/unet/sdxl_unet_blocks.h"

using namespace sinter::models;
using torch::Tensor;

namespace {

double relativeError(const Tensor& got, const Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

// A random nonzero LoRA (up is zero at a run's start; here it must not be, or the down's gradient
// would be zero in both layouts).
std::shared_ptr<LoraAdapter> randomLora(std::vector<int64_t> downShape, std::vector<int64_t> upShape) {
  auto lora = std::make_shared<LoraAdapter>();
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  lora->down = (torch::randn(downShape, f64) * 0.3).requires_grad_(true);
  lora->up = (torch::randn(upShape, f64) * 0.3).requires_grad_(true);
  lora->alpha = 2.0;
  return lora;
}

// LoRA on every Conv2d (kohya's conv_dim: 3x3 and 1x1 kernels) and every Linear, as a LoRA run's
// frozen float64 U-Net; returns the adapters. Not on a ResBlock's emb_layers where its GroupNorm has
// one channel a group: the norm removes the per-channel constant that Linear adds, so its gradient is
// zero but for rounding, which no tolerance relative to itself would pass.
std::vector<std::shared_ptr<LoraAdapter>> attachLoras(SdxlUnet& unet) {
  std::set<const LinearImpl*> normedAway;
  for (const auto& m : unet->modules(/*include_self=*/false))
    if (auto res = std::dynamic_pointer_cast<ResBlockImpl>(m)) {
      const auto emb = res->emb_layers->ptr<LinearImpl>(1);
      if (emb->outFeatures() <= unet->config().normGroups) normedAway.insert(emb.get());
    }
  std::vector<std::shared_ptr<LoraAdapter>> loras;
  for (const auto& m : unet->modules(/*include_self=*/false)) {
    if (auto conv = std::dynamic_pointer_cast<Conv2dImpl>(m)) {
      conv->lora = randomLora({2, conv->inChannels(), conv->kernelSize(), conv->kernelSize()}, {conv->outChannels(), 2, 1, 1});
      loras.push_back(conv->lora);
    } else if (auto linear = std::dynamic_pointer_cast<LinearImpl>(m); linear && !normedAway.count(linear.get())) {
      linear->lora = randomLora({2, linear->inFeatures()}, {linear->outFeatures(), 2});
      loras.push_back(linear->lora);
    }
  }
  return loras;
}

bool convKernelsChannelsLast(SdxlUnet& unet) {
  bool all = true;
  for (const Tensor& p : unet->parameters())
    if (p.dim() == 4 && p.size(2) > 1) all = all && p.is_contiguous(torch::MemoryFormat::ChannelsLast) && !p.is_contiguous();
  return all;
}

bool convKernelsContiguous(SdxlUnet& unet) {
  bool all = true;
  for (const Tensor& p : unet->parameters())
    if (p.dim() == 4) all = all && p.is_contiguous();
  return all;
}

}  // namespace

TEST(UnetChannelsLast, TinyUnetsMatchNchwWithConvLora) {
  for (const SdxlUnetConfig& config : {SdxlUnetConfig::tiny(), SdxlUnetConfig::tinySd15()}) {
    SCOPED_TRACE(config.admInChannels > 0 ? "tiny SDXL" : "tiny SD 1.5");
    torch::manual_seed(31);
    SdxlUnet unet(config);
    unet->to(torch::kFloat64);
    for (auto& p : unet->parameters()) p.set_requires_grad(false);
    const std::vector<std::shared_ptr<LoraAdapter>> loras = attachLoras(unet);
    ASSERT_GT(loras.size(), 10u);

    // Whether each block is given channels_last activations (the concatenated skips included).
    std::vector<bool> blockInputsChannelsLast;
    unet->setBlockRunner([&](const std::string&, SdxlUnetBlock& block, const Tensor& h, const Tensor& emb, const Tensor& ctx) {
      blockInputsChannelsLast.push_back(h.is_contiguous(torch::MemoryFormat::ChannelsLast) && !h.is_contiguous());
      return unet->runBlockDefault(block, h, emb, ctx);
    });

    torch::manual_seed(32);
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    const Tensor x = torch::randn({2, config.inChannels, 16, 8}, f64), t = torch::tensor({10.0, 900.0});
    const Tensor context = torch::randn({2, 7, config.contextDim}, f64);
    const Tensor y = config.admInChannels > 0 ? torch::randn({2, config.admInChannels}, f64) : Tensor();
    const Tensor gradOut = torch::randn_like(x);
    struct Pass {
      Tensor out;
      std::vector<Tensor> grads;  // input, then each LoRA's down and up
    };
    const auto pass = [&] {
      blockInputsChannelsLast.clear();
      const Tensor in = x.clone().requires_grad_(true);
      const Tensor out = unet(in, t, context, y);
      (out * gradOut).sum().backward();
      Pass p{out.detach(), {in.grad()}};
      for (const auto& lora : loras) {
        p.grads.push_back(lora->down.grad().clone());
        p.grads.push_back(lora->up.grad().clone());
        lora->down.mutable_grad() = Tensor();
        lora->up.mutable_grad() = Tensor();
      }
      return p;
    };

    const Pass nchw = pass();
    ASSERT_FALSE(blockInputsChannelsLast.empty());
    EXPECT_FALSE(blockInputsChannelsLast.front());
    EXPECT_TRUE(convKernelsContiguous(unet));

    unet->setChannelsLast(true);
    const Pass nhwc = pass();
    EXPECT_TRUE(convKernelsChannelsLast(unet));
    for (size_t b = 0; b < blockInputsChannelsLast.size(); ++b) EXPECT_TRUE(blockInputsChannelsLast[b]) << "block " << b;
    EXPECT_TRUE(nhwc.out.is_contiguous());
    EXPECT_EQ(nhwc.out.sizes(), x.sizes());
    EXPECT_LE(relativeError(nhwc.out, nchw.out), 1e-3);
    ASSERT_EQ(nhwc.grads.size(), nchw.grads.size());
    for (size_t i = 0; i < nchw.grads.size(); ++i) {
      ASSERT_TRUE(nchw.grads[i].defined() && nhwc.grads[i].defined()) << "gradient " << i;
      EXPECT_GT(nchw.grads[i].abs().max().item<double>(), 0.0) << "gradient " << i;
      EXPECT_LE(relativeError(nhwc.grads[i], nchw.grads[i]), 1e-3) << "gradient " << i;
    }

    unet->setChannelsLast(false);
    const Pass again = pass();
    EXPECT_TRUE(convKernelsContiguous(unet));
    EXPECT_LE(relativeError(again.out, nchw.out), 1e-12);
  }
}

// The fused-kernel switch asks for channels_last on CUDA inputs, unless SINTER_UNET_CHANNELS_LAST=0;
// a CPU input stays NCHW, and so do the kernels.
TEST(UnetChannelsLast, FusedSwitchAndItsEnvironmentOffSwitch) {
  torch::manual_seed(33);
  SdxlUnet unet(SdxlUnetConfig::tiny());
  const torch::Device cuda(torch::kCUDA), cpu(torch::kCPU);
  ::setenv("SINTER_UNET_CHANNELS_LAST", "0", 1);
  unet->setFusedKernels(true);
  ::unsetenv("SINTER_UNET_CHANNELS_LAST");
  EXPECT_FALSE(unet->runsChannelsLast(cuda));
  unet->setFusedKernels(true);
  EXPECT_TRUE(unet->runsChannelsLast(cuda));
  EXPECT_FALSE(unet->runsChannelsLast(cpu));
  std::vector<bool> blockInputsChannelsLast;
  unet->setBlockRunner([&](const std::string&, SdxlUnetBlock& block, const Tensor& h, const Tensor& emb, const Tensor& ctx) {
    blockInputsChannelsLast.push_back(h.is_contiguous(torch::MemoryFormat::ChannelsLast) && !h.is_contiguous());
    return unet->runBlockDefault(block, h, emb, ctx);
  });
  {
    torch::NoGradGuard noGrad;
    const Tensor out = unet(torch::randn({1, 4, 16, 8}), torch::tensor({500.0}), torch::randn({1, 7, unet->config().contextDim}),
                            torch::randn({1, unet->config().admInChannels}));
    EXPECT_TRUE(out.is_contiguous());
  }
  ASSERT_FALSE(blockInputsChannelsLast.empty());
  EXPECT_FALSE(blockInputsChannelsLast.front());
  EXPECT_TRUE(convKernelsContiguous(unet));
  unet->setFusedKernels(false);
  EXPECT_FALSE(unet->runsChannelsLast(cuda));
  unet->setChannelsLast(true);
  EXPECT_TRUE(unet->runsChannelsLast(cpu));
}

// A convolution kernel that cannot change layout (a view of one flat buffer, as full-weight training's
// compute copies are) keeps the whole U-Net NCHW: cuDNN would convert that kernel at every call. The
// kernels that could convert stay NCHW too, the input is not converted, and the output is the NCHW one.
TEST(UnetChannelsLast, AKernelThatCannotFollowKeepsTheUnetNchw) {
  torch::manual_seed(34);
  SdxlUnet unet(SdxlUnetConfig::tiny());
  std::vector<bool> blockInputsChannelsLast;
  unet->setBlockRunner([&](const std::string&, SdxlUnetBlock& block, const Tensor& h, const Tensor& emb, const Tensor& ctx) {
    blockInputsChannelsLast.push_back(h.is_contiguous(torch::MemoryFormat::ChannelsLast) && !h.is_contiguous());
    return unet->runBlockDefault(block, h, emb, ctx);
  });
  const Tensor x = torch::randn({1, 4, 16, 8}), t = torch::tensor({500.0});
  const Tensor context = torch::randn({1, 7, unet->config().contextDim}), y = torch::randn({1, unet->config().admInChannels});
  torch::NoGradGuard noGrad;
  const Tensor nchw = unet(x, t, context, y);
  // One kernel moved into the middle of a larger buffer: a view, as ComputeCopies::ofParameters leaves it.
  for (torch::Tensor& p : unet->parameters()) {
    if (p.dim() != 4) continue;
    const torch::Tensor flat = torch::zeros({p.numel() + 16}, p.options());
    flat.narrow(0, 8, p.numel()).copy_(p.flatten());
    p.set_data(flat.narrow(0, 8, p.numel()).view(p.sizes()));
    break;
  }
  unet->setChannelsLast(true);
  blockInputsChannelsLast.clear();
  const Tensor out = unet(x, t, context, y);
  ASSERT_FALSE(blockInputsChannelsLast.empty());
  EXPECT_FALSE(blockInputsChannelsLast.front());  // x not converted (later blocks' layouts are NCHW's own mix)
  EXPECT_TRUE(convKernelsContiguous(unet));
  EXPECT_LE(relativeError(out, nchw), 1e-6);
}
