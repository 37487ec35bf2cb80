"""One SDXL textual inversion training step of sd-scripts' own code, as sdxl_train_textual_inversion.py
runs it with mixed_precision bf16 (train_textual_inversion.py's train()), timed as
sdscripts_sdxl_te_step.py times its LoRA step: the full-size sdxl_original_unet in bf16 and frozen, SDPA,
eval mode (no gradient checkpointing); transformers' CLIPTextModel (CLIP-L) and
CLIPTextModelWithProjection (OpenCLIP bigG) in float32, their token tables grown by the new tokens
(resize_token_embeddings, rows from an init word), prepared by accelerate (its bf16 autocast around
their forward, outputs cast to float32), everything frozen but the token tables (requires_grad_ on
the whole encoder, then off on its encoder layers, final_layer_norm and position_embedding, as
train() does: bigG's text_projection keeps requires_grad); sd-scripts' SdxlTextEncodingStrategy
(CLIP-L hidden_states[11], bigG's penultimate and pool_workaround's pooled output); random cached
latents at 1024x1024 bs1 with DDPM noise, sdxl_train_util's size embeddings, the U-Net under
accelerator.autocast(), the l2 loss; accelerator.backward, clip_grad_norm_(1.0) on bigG's table
alone (train() clips its loop variable, the last text encoder's), AdamW (torch.optim.AdamW, as
sd-scripts' optimizer_type AdamW builds it) on both whole tables, the constant schedule, then the
vocabulary's rows restored from their copy through the CPU mask train() builds, and loss.item().
Random weights; 77 tokens per encoder, the new tokens among them.

Run on the GPU machine with sd-scripts in .bench/sd-scripts (or .bench; sdscripts_tool.sd_scripts_dir):
  python3 tests/gpu/sdscripts_sdxl_ti_step.py [VECTORS]
Prints one RESULT {...} line as sdscripts_sdxl_te_step.py does: step_ms (the median of 10 steps after
4; step_ms_mean beside it), first_step_s, peak_gib."""
import json
import os
import statistics
import sys
import time
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdscripts_tool  # noqa: E402

sd_scripts = sdscripts_tool.sd_scripts_dir()
sdscripts_tool.stand_in_missing_packages(sd_scripts)
import accelerate  # noqa: E402
import transformers  # noqa: E402
from library import sdxl_original_unet, sdxl_train_util, strategy_sdxl  # noqa: E402

vectors = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
accelerator = accelerate.Accelerator(mixed_precision="bf16")
dev, weight_dtype = accelerator.device, torch.bfloat16
torch.manual_seed(0)

with torch.device(dev):
    unet = sdxl_original_unet.SdxlUNet2DConditionModel()
    te1 = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
        max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=768))
    te2 = transformers.CLIPTextModelWithProjection(transformers.CLIPTextConfig(
        vocab_size=49408, hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_attention_heads=20,
        max_position_embeddings=77, hidden_act="gelu", projection_dim=1280))
unet.set_use_sdpa(True)  # train_util.replace_unet_modules with --sdpa

# train(): the tokens added after the vocabulary, the tables resized, the new rows from init_word's.
vocab = 49408
token_ids = list(range(vocab, vocab + vectors))
init_ids = [736, 2138]  # two words' ids; which words does not matter to the step
text_encoders = [te1, te2]
for te in text_encoders:
    te.resize_token_embeddings(vocab + vectors)
    token_embeds = te.get_input_embeddings().weight.data
    for i, token_id in enumerate(token_ids):
        token_embeds[token_id] = token_embeds[init_ids[i % len(init_ids)]]

trainable_params = []
for te in text_encoders:
    trainable_params += te.get_input_embeddings().parameters()
optimizer = torch.optim.AdamW(trainable_params, lr=5e-3)
lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)  # lr_scheduler "constant"
optimizer, lr_scheduler = accelerator.prepare(optimizer, lr_scheduler)
text_encoders = [accelerator.prepare(te) for te in text_encoders]

index_no_updates_list, orig_embeds_params_list = [], []
for te in text_encoders:
    index_no_updates_list.append(torch.arange(vocab + vectors) < token_ids[0])  # on the CPU, as train() makes it
    unwrapped = accelerator.unwrap_model(te)
    orig_embeds_params_list.append(unwrapped.get_input_embeddings().weight.data.detach().clone())
    te.requires_grad_(True)
    text_model = unwrapped.text_model if hasattr(unwrapped, "text_model") else unwrapped  # transformers 5's CLIPTextModel is flat
    text_model.encoder.requires_grad_(False)
    text_model.final_layer_norm.requires_grad_(False)
    text_model.embeddings.position_embedding.requires_grad_(False)
unet.requires_grad_(False)
unet.to(dev, dtype=weight_dtype)
unet.eval()  # train() without gradient_checkpointing
for te in text_encoders:
    te.train()
clipped_encoder = text_encoders[-1]  # train()'s `text_encoder` after its loop over the encoders

tokenizer = types.SimpleNamespace(model_max_length=77, eos_token_id=49407)  # what the strategy reads of sd-scripts' tokenizers
tokenize_strategy = types.SimpleNamespace(tokenizer1=tokenizer, tokenizer2=tokenizer)
text_encoding_strategy = strategy_sdxl.SdxlTextEncodingStrategy()
betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000, dtype=torch.float32) ** 2  # DDPMScheduler scaled_linear
alphas_cumprod = torch.cumprod(1.0 - betas, dim=0).to(dev)


def make_inputs():
    # "a photo of <tokens> ..." as ids: bos, words, the new tokens, eos; CLIP-L pads with eos, bigG with 0.
    words = torch.randint(0, 49406, (8,)).tolist()
    text = [49406] + words[:3] + token_ids + words[3:] + [49407]
    ids1 = torch.tensor(text + [49407] * (77 - len(text))).view(1, 1, 77)
    ids2 = torch.tensor(text + [0] * (77 - len(text))).view(1, 1, 77)
    size = torch.tensor([[1024, 1024]])
    # A batch as sd-scripts' collator gives it: on the CPU (cached latents are kept there too).
    return dict(latents=torch.randn(1, 4, 128, 128), ids=[ids1, ids2], orig=size, crop=torch.zeros_like(size), target=size)


def step(batch):
    with accelerator.accumulate(text_encoders[0]):
        with torch.no_grad():
            latents = batch["latents"].to(dev).to(dtype=weight_dtype) * 0.13025  # sdxl_model_util.VAE_SCALE_FACTOR
        input_ids = [ids.to(dev) for ids in batch["ids"]]
        text_encoder_conds = text_encoding_strategy.encode_tokens(tokenize_strategy, text_encoders, input_ids)
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, 1000, (1,), device=dev).long()
        a = alphas_cumprod[timesteps].view(-1, 1, 1, 1)
        noisy_latents = (a.sqrt() * latents + (1 - a).sqrt() * noise).to(latents.dtype)  # DDPMScheduler.add_noise
        # SdxlTextualInversionTrainer.call_unet
        noisy_latents = noisy_latents.to(weight_dtype)
        embs = sdxl_train_util.get_size_embeddings(batch["orig"], batch["crop"], batch["target"], dev).to(weight_dtype)
        encoder_hidden_states1, encoder_hidden_states2, pool2 = text_encoder_conds
        vector_embedding = torch.cat([pool2, embs], dim=1).to(weight_dtype)
        text_embedding = torch.cat([encoder_hidden_states1, encoder_hidden_states2], dim=2).to(weight_dtype)
        with accelerator.autocast():
            noise_pred = unet(noisy_latents, timesteps, text_embedding, vector_embedding)
        loss = torch.nn.functional.mse_loss(noise_pred.float(), noise.float(), reduction="none")  # conditional_loss, l2
        loss = loss.mean([1, 2, 3]) * torch.ones(1, device=dev)  # loss_weights
        loss = loss.mean()
        accelerator.backward(loss)
        if accelerator.sync_gradients:
            accelerator.clip_grad_norm_(accelerator.unwrap_model(clipped_encoder).get_input_embeddings().parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        with torch.no_grad():
            for te, orig_embeds_params, index_no_updates in zip(text_encoders, orig_embeds_params_list, index_no_updates_list):
                input_embeddings_weight = accelerator.unwrap_model(te).get_input_embeddings().weight
                input_embeddings_weight[index_no_updates] = orig_embeds_params.to(input_embeddings_weight.dtype)[index_no_updates]
    return loss.detach().item()  # train()'s current_loss, every step


inputs = [make_inputs() for _ in range(4)]
torch.cuda.synchronize()
t0 = time.time()
step(inputs[0])
torch.cuda.synchronize()
first = time.time() - t0
for i in range(3):
    step(inputs[(i + 1) % 4])
torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
times = []
for i in range(10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    step(inputs[i % 4])
    end.record()
    end.synchronize()
    times.append(start.elapsed_time(end))
unchanged = all(torch.equal(accelerator.unwrap_model(te).get_input_embeddings().weight[:vocab], orig[:vocab])
                for te, orig in zip(text_encoders, orig_embeds_params_list))
print("RESULT " + json.dumps(dict(arch="sdxl", how="eager", trained=f"textual inversion, {vectors} vectors, both text encoders' token tables",
                                  step_ms=round(statistics.median(times), 2), step_ms_mean=round(sum(times) / len(times), 2),
                                  first_step_s=round(first, 2), peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2),
                                  optimizer_params=sum(p.numel() for p in trainable_params), vocabulary_rows_unchanged=unchanged,
                                  torch=torch.__version__, transformers=transformers.__version__, accelerate=accelerate.__version__,
                                  gpu=torch.cuda.get_device_name())), flush=True)
