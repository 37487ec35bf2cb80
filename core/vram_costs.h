#pragma once
// The measured costs the memory plan (vram_plan.h) uses, with where each was measured. Refresh
// them with tests/gpu/vram_budget.sh measure (it prints this table's values from peaks measured on
// the GPU at two resolutions, with and without gradient checkpointing).
//
// Activations are bytes per token of one image (FLUX: 16x16-pixel patches plus T5's 512 tokens;
// SDXL: latent pixels, 8x8 image pixels each), summed over the denoiser's blocks.

namespace sinter::vram_costs {

// FLUX.1-dev LoRA, tests/gpu/RESULTS.md (issue 10/28 rows, H200, 1024x1024 bs1, 4608 tokens,
// rank 32): bf16 inductor default 57.6 GiB peak = 22.2 GiB weights + 2.3 GiB LoRA, gradients and
// AdamW state + 33.1 GiB: 7.6 MB a token over the 57 blocks (133 KB a block). fp8_base + 8
// swapped blocks + checkpointing 14.1 GiB = 8.7 GiB resident weights + 2.3 GiB LoRA + 3.1 GiB:
// the blocks' saved inputs (460 KB a token over 57 blocks), one block recomputed (150 KB a token)
// and the fixed 0.5 GiB (fp8 upcast copies, workspaces).
constexpr double kFluxFullBytesPerToken = 7.6e6;
constexpr double kFluxSavedBytesPerToken = 4.6e5;
constexpr double kFluxRecomputeBytesPerToken = 1.5e5;
constexpr double kFluxFixedGiB = 0.5;

// SDXL LoRA, tests/gpu/RESULTS.md (H100/H200, 1024x1024 bs1, rank 32): 13.3 GiB peak = 4.8 GiB
// U-Net + 1.3 GiB LoRA state + 7.2 GiB: 449 KB a latent pixel (16384 of them) and a fixed 1.0 GiB
// (the full fine-tune rows agree: 17.5 GiB with bf16 gradients, 12.7 GiB fused). With
// checkpointing: estimated, not yet measured (the saved inputs of the U-Net's checkpointed
// modules, 12% of the full activations, and the largest module recomputed); vram_budget.sh
// measure measures them.
constexpr double kSdxlFullBytesPerToken = 4.49e5;
constexpr double kSdxlSavedBytesPerToken = 5.4e4;
constexpr double kSdxlRecomputeBytesPerToken = 3.0e4;
constexpr double kSdxlFixedGiB = 1.0;

// The VAE encoding images (the start's latent-caching stage; models/autoencoders/sdxl_vae.h; FLUX's AE has the
// same encoder): it peaks in its first level, 128 channels at the image's full resolution, where
// about 8 tensors of that size in the VAE's dtype are alive at once under no_grad. Measured on an
// H100 (tests/gpu/sdxl_vae_encode_check.cpp): 2.00 GiB at 1024x1024 in bf16, 4.01 GiB in fp32,
// 0.50 / 1.00 GiB at 512x512, so 8 tensors and 2% for the allocator's rounding. Its mid-block
// attention (at an eighth of the size, so not at the same time) runs in query chunks of at most
// 2^25 scores (VaeAttnBlockImpl::kMaxScoreElements), counted at 4 bytes with their softmax: 256 MiB
// at most.
constexpr double kVaeEncodeChannels = 128;
constexpr double kVaeEncodeTensorsInDtype = 8;
constexpr double kVaeEncodeRounding = 1.02;
constexpr double kVaeAttentionMaxScores = 33554432.0;

// The caching allocator's rounding and fragmentation over the sum of live tensors.
constexpr double kAllocatorMargin = 1.06;

// Step time, relative to the resident bf16 step without checkpointing (RESULTS.md, FLUX rows):
// gradient checkpointing recomputes the forward pass (eager 884 ms against ~690 ms, +28%);
// fp8_base's per-call upcasts (+42 ms on 421 ms, +10%); blocks_to_swap's exposed copies (+82 ms
// for 5 GB of bf16 weights streamed twice, 4% a GB); fused backward's per-parameter optimizer
// steps in a full fine-tune (SDXL's real loop, Adafactor, full_bf16, 1024²: 837 against 737 ms,
// +14%, where checkpointing there cost +17%: 864 ms; the earlier full fine-tune benchmark measured
// +40%, 965 against 690 ms, and is not the run a user trains). cpu_offload_checkpointing's copies:
// estimated at +8% (not yet measured).
constexpr double kCheckpointingCost = 0.28;
constexpr double kFp8BaseCost = 0.10;
constexpr double kSwapCostPerGB = 0.04;
constexpr double kFusedBackwardCost = 0.14;
constexpr double kCheckpointOffloadCost = 0.08;

}  // namespace sinter::vram_costs
