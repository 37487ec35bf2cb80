"""One row of the text-encoder matrices (text_encoder_matrix.sh, flux_text_encoder_matrix.sh): a run's
exit code, warm-up seconds, first step, median step (steps 6 on), peak memory and its last error line.
  python3 matrix_row.py SETTING TRAINED EXIT EVENTS.jsonl LOG"""
import json
import sys

setting, trained, code, events, log = sys.argv[1:]
lines = [json.loads(l) for l in open(events) if l.startswith("{")]
warmup = sum(e["seconds"] for e in lines if e.get("type") == "warmup")
steps = [e for e in lines if e.get("type") == "step"]
times = sorted(e["step_ms"] for e in steps[5:])
median = f"{times[len(times) // 2]:.1f}" if times else "-"
peak = f"{steps[-1]['peak_mem_mb']:.0f}" if steps else "-"
errors = [l.strip() for l in open(log, errors="replace") if "error" in l.lower()]
first = f"{steps[0]['step_ms']:.0f}" if steps else "-"
print(f"| {setting} | {trained} | {code} | {warmup:.1f} | {first} | {median} | {peak} | {errors[-1][:160] if errors else ''} |", flush=True)
