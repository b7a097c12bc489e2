#!/usr/bin/python3
"""Generate PyTorch reference training trajectories for layerlab's C++ trainer.

Usage:  /usr/bin/python3 scripts/make_reference.py [--out DIR]   (default: tests/reference)

Needs Debian's python3-torch (1.13) and numpy; runs on the CPU only, single-threaded, in
float32. For every case in CASES it builds an MLP, exports its initial parameters and a small
synthetic data set, takes STEPS optimizer steps over fixed (unshuffled) batches and records
the loss of every step (computed in that step's forward pass, before its update), then the
final parameters. A C++ test loads the same weights and data, runs the same steps and
compares each loss. The output is deterministic: running the script again gives
byte-identical files. See tests/reference/README.md for the file format and semantics.
"""
import argparse
import json
import os

import torch
from torch import nn

ROWS = 64
INPUTS = 8
BATCH_SIZE = 16
STEPS = 50
NOISE = 0.1  # standard deviation of the noise added to regression targets

# name, activation, optimizer, learning_rate, momentum, weight_decay, layers, batch_norm,
# residual, classes (0 = regression), targets (regression outputs).
CASES = [
    dict(name="tanh_sgd", activation="tanh", optimizer="sgd", learning_rate=0.1,
         layers=[16, 16], classes=3),
    dict(name="relu_momentum_bn", activation="relu", optimizer="momentum", learning_rate=0.05,
         momentum=0.9, layers=[16, 16, 16], batch_norm=True, classes=3),
    dict(name="gelu_adam_l2", activation="gelu", optimizer="adam", learning_rate=0.01,
         weight_decay=0.001, layers=[16, 16], classes=3),
    dict(name="elu_adamw_residual", activation="elu", optimizer="adamw", learning_rate=0.01,
         weight_decay=0.1, layers=[16, 16, 16], residual=True, classes=3),
    dict(name="sigmoid_nesterov_mse", activation="sigmoid", optimizer="nesterov",
         learning_rate=0.1, momentum=0.9, layers=[16], targets=1),
    dict(name="selu_rmsprop", activation="selu", optimizer="rmsprop", learning_rate=0.001,
         layers=[16, 16], classes=3),
    dict(name="softplus_adagrad", activation="softplus", optimizer="adagrad", learning_rate=0.05,
         layers=[16, 16], classes=3),
    dict(name="leaky_relu_adam_bn_residual_mse", activation="leaky_relu", optimizer="adam",
         learning_rate=0.005, layers=[16, 16], batch_norm=True, residual=True, targets=2),
    dict(name="linear_sgd_wd", activation="linear", optimizer="sgd", learning_rate=0.05,
         weight_decay=0.01, layers=[16], classes=3),
]

CASE_DEFAULTS = dict(momentum=0.0, weight_decay=0.0, batch_norm=False, residual=False,
                     classes=0, targets=0)

ACTIVATIONS = {
    "relu": nn.ReLU,
    "leaky_relu": lambda: nn.LeakyReLU(negative_slope=0.01),
    "elu": lambda: nn.ELU(alpha=1.0),
    "selu": nn.SELU,
    "gelu": nn.GELU,  # exact erf form (approximate="none")
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "softplus": nn.Softplus,  # beta 1, threshold 20
    "linear": nn.Identity,
}


# ---------------------------------------------------------------------------------------------
# Model


class HiddenLayer(nn.Module):
    """Linear -> [BatchNorm1d] -> activation -> [+ input when residual and widths match]."""

    def __init__(self, n_in, n_out, activation, batch_norm, residual):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.bn = nn.BatchNorm1d(n_out, eps=1e-5, momentum=0.1) if batch_norm else None
        self.act = ACTIVATIONS[activation]()
        self.skip = residual and n_in == n_out

    def forward(self, x):
        z = self.linear(x)
        if self.bn is not None:
            z = self.bn(z)
        h = self.act(z)
        return h + x if self.skip else h


class MLP(nn.Module):
    def __init__(self, inputs, layers, outputs, activation, batch_norm, residual):
        super().__init__()
        widths = [inputs] + list(layers)
        self.hidden = nn.ModuleList(
            HiddenLayer(a, b, activation, batch_norm, residual)
            for a, b in zip(widths[:-1], widths[1:]))
        self.out = nn.Linear(widths[-1], outputs)

    def forward(self, x):
        for layer in self.hidden:
            x = layer(x)
        return self.out(x)

    def ordered_parameters(self):
        """Parameters in layerlab's flat order: per hidden layer weight [out][in], bias,
        then gamma, beta if batch norm; then the output layer's weight and bias."""
        params = []
        for layer in self.hidden:
            params += [layer.linear.weight, layer.linear.bias]
            if layer.bn is not None:
                params += [layer.bn.weight, layer.bn.bias]
        params += [self.out.weight, self.out.bias]
        return params


def init_parameters(model):
    """Xavier-uniform Linear weights, biases U(-0.1, 0.1); BN gamma U(0.5, 1.5), beta
    U(-0.1, 0.1). Draws from the global generator, in module order."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.uniform_(m.bias, -0.1, 0.1)
            elif isinstance(m, nn.BatchNorm1d):
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.1, 0.1)


def build_model(case, seed):
    torch.manual_seed(seed)
    outputs = case["classes"] if case["classes"] else case["targets"]
    model = MLP(INPUTS, case["layers"], outputs, case["activation"], case["batch_norm"],
                case["residual"])
    init_parameters(model)
    return model


def make_optimizer(case, params):
    name, lr, m, wd = (case["optimizer"], case["learning_rate"], case["momentum"],
                       case["weight_decay"])
    opt = torch.optim
    if name == "sgd":
        return opt.SGD(params, lr=lr, weight_decay=wd, foreach=False)
    if name == "momentum":
        return opt.SGD(params, lr=lr, momentum=m, weight_decay=wd, foreach=False)
    if name == "nesterov":
        return opt.SGD(params, lr=lr, momentum=m, nesterov=True, weight_decay=wd,
                       foreach=False)
    if name == "adam":
        return opt.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd,
                        foreach=False)
    if name == "adamw":
        return opt.AdamW(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd,
                         foreach=False)
    if name == "rmsprop":
        return opt.RMSprop(params, lr=lr, alpha=0.99, eps=1e-8, weight_decay=wd,
                           foreach=False)
    if name == "adagrad":
        return opt.Adagrad(params, lr=lr, eps=1e-10, weight_decay=wd, foreach=False)
    raise ValueError("unknown optimizer: " + name)


# ---------------------------------------------------------------------------------------------
# Data


def make_data(case, seed):
    """x ~ N(0, 1) [ROWS, INPUTS]; classification: y = argmax(x @ T) (class ids as float32);
    regression: y = tanh(x @ T) + NOISE * N(0, 1) [ROWS, targets]."""
    gen = torch.Generator().manual_seed(1000 + seed)
    x = torch.randn(ROWS, INPUTS, generator=gen)
    if case["classes"]:
        t = torch.randn(INPUTS, case["classes"], generator=gen)
        y = torch.argmax(x @ t, dim=1).to(torch.float32)
    else:
        t = torch.randn(INPUTS, case["targets"], generator=gen)
        y = torch.tanh(x @ t) + NOISE * torch.randn(ROWS, case["targets"], generator=gen)
    return x.contiguous(), y.contiguous()


def batch(x, y, step):
    start = (step * BATCH_SIZE) % ROWS
    return x[start:start + BATCH_SIZE], y[start:start + BATCH_SIZE]


# ---------------------------------------------------------------------------------------------
# Flattening (float32 values as Python floats: exact, and json writes them round-trippably)


def flatten(tensor):
    return [float(v) for v in tensor.detach().to(torch.float32).flatten().tolist()]


def flat_parameters(model):
    ordered = model.ordered_parameters()
    flat = []
    for p in ordered:
        flat += flatten(p)
    total = sum(p.numel() for p in model.parameters())
    assert len(ordered) == len(list(model.parameters())), "parameter list mismatch"
    assert len(flat) == total, "flat count %d != torch count %d" % (len(flat), total)
    return flat


# ---------------------------------------------------------------------------------------------
# Trajectory


def run_case(case, seed):
    model = build_model(case, seed)
    x, y = make_data(case, seed)
    initial = flat_parameters(model)

    if case["classes"]:
        loss_fn = nn.CrossEntropyLoss()
        target_of = lambda yb: yb.to(torch.int64)
    else:
        loss_fn = nn.MSELoss()
        target_of = lambda yb: yb
    optimizer = make_optimizer(case, model.ordered_parameters())

    model.train()
    losses = []
    for step in range(STEPS):
        xb, yb = batch(x, y, step)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), target_of(yb))
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))

    return {
        "name": case["name"],
        "torch_version": torch.__version__,
        "seed": seed,
        "params": {
            "layers": list(case["layers"]),
            "activation": case["activation"],
            "batch_norm": case["batch_norm"],
            "residual": case["residual"],
            "optimizer": case["optimizer"],
            "learning_rate": case["learning_rate"],
            "momentum": case["momentum"],
            "weight_decay": case["weight_decay"],
            "batch_size": BATCH_SIZE,
        },
        "task": {"classes": case["classes"], "targets": case["targets"]},
        "inputs": INPUTS,
        "rows": ROWS,
        "x": flatten(x),
        "y": flatten(y),
        "initial_parameters": initial,
        "losses": losses,
        "final_parameters": flat_parameters(model),
    }


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(root, "tests", "reference"),
                    help="output folder (default: tests/reference)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.set_default_dtype(torch.float32)
    os.makedirs(args.out, exist_ok=True)

    for index, spec in enumerate(CASES, start=1):
        case = dict(CASE_DEFAULTS, **spec)
        if case["classes"]:
            case["targets"] = 0
        ref = run_case(case, seed=index)
        path = os.path.join(args.out, case["name"] + ".json")
        with open(path, "w") as f:
            json.dump(ref, f, separators=(",", ":"))
            f.write("\n")
        print("%-34s %5d params  loss %.6f -> %.6f" % (
            case["name"], len(ref["initial_parameters"]), ref["losses"][0], ref["losses"][-1]))


if __name__ == "__main__":
    main()
