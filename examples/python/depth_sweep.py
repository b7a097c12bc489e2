#!/usr/bin/env python3
"""The example depth sweep, notebook style: submit examples/depth_sweep.yaml to a running
`layerlab serve`, wait for it with a progress line, and plot validation accuracy against
depth per activation (mean and standard deviation over seeds, one panel per dataset),
saved as a PNG.

    layerlab serve --workers 2 &            # the server and its workers, on 127.0.0.1:8080
    PYTHONPATH=clients/python /usr/bin/python3 examples/python/depth_sweep.py

Options: --server URL (default LAYERLAB_URL or http://127.0.0.1:8080), --study FILE (another
study file with hidden_layers and activation), --out PNG. The token, if the server has one,
comes from LAYERLAB_TOKEN. Running it again waits for (or just plots) the existing study.
Needs pandas and matplotlib (Debian: python3-pandas, python3-matplotlib).
"""

import argparse
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

import layerlab  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def progress(study):
    print(f"\r{study['name']}: {study['finished']}/{study['total']} trials finished",
          end="", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default=None)
    ap.add_argument("--study", default=str(HERE.parent / "depth_sweep.yaml"))
    ap.add_argument("--out", default="depth_sweep.png")
    args = ap.parse_args()

    lab = layerlab.Client(args.server)
    text = pathlib.Path(args.study).read_text()
    try:
        name = lab.submit(text)["name"]
    except layerlab.LayerlabError as e:
        if e.code != "failed_precondition":  # 409: submitted before; wait for it again
            raise
        name = re.search(r"^name:\s*(\S+)", text, re.M).group(1)
    study = lab.wait(name, progress=progress, poll=1.0)
    print(file=sys.stderr)

    df = lab.trials(name, status=["completed", "early_stopped"])
    metric = study["metric"]
    stats = (df.groupby(["dataset", "activation", "hidden_layers"])["value"]
               .agg(["mean", "std", "count"]).reset_index())
    datasets = sorted(stats["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 4), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for activation, g in stats[stats["dataset"] == dataset].groupby("activation"):
            g = g.sort_values("hidden_layers")
            ax.errorbar(g["hidden_layers"], g["mean"], yerr=g["std"].fillna(0), marker="o",
                        capsize=3, label=activation)
        ax.set_xscale("log", base=2)
        depths = sorted(stats["hidden_layers"].unique())
        ax.set_xticks(depths, [str(d) for d in depths])
        ax.minorticks_off()
        ax.set_xlabel("hidden layers")
        ax.set_ylabel(f"{metric} (mean ± sd over seeds)")
        ax.set_title(dataset)
        ax.grid(True, alpha=0.3)
        ax.legend(title="activation")
    fig.suptitle(f"{name}: {metric} against depth")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"{len(df)} trials plotted to {args.out}")


if __name__ == "__main__":
    main()
