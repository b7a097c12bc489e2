#!/usr/bin/python3
"""PyTorch training steps per second on the same networks as bench/engine_bench.cc.

Reuses the peer harness (../shared/peers/torch_mlp.py, run_steps): synthetic data, a pool
of 8 batches cycled, 10 warm-up steps, momentum 0.9, relu, Glorot init, softmax
cross-entropy. Writes one JSON object: {"runs": [{name, ms_per_step, steps_per_second}]}.

  /usr/bin/python3 bench/torch_steps.py --peers ../shared/peers --out torch.json [--quick]
"""
import argparse
import json
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see the peers' README: threading pitfall


def shapes(quick):
    grid = []
    for threads in (1, 2):
        widths = (64, 256) if quick else (64, 256, 1024)
        for width in widths:
            for depth in (1, 4, 16):
                for batch in (32, 128):
                    grid.append((width, depth, batch, width, threads))
        grid.append((1024, 4, 256, 1024, threads))
        grid.append((256, 2, 128, 784, threads))
        grid.append((128, 8, 32, 64, threads))
    return grid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=1.0, help="time per shape")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.peers))
    import torch_mlp  # noqa: E402  (imports torch)

    runs = []
    for width, depth, batch, inputs, threads in shapes(a.quick):
        torch_mlp._set_threads(threads)
        cfg = dict(torch_mlp.DEFAULTS)
        cfg.update(dataset="synthetic:%d:10:0" % inputs, depth=depth, width=width, batch=batch,
                   steps=10**9, max_seconds=a.seconds, optimizer="momentum", activation="relu")
        r = torch_mlp.run_steps(cfg)
        name = "W%d/D%d/B%d/I%d/T%d" % (width, depth, batch, inputs, threads)
        runs.append({"name": name, "ms_per_step": r["ms_per_step"],
                     "steps_per_second": r["steps_per_second"]})
        print(name, "%.3f ms/step" % r["ms_per_step"], file=sys.stderr, flush=True)
    import torch
    with open(a.out, "w") as f:
        json.dump({"torch_version": torch.__version__, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
