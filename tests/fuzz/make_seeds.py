#!/usr/bin/env python3
"""Writes the generated seed inputs under tests/fuzz/seeds/ (committed; rerun after changing
an input layout). The text seeds of the study, CSV, LIBSVM and gzip targets come from
tests/data and examples/ as they are (scripts/fuzz.sh collects them); these are the seeds
that need building: IDX pairs in idx_fuzzer.cc's layout, safetensors models, queries for the
text loaders, JSON study bodies, multi-member gzip files, HTTP requests."""
import gzip
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")


def put(target, name, data):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, mtime=0)


# ---- IDX: byte 0 classes, LE32 images length, images, labels. ----
def idx(dims, values):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + bytes(values)


def idx_input(images, labels, classes=0):
    return bytes([classes]) + struct.pack("<I", len(images)) + images + labels


imgs = idx([4, 2, 2], range(16))
labs = idx([4], [0, 1, 2, 1])
put("idx", "plain", idx_input(imgs, labs))
put("idx", "classes", idx_input(imgs, labs, classes=3))
put("idx", "gzip", idx_input(gz(imgs), gz(labs)))
put("idx", "one_dim", idx_input(idx([3, 5], range(15)), idx([3], [1, 0, 1]), classes=2))
put("idx", "3d_items", idx_input(idx([2, 2, 2, 2], range(16)), idx([2], [0, 1])))

# ---- safetensors: models in layerlab.mlp/1, and plain tensor files. ----
def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, (shape, values) in tensors.items():
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def model(hidden, outputs, batch_norm=False, residual=False, task=None, activation="relu"):
    inputs = 2
    arch = {"inputs": inputs, "hidden": hidden, "outputs": outputs, "activation": activation,
            "batch_norm": batch_norm, "batch_norm_eps": 1e-05, "residual": residual}
    task = task or {"type": "classification", "classes": outputs, "class_names": ["a", "b"][:outputs]}
    t = {"input.mean": ([inputs], [0.5, -0.25]), "input.std": ([inputs], [1.0, 2.0])}
    fan_in = inputs
    for i, w in enumerate(hidden):
        t["hidden.%d.weight" % i] = ([w, fan_in], [0.1 * (k + 1) for k in range(w * fan_in)])
        t["hidden.%d.bias" % i] = ([w], [0.0] * w)
        if batch_norm:
            t["hidden.%d.bn.gamma" % i] = ([w], [1.0] * w)
            t["hidden.%d.bn.beta" % i] = ([w], [0.0] * w)
            t["hidden.%d.bn.running_mean" % i] = ([w], [0.0] * w)
            t["hidden.%d.bn.running_var" % i] = ([w], [1.0] * w)
        fan_in = w
    t["output.weight"] = ([outputs, fan_in], [-0.1 * (k + 1) for k in range(outputs * fan_in)])
    t["output.bias"] = ([outputs], [0.0] * outputs)
    meta = {"format": "layerlab.mlp/1", "architecture": json.dumps(arch), "task": json.dumps(task),
            "features": json.dumps(["x", "y"]), "dataset": "csv:x.csv", "trial": "3"}
    return safetensors(t, meta)


def header_form(st):
    """The harness's second layout: header JSON, NUL, data (no length prefix)."""
    n = struct.unpack("<Q", st[:8])[0]
    return st[8:8 + n] + b"\0" + st[8 + n:]


put("safetensors", "model_mlp", model([3], 2))
put("safetensors", "model_mlp_header_form", header_form(model([3], 2)))
put("safetensors", "model_bn_header_form",
    header_form(model([2], 2, batch_norm=True, task={"type": "classification", "classes": 2})))
put("safetensors", "model_bn", model([2, 2], 2, batch_norm=True, residual=True, activation="tanh"))
put("safetensors", "model_regression", model([], 1, task={"type": "regression", "targets": 1}))
put("safetensors", "tensors_only", safetensors({"a": ([2, 2], [1, 2, 3, 4]), "b": ([0], [])}))
put("safetensors", "metadata_only", safetensors({}, {"k": "v"}))

# ---- CSV and LIBSVM with a dataset query after a NUL (data_support.h). ----
put("csv", "regression_two_labels", "a,b,y,z\n1,2,3,4\n5,6,7,8\n9,10,11,12\n\0label=y,z&task=regression")
put("csv", "named_label", 'x,"label",w\n1,"cat",2\n3,dog,4\n5,"cat",6\n\0label=label')
put("csv", "classes", "p,q,k\n0.5,1e3,0\n-1,2,1\n3,4,2\n\0classes=3")
put("csv", "quoted", 'a,"b ""q""",c\n"1","2",x\n3,4,y\n')
put("csv", "gzip_query", gz(b"a,b\n1,0\n2,1\n") + b"\0task=classification")
put("libsvm", "features", "1 1:0.5 3:2\n-1 2:1\n+1 1:1 2:1 3:1\n\0features=4")
put("libsvm", "regression", "0.5 1:1 # comment\n1.5 2:1\n\0task=regression")
put("libsvm", "classes", "0 1:1\n2 1:2\n1 2:3\n\0classes=3")

# ---- gzip: members, empty member, stored block. ----
put("gzip", "two_members", gz(b"a,b\n1,2\n") + gz(b"3,4\n"))
put("gzip", "empty_member", gz(b""))
put("gzip", "stored", gzip.compress(b"x" * 40, compresslevel=0, mtime=0))
put("gzip", "plain_text", "not gzip at all\n")

# ---- Study files as JSON bodies (the server's JSON path). ----
put("study", "json_grid.json", json.dumps({
    "name": "j-grid", "datasets": ["iris", "spirals?n=200&classes=2"], "method": "grid",
    "seeds": [0, 1], "metric": {"name": "val_loss"},
    "parameters": {"hidden_layers": {"values": [1, 2]}, "units": {"value": 16},
                   "activation": {"values": ["relu", "tanh"]}}}))
put("study", "json_tpe.json", json.dumps({
    "name": "j-tpe", "datasets": ["wine"], "method": "tpe", "budget": {"trials": 20},
    "early_terminate": {"type": "asha", "min_epochs": 1, "eta": 3},
    "early_stopping": {"patience": 3},
    "parameters": {"learning_rate": {"distribution": "log_uniform", "min": 1e-4, "max": 0.1},
                   "units": {"distribution": "q_uniform", "min": 8, "max": 64, "q": 8}},
    "parameter_order": ["learning_rate", "units"]}))
put("study", "anchors.yaml",
    "name: anchors\ndatasets: [iris]\nmethod: sobol\nbudget: {trials: 7}\n"
    "parameters:\n  units: &u {values: [4, 8]}\n  epochs: {value: 3}\n"
    "validation: {fraction: 0.3, stratify: false}\n")

# ---- HTTP requests (http_fuzzer.cc: one raw HTTP/1.1 request; the token is fuzz-token-4b9c;
# the store holds study 1, "seeded", with trials 1-8 in every state). ----
AUTH = "Authorization: Bearer fuzz-token-4b9c\r\n"


def request(method, target, headers="", body=""):
    return "%s %s HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n%s\r\n%s" % (method, target, headers, body)


STUDY_YAML = ("name: posted\ndatasets: [iris, \"csv:table.csv?label=y\"]\nmethod: random\n"
              "budget: {trials: 4}\nparameters:\n  units: {values: [4, 8]}\n")
STUDY_JSON = json.dumps({"name": "posted-json", "datasets": ["wine"],
                         "parameters": {"hidden_layers": {"values": [1, 2]}}})
http_seeds = {
    "healthz": request("GET", "/healthz"),
    "metrics": request("GET", "/metrics"),
    "studies": request("GET", "/api/v1/studies"),
    "study_by_name": request("GET", "/api/v1/studies/seeded"),
    "study_by_id": request("HEAD", "/api/v1/studies/1"),
    "trials_query": request("GET", "/api/v1/studies/1/trials?status=completed,failed&dataset=iris"
                                   "&sort=value&order=desc&limit=5&offset=0"),
    "trials_param_sort": request("GET", "/api/v1/studies/seeded/trials?sort=params.learning_rate"
                                        "&status=queued%2Crunning"),
    "summary": request("GET", "/api/v1/studies/1/summary?x=hidden_layers&y=value&group=dataset"),
    "columns": request("GET", "/api/v1/studies/1/columns?fields=number,value,params.hidden_layers"),
    "trial": request("GET", "/api/v1/trials/2?attempt=1"),
    "workers": request("GET", "/api/v1/workers"),
    "queue": request("GET", "/api/v1/queue"),
    "events": request("GET", "/api/v1/events?study=1"),
    "index": request("GET", "/"),
    "static_js": request("GET", "/js/app.js", "Range: bytes=0-60000\r\n"),
    "post_yaml": request("POST", "/api/v1/studies", AUTH + "Content-Type: application/yaml\r\n", STUDY_YAML),
    "post_json": request("POST", "/api/v1/studies", AUTH + "Content-Type: application/json\r\n", STUDY_JSON),
    "post_no_token": request("POST", "/api/v1/studies", "Content-Type: text/plain\r\n", STUDY_YAML),
    "post_cross_site": request("POST", "/api/v1/studies",
                               AUTH + "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n", STUDY_JSON),
    "cancel_missing": request("POST", "/api/v1/studies/nosuch/cancel", AUTH),
    "options": request("OPTIONS", "/api/v1/studies"),
    "put": request("PUT", "/api/v1/studies/1"),
    "rebinding": "GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    "percent_path": request("GET", "/api/v1/studies/%73eeded/trials?dataset=iris%0Alimit%3D5"),
    "http10": "GET /api/v1/studies HTTP/1.0\n\n",
}
for name, text in http_seeds.items():
    put("http", name, text)
