#!/usr/bin/env python3
"""PyTorch's side of bench/gpu/run.sh: the workloads of bench/gpu/gpu_bench.cc, which are the
peers' GPU anchor's (../shared/peers/gpu/torch_gpu_anchor.py), on one device.
  (a) single: one small trial at a time, an nn.Sequential with torch.optim.SGD (the anchor's
      one_trial); the timed part is the training loop, as in the anchor.
  (b) packs: K same-shape trials with stacked weights [K, in, out] and torch.baddbmm, twice:
      'optim' is the anchor's (torch.optim.SGD over the stacked tensors, one learning rate);
      'manual' gives each member its own learning rate, as layerlab's packs have, with a
      hand-written batched SGD-momentum step.
  (c) large: one large MLP's training FLOP/s per precision (the anchor's big(): fp32 without
      TF32, tf32 through allow_tf32, bf16 through autocast with fp32 master weights).
Each part stops repeating once --time-cap seconds are spent. Prints one JSON object."""
import argparse
import datetime
import json
import statistics
import time

import torch


def parse():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--device", default="cuda")
    a.add_argument("--threads", type=int, default=1, help="host threads (cpu device)")
    a.add_argument("--parts", default="single,packs,large")
    for name, default in [("samples", 1440), ("inputs", 64), ("classes", 10), ("width", 128),
                          ("depth", 4), ("batch", 32), ("epochs", 5), ("single-reps", 5),
                          ("pack-reps", 2), ("large-width", 4096), ("large-depth", 8),
                          ("large-batch", 4096), ("large-classes", 1000), ("large-steps", 10)]:
        a.add_argument("--" + name, type=int, default=default)
    a.add_argument("--large-epochs", type=int, default=3,
                   help="accepted so that run.sh gives both sides one command line; the large "
                        "MLP runs 3 warm-up steps, then --large-steps timed ones")
    a.add_argument("--packs", default="64,512,4096")
    a.add_argument("--precisions", default="fp32,tf32,bf16")
    a.add_argument("--time-cap", type=float, default=60.0)
    return a.parse_args()


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def mlp(inp, width, depth, classes):
    layers, d = [], inp
    for _ in range(depth):
        layers += [torch.nn.Linear(d, width), torch.nn.ReLU()]
        d = width
    layers.append(torch.nn.Linear(d, classes))
    return torch.nn.Sequential(*layers)


def data(a, dev):
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(a.samples, a.inputs, generator=g).to(dev)
    y = torch.randint(0, a.classes, (a.samples,), generator=g).to(dev)
    return x, y


def one_trial(a, dev, epochs):
    x, y = data(a, dev)
    m = mlp(a.inputs, a.width, a.depth, a.classes).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    n = a.samples
    sync(dev)
    t = time.perf_counter()
    for _ in range(epochs):
        perm = torch.randperm(n, device=dev)
        for i in range(0, n, a.batch):
            idx = perm[i:i + a.batch]
            opt.zero_grad(set_to_none=True)
            loss = lossf(m(x[idx]), y[idx])
            loss.backward()
            opt.step()
    sync(dev)
    return time.perf_counter() - t, float(loss)


def packed(a, dev, k, epochs, step):
    x, y = data(a, dev)
    dims = [a.inputs] + [a.width] * a.depth + [a.classes]
    ws = [(torch.randn(k, i, o, device=dev) * (2 / i) ** 0.5).requires_grad_()
          for i, o in zip(dims[:-1], dims[1:])]
    bs = [torch.zeros(k, 1, o, device=dev, requires_grad=True) for o in dims[1:]]
    params = ws + bs
    if step == "optim":
        opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    else:  # per-member learning rates, as gpu_bench's packs: 0.005 to 0.018
        lr = 0.01 * 2.0 ** ((torch.arange(k, device=dev) % 8 - 3.5) / 4.0)
        neg_lr = (-lr).view(k, 1, 1)
        bufs = [torch.zeros_like(p) for p in params]
    n = a.samples
    sync(dev)
    t = time.perf_counter()
    for _ in range(epochs):
        perm = torch.randperm(n, device=dev)
        for i in range(0, n, a.batch):
            idx = perm[i:i + a.batch]
            h = x[idx].unsqueeze(0).expand(k, -1, -1)
            for j, (w, b) in enumerate(zip(ws, bs)):
                h = torch.baddbmm(b, h, w)
                if j < len(ws) - 1:
                    h = torch.relu(h)
            loss = torch.nn.functional.cross_entropy(
                h.reshape(-1, a.classes), y[idx].repeat(k), reduction="sum") / idx.numel()
            if step == "optim":
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            else:
                for p in params:
                    p.grad = None
                loss.backward()
                with torch.no_grad():
                    for p, buf in zip(params, bufs):
                        buf.mul_(0.9).add_(p.grad)
                        p.addcmul_(neg_lr, buf)
    sync(dev)
    return time.perf_counter() - t, float(loss) / k


def repeat(run, reps, cap):
    runs, start, last = [], time.perf_counter(), None
    for r in range(reps):
        if r and time.perf_counter() - start > cap:
            break
        s, last = run()
        runs.append(s)
    return runs, last


def single_part(a, dev):
    one_trial(a, dev, 1)  # warm-up, as the anchor
    runs, loss = repeat(lambda: one_trial(a, dev, a.epochs), a.single_reps, a.time_cap)
    s = statistics.median(runs)
    return {"pack": 1, "runs_seconds": runs, "seconds": s, "trials_per_hour": 3600 / s,
            "final_train_loss": loss}


def packs_part(a, dev):
    out, start = [], time.perf_counter()
    packed(a, dev, 8, 1, "optim")  # warm-up, as the anchor
    for step in ("optim", "manual"):
        for k in [int(v) for v in a.packs.split(",")]:
            left = a.time_cap - (time.perf_counter() - start)
            if left <= 0:
                out.append({"pack": k, "step": step, "skipped": "time cap"})
                continue
            runs, loss = repeat(lambda: packed(a, dev, k, a.epochs, step), a.pack_reps, left)
            s = statistics.median(runs)
            out.append({"pack": k, "step": step, "runs_seconds": runs, "seconds": s,
                        "trials_per_hour": k * 3600 / s, "mean_final_batch_loss": loss})
    return out


def large_run(a, dev, mode):
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
    elif mode != "fp32":
        return {"precision": mode, "error": "the cpu device computes in fp32 only"}
    w, classes = a.large_width, a.large_classes
    m = mlp(w, w, a.large_depth, classes).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    x = torch.randn(a.large_batch, w, device=dev)
    y = torch.randint(0, classes, (a.large_batch,), device=dev)

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=mode == "bf16"):
            loss = torch.nn.functional.cross_entropy(m(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    sync(dev)
    t = time.perf_counter()
    for _ in range(a.large_steps):
        step()
    sync(dev)
    s = (time.perf_counter() - t) / a.large_steps
    params = sum(p.numel() for p in m.parameters())
    return {"precision": mode, "width": w, "depth": a.large_depth, "batch": a.large_batch,
            "classes": classes, "parameters": params, "step_ms": s * 1e3,
            "tflops": 6 * params * a.large_batch / s / 1e12}


def large_part(a, dev):
    out, start = [], time.perf_counter()
    for mode in a.precisions.split(","):
        if time.perf_counter() - start > a.time_cap:
            out.append({"precision": mode, "skipped": "time cap"})
        else:
            out.append(large_run(a, dev, mode))
    return out


def main():
    a = parse()
    dev = torch.device(a.device)
    torch.set_num_threads(a.threads)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    out = {"tool": "torch_bench", "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
           "device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
           "threads": torch.get_num_threads()}
    parts = a.parts.split(",")
    if "single" in parts:
        out["single"] = single_part(a, dev)
    if "packs" in parts:
        out["packs"] = packs_part(a, dev)
    if "large" in parts:
        out["large"] = large_part(a, dev)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
