"""What a runner's training run left behind, for the GPU scripts that compare runs: the step
losses of an events file (--events jsonl) and the tensors of a safetensors file as float64."""
import json
import struct


def read_events(events_path):
    """Every JSON event of a run's --events jsonl output, in order."""
    with open(events_path) as f:
        return [json.loads(line) for line in f]


def step_losses(events_path):
    return [e["loss"] for e in read_events(events_path) if e["type"] == "step"]


def safetensors_float64(path):
    import torch
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    return {k: torch.frombuffer(bytearray(data[v["data_offsets"][0]:v["data_offsets"][1]]), dtype=dtypes[v["dtype"]]).double()
            for k, v in header.items()}


def relative_distance(a, b):
    """|a - b| / |b| over every tensor of two files with the same keys."""
    num = sum(float((a[k] - b[k]).norm() ** 2) for k in a)
    den = sum(float(b[k].norm() ** 2) for k in a)
    return (num / den) ** 0.5
