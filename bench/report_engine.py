#!/usr/bin/python3
"""Merges engine_bench (Google Benchmark JSON) and torch_steps.py output into a markdown
table: layerlab and PyTorch steps/s on the same networks, the ratio, and layerlab's GEMM
throughput as a share of OpenBLAS SGEMM on the same matrix shapes; then, where engine_bench
ran packs of 16, their member steps/s against single trials': batched whole, and in the
parts train_pack trains them in (what `--pack 16` gets).

  /usr/bin/python3 bench/report_engine.py engine.json torch.json > table.md
"""
import json
import sys


def main():
    engine = json.load(open(sys.argv[1]))
    torch = {r["name"]: r for r in json.load(open(sys.argv[2]))["runs"]}
    steps, sgemm, packs, trained = {}, {}, {}, {}
    for b in engine["benchmarks"]:
        kind, rest = b["name"].split("/", 1)
        name = rest.split("/min_time")[0]
        if kind == "step":
            steps[name] = b
        elif kind == "sgemm":
            sgemm[name] = b
        elif kind == "pack16":
            packs[name] = b
        elif kind == "pack16_as_trained":
            trained[name] = b
    print("| network (width/depth/batch/inputs/threads) | layerlab steps/s | PyTorch steps/s "
          "| ratio | layerlab GEMM GFLOP/s | SGEMM same shapes GFLOP/s | share of SGEMM |")
    print("|---|---|---|---|---|---|---|")
    for name, b in steps.items():
        ours = b["steps_per_second"]
        peer = torch.get(name)
        ratio = ours / peer["steps_per_second"] if peer else float("nan")
        g = b["gemm_gflops"] / 1e9 if b["gemm_gflops"] > 1e6 else b["gemm_gflops"]
        s = sgemm[name]["gemm_gflops"]
        s = s / 1e9 if s > 1e6 else s
        print("| %s | %.0f | %s | %s | %.1f | %.1f | %.0f%% |" % (
            name, ours, "%.0f" % peer["steps_per_second"] if peer else "-",
            "%.2fx" % ratio if peer else "-", g, s, 100 * g / s))
    if not packs:
        return
    print()
    print("| network, one thread | single trials, steps/s | packs of 16 batched whole, "
          "member steps/s | / single | `--pack 16` as trained: parts of | member steps/s "
          "| / single | `--pack auto` (1 on the CPU) against the better |")
    print("|---|---|---|---|---|---|---|---|")
    for name, b in packs.items():
        single = steps[name]["steps_per_second"]
        packed = b["member_steps_per_second"]
        # A part of 1 is the single trial's computation, a part of 16 the batched one's:
        # engine_bench measures only the parts in between.
        part = int(b["trained_in_parts_of"])
        as_trained = (single if part == 1 else packed if part == 16
                      else trained[name]["member_steps_per_second"])
        print("| %s | %.0f | %.0f | %.2fx | %d | %.0f | %.2fx | %.2fx |" % (
            name, single, packed, packed / single, part, as_trained, as_trained / single,
            min(1.0, single / max(packed, as_trained))))


if __name__ == "__main__":
    main()
