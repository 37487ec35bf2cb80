#!/usr/bin/env bash
# On the GPU machine (issue 56, "toward the floor"): every target in one call on one card, one run after
# another: Sinter's real loop (full-size random models, 1024², LoRA rank 32, bf16, whole step captured),
# its benchmark step where the family has one, and sd-scripts' own eager and per-block-compiled steps.
#   bash tests/gpu/floor_targets.sh RUNNER [WORK]
# Needs .bench/sdscripts_step.py and sd-scripts' library/ and networks/ in .bench/sd-scripts
# (tests/gpu/README.md; the script puts both on PYTHONPATH). Not run on a GPU yet. About 20
# minutes on an H200 (FLUX's random files alone take ~4.5). Prints each measurement as it comes, then the
# targets' table: each with its value and whether it holds. SINTER_FLOOR_SKIP="sdscripts-compile" leaves
# out sd-scripts' compiled steps (their first step can take minutes).
set -uo pipefail
runner="$(realpath "$1")"
work="${2:-/tmp/sinter-floor}"
here="$(cd "$(dirname "$0")" && pwd)"
bench="$(cd "$here/../.." && pwd)/.bench"
mkdir -p "$work"
export PYTHONPATH="$bench/sd-scripts:$bench${PYTHONPATH:+:$PYTHONPATH}"
declare -A got

# The median step of a matrix row ("| setting | trained | exit | warm-up | step 1 | median | peak | error |").
row_median() { awk -F'|' '/^\| [a-z]/ && $4+0 == 0 {gsub(/ /, "", $7); print $7}' | tail -1; }
# A benchmark row's median ("info <mode> (<shapes>): median X ms").
bench_median() { grep -F "$1" | grep -oE 'median [0-9.]+ ms' | head -1 | grep -oE '[0-9.]+'; }
sdscripts_step() {  # ARCH HOW [BATCH RES]: sd-scripts' step in ms, from its RESULT line
  (cd "$bench" && python3 sdscripts_step.py "$@" 2>/dev/null | sed -n 's/^RESULT //p' | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_ms"])')
}
note() { got[$1]="$2"; echo "$1: $2 ($(date +%T))"; }

# SDXL: bs1 and bs4 through the real loop, the benchmark's whole-step row, sd-scripts beside it.
export SINTER_GPU_WORK="$work/sdxl"
note sdxl_loop "$(SINTER_MATRIX_TE=unet SINTER_MATRIX_SETTINGS=ro-fullgraph bash "$here/text_encoder_matrix.sh" "$runner" 20 | row_median)"
bs4="$(SINTER_MATRIX_TE=unet SINTER_MATRIX_SETTINGS=ro-fullgraph SINTER_MATRIX_NETWORK="--train_batch_size 4" \
  bash "$here/text_encoder_matrix.sh" "$runner" 20 | row_median)"
note sdxl_bs4_per_sample "$(python3 -c "print(round($bs4 / 4, 2))" 2>/dev/null)"
note sdxl_bench "$("$runner" --benchmark_steps 10 --mixed_precision bf16 --benchmark_scaling 2>&1 | bench_median "fullgraph (bs1")"
unset SINTER_GPU_WORK
note sdxl_sdscripts_eager "$(sdscripts_step sdxl eager)"
case " ${SINTER_FLOOR_SKIP:-} " in *" sdscripts-compile "*) ;; *) note sdxl_sdscripts_compile "$(sdscripts_step sdxl compile)" ;; esac

# FLUX.1-dev: bf16 and fp8_fast through the real loop and the benchmark, sd-scripts beside them.
flux_rows="$(SINTER_GPU_WORK="$work/flux" SINTER_MATRIX_TE=dit SINTER_MATRIX_SETTINGS="ro-fullgraph fp8_fast" \
  bash "$here/flux_text_encoder_matrix.sh" "$runner" 20)"
note flux_loop "$(echo "$flux_rows" | grep '^| ro-fullgraph' | row_median)"
note flux_fp8_loop "$(echo "$flux_rows" | grep '^| fp8_fast' | row_median)"
note flux_bench "$("$runner" --benchmark_steps 10 --model_family flux --mixed_precision bf16 --benchmark_scaling 2>&1 | bench_median "fullgraph")"
note flux_fp8_bench "$("$runner" --benchmark_steps 10 --model_family flux --mixed_precision bf16 --benchmark_scaling \
  --fp8_base --fp8_scaled --fp8_fast 2>&1 | bench_median "fullgraph")"
note flux_sdscripts_eager "$(sdscripts_step flux eager)"
case " ${SINTER_FLOOR_SKIP:-} " in *" sdscripts-compile "*) ;; *) note flux_sdscripts_compile "$(sdscripts_step flux compile)" ;; esac

# SD 1.5 at 512² and SD 2.1 at 768²: the real loop beside sd-scripts' eager step (no benchmark step).
for v in sd15 sd21; do
  line="$(SINTER_SD_VERSION=$v SINTER_GPU_WORK="$work/$v" bash "$here/sd15_lora_step.sh" "$runner" 2>&1 | sed -n 's/^RESULT //p' | tail -1)"
  note "${v}_loop" "$(echo "$line" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ours"]["step_ms_median"])' 2>/dev/null)"
  note "${v}_sdscripts_eager" "$(echo "$line" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sd_scripts"]["step_ms"])' 2>/dev/null)"
done

# The targets' table.
args=()
for k in "${!got[@]}"; do args+=("$k=${got[$k]}"); done
python3 - "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" "${args[@]}" <<'PY'
import sys
card, got = sys.argv[1], {}
for a in sys.argv[2:]:
    k, _, v = a.partition("=")
    try:
        got[k] = float(v)
    except ValueError:
        got[k] = None

def cell(k):
    return f"{got[k]:.1f} ms" if got.get(k) is not None else "not measured"

def ratio(a, b):
    return got[b] / got[a] if got.get(a) and got.get(b) else None

def at_most(k, bound):
    return None if got.get(k) is None else got[k] <= bound

def within(loop, bench):
    r = ratio(bench, loop)
    return None if r is None else abs(1 / r - 1) <= 0.03

rows = [
    ("SDXL U-Net LoRA bs1 <= 60 ms", cell("sdxl_loop"), at_most("sdxl_loop", 60)),
    ("SDXL bs4 <= 45 ms a sample", cell("sdxl_bs4_per_sample"), at_most("sdxl_bs4_per_sample", 45)),
    ("FLUX bf16 <= 300 ms", cell("flux_loop"), at_most("flux_loop", 300)),
    ("FLUX bf16 >= 1.25x sd-scripts' per-block compile",
     f"{ratio('flux_loop', 'flux_sdscripts_compile'):.2f}x ({cell('flux_sdscripts_compile')})" if ratio("flux_loop", "flux_sdscripts_compile") else "not measured",
     None if ratio("flux_loop", "flux_sdscripts_compile") is None else ratio("flux_loop", "flux_sdscripts_compile") >= 1.25),
    ("FLUX fp8_fast <= 230 ms", cell("flux_fp8_loop"), at_most("flux_fp8_loop", 230)),
    ("SD 1.5 512² real loop <= 40 ms", cell("sd15_loop"), at_most("sd15_loop", 40)),
    ("SD 2.1 768² real loop (reported)", cell("sd21_loop"), None if got.get("sd21_loop") is None else True),
    ("SDXL real loop within 3% of the benchmark step", f"{cell('sdxl_loop')} / {cell('sdxl_bench')}", within("sdxl_loop", "sdxl_bench")),
    ("FLUX bf16 real loop within 3% of the benchmark step", f"{cell('flux_loop')} / {cell('flux_bench')}", within("flux_loop", "flux_bench")),
    ("FLUX fp8_fast real loop within 3% of the benchmark step", f"{cell('flux_fp8_loop')} / {cell('flux_fp8_bench')}", within("flux_fp8_loop", "flux_fp8_bench")),
]
print(f"\nIssue 56's targets, one call on one {card}:\n")
print("| target | measured | holds |\n|---|---|---|")
for name, value, holds in rows:
    print(f"| {name} | {value} | {'yes' if holds else ('-' if holds is None else 'no')} |")
print("\nsd-scripts in the same call: " + ", ".join(f"{k} {cell(k)}" for k in sorted(got) if "sdscripts" in k))
PY
