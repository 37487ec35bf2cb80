"""How the sd-scripts step timers here time a training step: the first step alone (its warm-up),
two more, then the mean of `n` steps, alternating between two input sets, synchronised on the GPU."""
import time

import torch


def time_steps(step, inputs, n=6):
    """Returns (first_step_s, step_ms)."""
    torch.cuda.synchronize()
    t0 = time.time()
    step(inputs[0])
    torch.cuda.synchronize()
    first = time.time() - t0
    for i in range(2):
        step(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    t0 = time.time()
    for i in range(n):
        step(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    return first, (time.time() - t0) * 1000 / n
