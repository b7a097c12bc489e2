#!/usr/bin/python3
"""Export scikit-learn's bundled datasets to data/builtin/*.csv for layerlab's built-ins.

Usage:  /usr/bin/python3 scripts/export_datasets.py [OUT_DIR]   (default: data/builtin)

Needs Debian's python3-sklearn (1.2.1 on Debian 12); reads only the copies bundled with
scikit-learn, so no network access. Each CSV has a header row f0,f1,...,f{N-1},label;
features written as repr(float) (shortest round-trip form), and the last column `label` is
the integer class id 0..C-1. Rows keep scikit-learn's order (layerlab splits them itself).
The output is deterministic: running it again gives byte-identical files.
"""
import csv
import os
import sys

from sklearn import datasets as skd

DATASETS = {
    "iris": skd.load_iris,
    "wine": skd.load_wine,
    "breast_cancer": skd.load_breast_cancer,
    "digits": skd.load_digits,
}


def export_one(name, loader, out_dir):
    bunch = loader()
    x, y = bunch.data, bunch.target
    rows, features = x.shape
    path = os.path.join(out_dir, name + ".csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["f%d" % i for i in range(features)] + ["label"])
        for row, label in zip(x.tolist(), y.tolist()):
            w.writerow([repr(float(v)) for v in row] + [int(label)])
    return rows, features, len(set(y.tolist()))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "data", "builtin")
    os.makedirs(out_dir, exist_ok=True)
    for name, loader in DATASETS.items():
        rows, features, classes = export_one(name, loader, out_dir)
        print("%-14s rows=%-5d features=%-3d classes=%d" % (name, rows, features, classes))


if __name__ == "__main__":
    main()
