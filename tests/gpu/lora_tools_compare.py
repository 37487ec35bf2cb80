"""Compares a file a Sinter LoRA tool wrote with the one sd-scripts' own script wrote from the same
inputs (tests/gpu/lora_tools_vs_sdscripts.sh). Prints one `COMPARE {json}` line.

  python3 lora_tools_compare.py lora NAME OURS.safetensors SDSCRIPTS.safetensors
      each module's product up·down·alpha/rank (free of the SVD's sign), its rank, and the
      metadata keys both write (ss_network_dim / alpha / args / module)
  python3 lora_tools_compare.py checkpoint NAME OURS.safetensors SDSCRIPTS.safetensors
      every tensor both files hold, and the keys only one holds
  python3 lora_tools_compare.py reference NAME INPUT.safetensors RANK RESIZED.safetensors...
      each resized file's products against the float64 best rank-RANK approximation of the input's
      products (Eckart-Young: the product's full SVD truncated, in float64 on the GPU where there is
      one): which side of a difference between two resizes is the rounding

Relative error of a tensor: max |ours - theirs| / max |theirs|."""
import json
import sys

import torch
from safetensors import safe_open


def load(path):
    with safe_open(path, framework="pt", device="cpu") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, (f.metadata() or {})


def relative(a, b):
    a, b = a.double(), b.double()
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / scale if scale > 0 else (a - b).abs().max().item()


def ulps(a, b):
    """The largest difference in units of the last place of b's dtype at b (merged weights are rounded
    to fp16/bf16 on both sides, so one ulp apart is the rounding of float32 sums that differ in the last bit)."""
    mantissa_bits = {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[b.dtype]
    _, exponent = torch.frexp(b.double())  # |b| = m·2^e with m in [0.5, 1)
    ulp = torch.pow(2.0, (exponent - 1 - mantissa_bits).double()).clamp_min(torch.finfo(b.dtype).tiny)
    return ((a.double() - b.double()).abs() / ulp).max().item()


def products(tensors):
    out, ranks = {}, {}
    for key, down in tensors.items():
        if not key.endswith(".lora_down.weight"):
            continue
        module = key[: -len(".lora_down.weight")]
        up = tensors[module + ".lora_up.weight"].double()
        down = down.double()
        rank = down.shape[0]
        alpha = tensors.get(module + ".alpha")
        scale = (alpha.double().item() if alpha is not None else rank) / rank
        out[module] = (up.reshape(up.shape[0], -1) @ down.reshape(rank, -1)) * scale
        ranks[module] = rank
    return out, ranks


def best_rank(product, rank, device):
    """The float64 best rank-`rank` approximation of a product: its full SVD, truncated."""
    u, s, vh = torch.linalg.svd(product.to(device), full_matrices=False)
    return ((u[:, :rank] * s[:rank]) @ vh[:rank]).cpu()


def reference(name, input_path, rank, resized_paths):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    source, _ = products(load(input_path)[0])
    best = {m: best_rank(p, rank, device) for m, p in source.items()}
    result = {"tool": name, "reference": f"float64 best rank-{rank} approximation", "modules": len(best)}
    for path in resized_paths:
        resized, _ = products(load(path)[0])
        errors = {m: relative(resized[m], best[m]) for m in best if m in resized}
        worst = max(errors, key=errors.get)
        values = sorted(errors.values())
        result[path] = dict(modules=len(errors), max_rel=errors[worst], worst=worst, median_rel=values[len(values) // 2],
                            over_1e3=sum(1 for e in values if e > 1e-3), over_1e6=sum(1 for e in values if e > 1e-6))
    print("COMPARE " + json.dumps(result), flush=True)


def main():
    if sys.argv[1] == "reference":
        reference(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:])
        return
    kind, name, ours_path, theirs_path = sys.argv[1:5]
    result = {"tool": name}
    if kind == "lora":
        ours, ours_meta = load(ours_path)
        theirs, theirs_meta = load(theirs_path)
        po, ro = products(ours)
        pt, rt = products(theirs)
        common = sorted(set(po) & set(pt))
        errors = {m: relative(po[m], pt[m]) for m in common}
        worst = max(errors, key=errors.get) if errors else None
        values = sorted(errors.values())
        result.update(modules=len(common), over_1e3=sum(1 for e in values if e > 1e-3),
                      median_rel=values[len(values) // 2] if values else None, only_ours=sorted(set(po) - set(pt))[:5], only_theirs=sorted(set(pt) - set(po))[:5],
                      n_only_ours=len(set(po) - set(pt)), n_only_theirs=len(set(pt) - set(po)),
                      max_rel=errors[worst] if worst else None, worst=worst,
                      ranks_differ=sum(1 for m in common if ro[m] != rt[m]),
                      dtypes_differ=sorted({k for k in set(ours) & set(theirs) if ours[k].dtype != theirs[k].dtype})[:5],
                      metadata={k: [ours_meta.get(k), theirs_meta.get(k)] for k in
                                ("ss_network_module", "ss_network_dim", "ss_network_alpha", "ss_network_args",
                                 "ss_base_model_version", "ss_v2", "modelspec.architecture")
                                if ours_meta.get(k) != theirs_meta.get(k)})
    else:
        # A tensor at a time: two FLUX transformers need not fit in memory together.
        with safe_open(ours_path, framework="pt", device="cpu") as fo, safe_open(theirs_path, framework="pt", device="cpu") as ft:
            ours_keys, theirs_keys = set(fo.keys()), set(ft.keys())
            common = sorted(ours_keys & theirs_keys)
            errors, dtypes_differ, max_ulps = {}, [], 0.0
            for k in common:
                a, b = fo.get_tensor(k), ft.get_tensor(k)
                if a.dtype != b.dtype:
                    dtypes_differ.append(k)
                if a.shape != b.shape:
                    errors[k] = float("inf")
                elif a.is_floating_point():
                    errors[k] = relative(a, b)
                    if a.dtype == b.dtype and a.numel() and b.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
                        max_ulps = max(max_ulps, ulps(a, b))
                else:
                    errors[k] = 0.0 if torch.equal(a, b) else float("inf")
        worst = max(errors, key=errors.get) if errors else None
        result.update(tensors=len(common), n_only_ours=len(ours_keys - theirs_keys), n_only_theirs=len(theirs_keys - ours_keys),
                      only_ours=sorted(ours_keys - theirs_keys)[:5], only_theirs=sorted(theirs_keys - ours_keys)[:5],
                      max_rel=errors[worst] if worst else None, worst=worst,
                      over_1e3=sum(1 for e in errors.values() if e > 1e-3), dtypes_differ=dtypes_differ[:5], max_ulps=max_ulps)
    print("COMPARE " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
