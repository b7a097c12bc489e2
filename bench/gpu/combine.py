#!/usr/bin/env python3
"""Joins gpu_bench's and torch_bench's JSON (bench/gpu/run.sh) into one object with the ratios
against the issue-6 targets:
  (a) single trial: layerlab >= 3x PyTorch per trial;
  (b) packs: layerlab >= the faster of PyTorch's two packed variants (aim 2x), and, as
      DESIGN.md says, packs >= 1000x per-trial PyTorch;
  (c) large MLP: layerlab >= 0.9x PyTorch's FLOP/s in each precision.
Usage: combine.py LAYERLAB.json TORCH.json [--note TEXT] > OUT.json"""
import argparse
import json


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def by(items, key):
    return {i[key]: i for i in items or [] if "skipped" not in i and "error" not in i}


def load(path):
    """A side's JSON, or {} when that benchmark failed before printing it."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("layerlab")
    p.add_argument("torch")
    p.add_argument("--note", default="")
    a = p.parse_args()
    ours, theirs = load(a.layerlab), load(a.torch)
    r = {}
    if "single" in ours and "single" in theirs:
        r["single_vs_torch_per_trial"] = {
            "ratio": ratio(ours["single"]["trials_per_hour"], theirs["single"]["trials_per_hour"]),
            "target": 3.0}
    torch_single = theirs.get("single", {}).get("trials_per_hour")
    best_torch = {}
    for item in theirs.get("packs", []):
        if "trials_per_hour" in item:
            best_torch[item["pack"]] = max(best_torch.get(item["pack"], 0), item["trials_per_hour"])
    r["packs_vs_torch_bmm"] = [
        {"pack": k, "ratio": ratio(v["trials_per_hour"], best_torch.get(k)), "target": 1.0, "aim": 2.0}
        for k, v in by(ours.get("packs"), "pack").items()]
    r["packs_vs_torch_per_trial"] = [
        {"pack": k, "ratio": ratio(v["trials_per_hour"], torch_single), "target": 1000.0}
        for k, v in by(ours.get("packs"), "pack").items()]
    theirs_large = by(theirs.get("large"), "precision")
    r["large_vs_torch_flops"] = [
        {"precision": k, "ratio": ratio(v["tflops"], theirs_large.get(k, {}).get("tflops")),
         "target": 0.9}
        for k, v in by(ours.get("large"), "precision").items()]
    for group in r.values():
        for item in group if isinstance(group, list) else [group]:
            item["met"] = item["ratio"] is not None and item["ratio"] >= item["target"]
    print(json.dumps({"note": a.note, "ratios": r, "layerlab": ours, "pytorch": theirs}, indent=2))


if __name__ == "__main__":
    main()
