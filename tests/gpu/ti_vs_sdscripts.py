"""Textual inversion against sd-scripts' own (issue 58), SD 1.5 and SDXL, in one call:

  (a) an embedding trained by the runner's real loop (a few steps, num_vectors_per_token 2, init_word,
      object templates) on a random full-size checkpoint (sinter-runner --init_checkpoint) and the
      generated dataset (--init_dataset);
  (b) sd-scripts' own loading path on the same checkpoint and file: train_textual_inversion.py's
      TextualInversionTrainer (sdxl_train_textual_inversion.py's SdxlTextualInversionTrainer) loads the
      models (load_target_model) and tokenizers (its tokenize strategy, from a tokenizer cache dir
      holding Sinter's bundled CLIP vocabulary), then, as its train() does: tokenizer.add_tokens([token,
      token1]), resize_token_embeddings, the rows from init_word, then the rows of its load_weights(file);
  (c) a prompt holding the tokens encoded by sd-scripts' text encoding strategy in fp32 (TF32 off):
      SD: SdTextEncodingStrategy with clip_skip unset and 2; SDXL: SdxlTextEncodingStrategy, CLIP-L's
      hidden_states[11], bigG's penultimate and its pooled output;
  (d) sinter-runner --module_outputs --weights FILE --token_string TOKEN --prompt PROMPT on the same
      checkpoint (the tool's prompt is tokenized by the runner's own tokenizer);
  (e) the ids compared exactly, the outputs by their relative error ||ours - theirs|| / ||theirs|| (limit
      1e-5, the criterion of sdxl_modules_vs_sdscripts.py's frozen-model comparison: an absolute limit
      would fail bigG's penultimate layer, whose values reach ~8, on float32 rounding alone), largest
      absolute difference printed beside it; a
      COMPARE line each, PASS or FAIL last (exit 1 on FAIL); the same lines in OUT/summary.txt.

bigG's pooled output: sd-scripts' single-file loader puts open_clip's text_projection P into the
transformers Linear untransposed, so its own pooled output is x @ P^T where SGM, ComfyUI, diffusers
and the runner compute x @ P (tests/gpu/RESULTS.md, "The full-size modules against sd-scripts' own").
The pooled output compared is sd-scripts' own _get_hidden_states_sdxl with P applied as the original
applies it (its unwrapped_text_encoder2 argument, which it pools with); the quirk's difference is
printed, not compared.

Usage, on the GPU machine (sd-scripts' checkout in .bench/sd-scripts: sdscripts_tool.sd_scripts_dir):
  python3 tests/gpu/ti_vs_sdscripts.py build-cuda/bin/sinter-runner OUT [sd15] [sdxl]
The checkpoints, dataset and runs go to SINTER_GPU_WORK (default /tmp/ti_vs_sdscripts); a later call on
the same machine reuses the checkpoints.
"""
import json
import os
import subprocess
import sys
import time
import traceback

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLIP_VOCABULARY = os.path.join(ROOT, "resources", "tokenizers", "clip")  # the runner's bundled tokenizer
LIMIT = 1e-5
TOKEN = "zqxv"  # not in CLIP's vocabulary, as both sides require
VECTORS = 2
INIT_WORD = "red circle"  # two tokens: the two rows start apart
PROMPT = f"a photo of {TOKEN} {TOKEN}1 on a table"  # the tokens as sd-scripts' captions hold them

# sd-scripts' tokenizer ids (strategy_sd.py, strategy_sdxl.py) and what their hub folders hold that a
# tokenizer cache dir needs besides the vocabulary: the special tokens and 77 positions.
TOKENIZER_CONFIGS = {
    "openai/clip-vit-large-patch14": {"pad_token": "<|endoftext|>"},
    "laion/CLIP-ViT-bigG-14-laion2B-39B-b160k": {"pad_token": "!"},  # sd-scripts sets pad_token_id = 0 itself
}

summary_path = None  # OUT/summary.txt, written line by line: a call's output tail can lose them behind a long log


def say(line):
    print(line, flush=True)
    if summary_path:
        with open(summary_path, "a") as f:
            f.write(line + "\n")


def run(cmd, log):
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log, errors="replace") as f:
            tail = f.read().strip().splitlines()[-5:]
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {rc}: " + " | ".join(tail))


def tokenizer_cache_dir(work):
    """sd-scripts' TokenizeStrategy._load_tokenizer reads <dir>/<hub id with _ for />: the bundled
    vocabulary there, so sd-scripts' tokenizers and the runner's read the same files."""
    cache = os.path.join(work, "tokenizers")
    for hub_id, extra in TOKENIZER_CONFIGS.items():
        folder = os.path.join(cache, hub_id.replace("/", "_"))
        os.makedirs(folder, exist_ok=True)
        for name in ("vocab.json", "merges.txt"):
            with open(os.path.join(CLIP_VOCABULARY, name), "rb") as src, open(os.path.join(folder, name), "wb") as dst:
                dst.write(src.read())
        special = {"bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>", **extra}
        with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
            json.dump(special, f)
        with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "CLIPTokenizer", "model_max_length": 77, "do_lower_case": True, "errors": "replace",
                       "add_prefix_space": False, **special}, f)
    return cache


def train_embedding(runner, family, checkpoint, work, out):
    """(a) the runner's real loop: its embedding file."""
    run_dir = os.path.join(work, f"run_{family}")
    config = os.path.join(work, f"ti_{family}.toml")
    with open(config, "w") as f:
        f.write(f'''model_family = "{family}"
training_type = "textual_inversion"
pretrained_model_name_or_path = "{checkpoint}"
clip_tokenizer = "{CLIP_VOCABULARY}"
train_data_dir = "{os.path.join(work, 'images')}"
output_dir = "{run_dir}"
output_name = "ti_{family}"
resolution = "512,512"
caption_extension = ".txt"
cache_latents = true
token_string = "{TOKEN}"
init_word = "{INIT_WORD}"
num_vectors_per_token = {VECTORS}
use_object_template = true
max_train_steps = 4
learning_rate = 0.005
mixed_precision = "bf16"
seed = 1
''')
    start = time.time()
    run([runner, "--config_file", config], os.path.join(out, f"train_{family}.log"))
    embedding = os.path.join(run_dir, f"ti_{family}.safetensors")
    if not os.path.exists(embedding):
        raise RuntimeError(f"the run wrote no {embedding}")
    say(f"TRAINED {family} {embedding} in {time.time() - start:.1f} s (4 steps)")
    return embedding


def module_outputs(runner, family, checkpoint, embedding, out):
    """(d) the runner's text encoders on the prompt, with the embedding."""
    path = os.path.join(out, f"ours_{family}.safetensors")
    run([runner, "--module_outputs", path, "--model_family", family, "--pretrained_model_name_or_path", checkpoint,
         "--clip_tokenizer", CLIP_VOCABULARY, "--training_type", "textual_inversion", "--token_string", TOKEN,
         "--num_vectors_per_token", str(VECTORS), "--weights", embedding, "--prompt", PROMPT],
        os.path.join(out, f"module_outputs_{family}.log"))
    from safetensors.torch import load_file
    return load_file(path)


def add_tokens_as_train_does(trainer, args, tokenizers, text_encoders):
    """(b) train_textual_inversion.py's train(), from "Convert the init_word to token_id" to
    "weighs loaded", on the trainer's own tokenizers and text encoders. Returns the rows the
    tokens started from (init_word's), one tensor per encoder."""
    init_token_ids_list = [tokenizer.encode(args.init_word, add_special_tokens=False) for tokenizer in tokenizers]
    token_strings = [args.token_string] + [f"{args.token_string}{i + 1}" for i in range(args.num_vectors_per_token - 1)]
    token_ids_list, token_embeds_list, init_rows = [], [], []
    for i, (tokenizer, text_encoder, init_token_ids) in enumerate(zip(tokenizers, text_encoders, init_token_ids_list)):
        num_added_tokens = tokenizer.add_tokens(token_strings)
        assert num_added_tokens == args.num_vectors_per_token, f"tokenizer {i + 1} has {args.token_string} already"
        token_ids = tokenizer.convert_tokens_to_ids(token_strings)
        assert min(token_ids) == token_ids[0] and token_ids[-1] == token_ids[0] + len(token_ids) - 1, token_ids
        assert len(tokenizer) - 1 == token_ids[-1], (token_ids, len(tokenizer))
        token_ids_list.append(token_ids)
        text_encoder.resize_token_embeddings(len(tokenizer))
        token_embeds = text_encoder.get_input_embeddings().weight.data
        for j, token_id in enumerate(token_ids):
            token_embeds[token_id] = token_embeds[init_token_ids[j % len(init_token_ids)]]
        token_embeds_list.append(token_embeds)
        init_rows.append(token_embeds[token_ids].clone())
    embeddings_list = trainer.load_weights(args.weights)
    assert len(token_ids_list[0]) == len(embeddings_list[0]), "num_vectors_per_token is mismatch for weights"
    for token_ids, embeddings, token_embeds in zip(token_ids_list, embeddings_list, token_embeds_list):
        for token_id, embedding in zip(token_ids, embeddings):
            token_embeds[token_id] = embedding
    return init_rows, [embeds[ids].clone() for embeds, ids in zip(token_embeds_list, token_ids_list)]


class _ProjectionAsTheOriginal(torch.nn.Module):
    """What sd-scripts' _pool_workaround pools with (its unwrapped_text_encoder2 argument): the
    text_projection it loaded, P, applied as the original applies it (x @ P)."""

    def __init__(self, text_encoder2):
        super().__init__()
        weight = text_encoder2.text_projection.weight
        self.text_projection = torch.nn.Linear(weight.shape[0], weight.shape[1], bias=False).to(weight.device, weight.dtype)
        with torch.no_grad():
            self.text_projection.weight.copy_(weight.t())


def sdscripts_side(family, checkpoint, embedding, cache):
    """(b) and (c): sd-scripts' ids and hidden states for the prompt (its models loaded on the CPU as
    its trainer loads them, then encoded on the GPU in float32), the rows the tokens started from and
    the rows loaded, and SDXL's pooled output as sd-scripts computes it."""
    import accelerate
    sdxl = family == "sdxl"
    if sdxl:
        import sdxl_train_textual_inversion as script
        trainer = script.SdxlTextualInversionTrainer()
    else:
        import train_textual_inversion as script
        trainer = script.TextualInversionTrainer()
    args = script.setup_parser().parse_args([
        "--pretrained_model_name_or_path", checkpoint, "--tokenizer_cache_dir", cache, "--token_string", TOKEN,
        "--init_word", INIT_WORD, "--num_vectors_per_token", str(VECTORS), "--weights", embedding])
    accelerator = accelerate.Accelerator()
    tokenize_strategy = trainer.get_tokenize_strategy(args)
    tokenizers = trainer.get_tokenizers(tokenize_strategy)
    for tokenizer in tokenizers:  # the cache dir's files read as CLIP's vocabulary, 77 positions
        assert len(tokenizer) == 49408 and tokenizer.model_max_length == 77, \
            f"sd-scripts' tokenizer from {cache}: {len(tokenizer)} entries, {tokenizer.model_max_length} positions"
    _version, text_encoders, vae, unet = trainer.load_target_model(args, torch.float32, accelerator)
    del vae, unet  # the text encoders alone are compared
    init_rows, rows = add_tokens_as_train_does(trainer, args, tokenizers, text_encoders)
    dev = torch.device("cuda")
    text_encoders = [te.to(dev, dtype=torch.float32).eval() for te in text_encoders]
    tokens = tokenize_strategy.tokenize(PROMPT)
    torch.backends.cuda.matmul.allow_tf32 = False  # again, after sd-scripts' imports: fp32 means fp32
    torch.backends.cudnn.allow_tf32 = False
    theirs = {}
    with torch.no_grad():
        if sdxl:
            theirs["input_ids"], theirs["input_ids2"] = tokens[0], tokens[1]
            strategy = trainer.get_text_encoding_strategy(args)
            models = trainer.get_models_for_text_encoding(args, accelerator, text_encoders)
            h1, h2, pooled_as_sdscripts = strategy.encode_tokens(tokenize_strategy, models, tokens)
            _, _, pooled = strategy.encode_tokens(tokenize_strategy, list(models) + [_ProjectionAsTheOriginal(text_encoders[1])], tokens)
            theirs.update(clip_l_penultimate=h1, big_g_penultimate=h2, big_g_pooled=pooled)
            theirs = {k: v.cpu() for k, v in theirs.items()}
            quirk = pooled_as_sdscripts.cpu()
        else:
            theirs["input_ids"] = tokens[0]
            for clip_skip, name in ((None, "text_clip_skip1"), (2, "text_clip_skip2")):
                args.clip_skip = clip_skip
                strategy = trainer.get_text_encoding_strategy(args)
                theirs[name] = strategy.encode_tokens(
                    tokenize_strategy, trainer.get_models_for_text_encoding(args, accelerator, text_encoders), tokens)[0].cpu()
            quirk = None
    del text_encoders
    torch.cuda.empty_cache()
    return theirs, init_rows, rows, quirk


def compare(family, ours, theirs, rows, init_rows, embedding_keys, quirk):
    failed = []
    for key, init, loaded in zip(embedding_keys, init_rows, rows):
        say(f"ROWS {family} {key}: the trained rows moved {(loaded - init).abs().max().item():.3e} (max |d|) from init_word's")
    for name, t in theirs.items():
        if name not in ours:
            failed.append(f"{family} {name} (missing from the runner's outputs)")
            say(f"COMPARE {family} {name} missing FAIL")
            continue
        o = ours[name]
        if name.startswith("input_ids"):
            same = torch.equal(o.reshape(-1, 77).long(), t.reshape(-1, 77).long())
            verdict = "PASS" if same else "FAIL"
            say(f"COMPARE {family} {name} ids {'equal' if same else 'differ'} {verdict}: ours {o.reshape(-1).tolist()[:12]}... "
                f"theirs {t.reshape(-1).tolist()[:12]}...")
            if not same:
                failed.append(f"{family} {name}")
            continue
        if tuple(o.shape) != tuple(t.shape):
            failed.append(f"{family} {name} (shape {tuple(o.shape)} vs {tuple(t.shape)})")
            say(f"COMPARE {family} {name} shape {tuple(o.shape)} vs {tuple(t.shape)} FAIL")
            continue
        diff = (o.double() - t.double()).abs().max().item()
        rel = ((o.double() - t.double()).norm() / t.double().norm()).item()
        verdict = "PASS" if rel <= LIMIT else "FAIL"
        say(f"COMPARE {family} {name} {tuple(t.shape)} relative {rel:.3e} (limit {LIMIT:g}) max_abs {diff:.3e} "
            f"max|theirs| {t.abs().max().item():.3g} {verdict}")
        if verdict == "FAIL":
            failed.append(f"{family} {name} ({rel:.3e})")
    if quirk is not None and "big_g_pooled" in ours:
        rel = ((ours["big_g_pooled"].double() - quirk.double()).norm() / quirk.double().norm()).item()
        say(f"INFO {family} big_g_pooled against sd-scripts' own x @ P^T (not compared): relative difference {rel:.3e}")
    return failed


def main():
    runner, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    families = sys.argv[3:] or ["sd15", "sdxl"]
    work = os.environ.get("SINTER_GPU_WORK", "/tmp/ti_vs_sdscripts")
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    global summary_path
    summary_path = os.path.join(out, "summary.txt")
    open(summary_path, "w").close()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    import sdscripts_tool
    sd_scripts = sdscripts_tool.sd_scripts_dir()
    sdscripts_tool.stand_in_missing_packages(sd_scripts)
    sys.path[:0] = [sd_scripts]  # the training scripts themselves, beside library/

    images = os.path.join(work, "images")
    if not os.path.isdir(images):
        run([runner, "--init_dataset", images, "--seed", "1"], os.path.join(out, "init_dataset.log"))
    cache = tokenizer_cache_dir(work)
    failed = []
    for family in families:
        checkpoint = os.path.join(work, f"{family}_random.safetensors")
        try:
            if not os.path.exists(checkpoint):
                run([runner, "--init_checkpoint", checkpoint, "--model_family", family, "--model_size", "full", "--seed", "7"],
                    os.path.join(out, f"init_checkpoint_{family}.log"))
            embedding = train_embedding(runner, family, checkpoint, work, out)
            ours = module_outputs(runner, family, checkpoint, embedding, out)
            theirs, init_rows, rows, quirk = sdscripts_side(family, checkpoint, embedding, cache)
            keys = ["clip_l", "clip_g"] if family == "sdxl" else ["emb_params"]
            failed += compare(family, ours, theirs, rows, init_rows, keys, quirk)
        except Exception as e:  # one family's failure is reported, and the other still runs
            traceback.print_exc()
            failed.append(f"{family}: {type(e).__name__}: {e}")
            say(f"ERROR {family}: {type(e).__name__}: {e}")
    say(("FAIL: " + "; ".join(failed)) if failed else f"PASS: {', '.join(families)}: ids equal, outputs within {LIMIT:g}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
