#pragma once
// Every cross-attention (attn2) of a U-Net reads the same text context, so their to_k and to_v
// are one joint Linear over it (joint_linear.h): the U-Net computes all their k and v in one GEMM
// (and, with LoRA, one down projection and a batched GEMM per run of equal up projections:
// adapters/frozen_joint_linear_lora.h) before its blocks, and each attention takes its k and v
// from the joint output (CrossAttentionImpl::useContextKv). SDXL: 140 projections of 77 rows, each
// a handful of tiny kernels each way, become a few. Used only where that computes what the
// projections would (jointLinearApplies); otherwise each attention projects as before.
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "models/layers/attention.h"

namespace sinter::models {

class JointContextKv {
 public:
  // The cross-attentions that read the context, and whether to join them (the U-Net's fused-kernel
  // switch); the environment's SINTER_JOINT_CONTEXT_KV=0 keeps it off, for measuring.
  void set(std::vector<std::shared_ptr<CrossAttentionImpl>> attentions, bool enabled);
  bool enabled() const { return enabled_; }

  // Hands every attention its k and v on `context` where the joint form applies (true), else
  // nothing (false). What an attention does not use stays with it until release().
  bool provide(const torch::Tensor& context);
  void release();

 private:
  std::vector<std::shared_ptr<CrossAttentionImpl>> attentions_;  // by their k/v width: equal widths are one run
  bool enabled_ = false;
  // Set once a CUDA graph was captured with the separate projections (the weights were not joined
  // yet): joining them later would free the buffers the graph reads.
  bool capturedSeparately_ = false;
};

// provide() for a scope (a U-Net pass): its end lets go of what the attentions did not use, also
// when the pass throws.
class ProvidedContextKv {
 public:
  ProvidedContextKv(JointContextKv& joint, const torch::Tensor& context) : joint_(joint), provided_(joint.provide(context)) {}
  ~ProvidedContextKv() { joint_.release(); }
  ProvidedContextKv(const ProvidedContextKv&) = delete;
  ProvidedContextKv& operator=(const ProvidedContextKv&) = delete;
  bool provided() const { return provided_; }

 private:
  JointContextKv& joint_;
  bool provided_;
};

}  // namespace sinter::models
