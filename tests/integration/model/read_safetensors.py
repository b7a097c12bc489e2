#!/usr/bin/python3
"""An independent reader of layerlab's model files, for the tests: parses the safetensors
format itself (numpy only), recomputes the forward pass from the tensors and the metadata
(input standardisation, layers, activation, batch norm with running statistics, residual)
and compares its predictions with the ones `layerlab predict` printed.

  read_safetensors.py MODEL DATA.csv PREDICTIONS [--probabilities]

DATA.csv has a header; the model's feature columns are read by name. PREDICTIONS is the
output of `layerlab predict --model MODEL --data DATA.csv [--probabilities]`. Classes must be
equal, probabilities within 1e-5, regression values within 1e-4 (relative above 1). Prints
one summary line (and the model's metadata as JSON on the line before); exits 1 on the first
mismatch, naming it.
"""
import csv
import json
import math
import struct
import sys

import numpy as np


def fail(message):
    print("MISMATCH: " + message)
    sys.exit(1)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        fail(f"{path}: {len(data)} bytes, too short")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        fail(f"{path}: header length {n} past the end")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    spans = []
    for name, info in header.items():
        if info["dtype"] != "F32":
            fail(f"{name}: dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        count = int(np.prod(shape)) if shape else 1
        if end - begin != 4 * count or end > len(body):
            fail(f"{name}: offsets {begin}, {end} for shape {shape}")
        tensors[name] = np.frombuffer(body[begin:end], dtype="<f4").reshape(shape)
        spans.append((begin, end))
    spans.sort()
    covered = 0
    for begin, end in spans:
        if begin != covered:
            fail(f"data not contiguous at byte {covered}")
        covered = end
    if covered != len(body):
        fail(f"{len(body) - covered} trailing bytes")
    return tensors, metadata


SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805
ERF = np.vectorize(math.erf)


def activation(name, z):
    if name == "linear":
        return z
    if name == "relu":
        return np.maximum(z, 0.0)
    if name == "leaky_relu":
        return np.where(z > 0, z, 0.01 * z)
    if name == "elu":
        return np.where(z > 0, z, np.expm1(np.minimum(z, 0.0)))
    if name == "selu":
        return SELU_SCALE * np.where(z > 0, z, SELU_ALPHA * np.expm1(np.minimum(z, 0.0)))
    if name == "gelu":
        return 0.5 * z * (1.0 + ERF(z / math.sqrt(2.0)))
    if name == "tanh":
        return np.tanh(z)
    if name == "sigmoid":
        return 1.0 / (1.0 + np.exp(-z))
    if name == "softplus":
        return np.where(z > 20.0, z, np.log1p(np.exp(np.minimum(z, 20.0))))
    fail(f"unknown activation {name}")


def forward(tensors, arch, x):
    """x: raw features (rows, inputs) as float32 -> outputs (rows, outputs) as float64."""
    # The standardisation in float32, as the training applied it.
    h = ((x - tensors["input.mean"]) / tensors["input.std"]).astype(np.float64)
    eps = float(arch["batch_norm_eps"])
    for i, width in enumerate(arch["hidden"]):
        p = f"hidden.{i}"
        w = tensors[p + ".weight"].astype(np.float64)
        z = h @ w.T + tensors[p + ".bias"]
        if arch["batch_norm"]:
            mean = tensors[p + ".bn.running_mean"].astype(np.float64)
            var = tensors[p + ".bn.running_var"].astype(np.float64)
            z = (z - mean) / np.sqrt(var + eps) * tensors[p + ".bn.gamma"] + tensors[p + ".bn.beta"]
        a = activation(arch["activation"], z)
        if arch["residual"] and w.shape[0] == w.shape[1]:
            a = a + h
        h = a
    return h @ tensors["output.weight"].astype(np.float64).T + tensors["output.bias"]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    probabilities = "--probabilities" in sys.argv
    model_path, data_path, predictions_path = args
    tensors, metadata = read_safetensors(model_path)
    arch = json.loads(metadata["architecture"])
    task = json.loads(metadata["task"])
    features = json.loads(metadata["features"])
    print(json.dumps(metadata, sort_keys=True))

    with open(data_path, newline="") as f:
        rows = list(csv.reader(f))
    header = [c.strip() for c in rows[0]]
    columns = [header.index(name) for name in features]
    x = np.array([[float(r[c]) for c in columns] for r in rows[1:] if r], dtype=np.float64)
    out = forward(tensors, arch, x.astype(np.float32))

    with open(predictions_path, newline="") as f:
        printed = list(csv.reader(f))
    if len(printed) != len(out):
        fail(f"layerlab printed {len(printed)} rows, the data has {len(out)}")
    if task["type"] == "classification":
        names = task.get("class_names") or [str(c) for c in range(task["classes"])]
        z = out - out.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        worst = 0.0
        for r, line in enumerate(printed):
            mine = names[int(np.argmax(out[r]))]
            if line[0] != mine:
                fail(f"row {r + 1}: layerlab says {line[0]}, this reader {mine} "
                     f"(probabilities {p[r].tolist()})")
            if probabilities:
                theirs = np.array([float(v) for v in line[1:]])
                if theirs.shape != p[r].shape:
                    fail(f"row {r + 1}: {len(theirs)} probabilities for {len(p[r])} classes")
                worst = max(worst, float(np.abs(theirs - p[r]).max()))
                if worst > 1e-5:
                    fail(f"row {r + 1}: probabilities {theirs.tolist()} vs {p[r].tolist()}")
        print(f"OK {len(out)} rows: classes equal; largest probability difference {worst:.3g}")
    else:
        worst = 0.0
        for r, line in enumerate(printed):
            theirs = np.array([float(v) for v in line])
            diff = np.abs(theirs - out[r]) / np.maximum(1.0, np.abs(out[r]))
            worst = max(worst, float(diff.max()))
            if worst > 1e-4:
                fail(f"row {r + 1}: layerlab {theirs.tolist()} vs this reader {out[r].tolist()}")
        print(f"OK {len(out)} rows: values equal within {worst:.3g} (relative)")


if __name__ == "__main__":
    main()
