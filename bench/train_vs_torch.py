#!/usr/bin/python3
"""Issue 15's headline figure: `layerlab train` as a whole process (start to exit) against
PyTorch's training loop alone (the peers' torch_mlp.py, its own train_seconds), on digits,
8 hidden layers of 128, relu, batch 32, momentum, 20 epochs, one thread. The two alternate,
ROUNDS times; medians and the ratio of medians are printed as JSON, with the load average
before and after.

  /usr/bin/python3 bench/train_vs_torch.py [--layerlab build/release/src/cli/layerlab]
      [--peers ../shared/peers] [--rounds 7] [--old OTHER_LAYERLAB]

--old adds a third column: another layerlab binary (the one before a change), alternating too.
"""
import argparse
import json
import os
import statistics
import subprocess
import time


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def layerlab_seconds(binary):
    cmd = [binary, "train", "--dataset", "digits", "--hidden-layers", "8", "--units", "128",
           "--activation", "relu", "--batch-size", "32", "--optimizer", "momentum",
           "--epochs", "20", "--threads", "1", "--json", "-q"]
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def torch_seconds(peers):
    cmd = ["/usr/bin/python3", os.path.join(peers, "torch_mlp.py"), "--dataset", "digits",
           "--depth", "8", "--width", "128", "--activation", "relu", "--batch", "32",
           "--epochs", "20", "--threads", "1"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["train_seconds"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layerlab", default="build/release/src/cli/layerlab")
    p.add_argument("--peers", default="../shared/peers")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--old", help="another layerlab binary to alternate with")
    a = p.parse_args()
    before = load()
    runs = {"layerlab_whole_process_s": [], "torch_training_loop_s": []}
    if a.old:
        runs["old_layerlab_whole_process_s"] = []
    layerlab_seconds(a.layerlab)  # warm the page cache
    for _ in range(a.rounds):
        runs["layerlab_whole_process_s"].append(layerlab_seconds(a.layerlab))
        runs["torch_training_loop_s"].append(torch_seconds(a.peers))
        if a.old:
            runs["old_layerlab_whole_process_s"].append(layerlab_seconds(a.old))
    med = {k: statistics.median(v) for k, v in runs.items()}
    out = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "load_before": before, "load_after": load(), "rounds": a.rounds, "median": med,
           "runs": runs,
           "speedup_vs_torch": med["torch_training_loop_s"] / med["layerlab_whole_process_s"]}
    if a.old:
        out["old_speedup_vs_torch"] = (med["torch_training_loop_s"] /
                                       med["old_layerlab_whole_process_s"])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
