"""A `layerlab serve` process for the Python tests: a fresh SQLite store in a temporary
directory, a free loopback port (--bind 127.0.0.1:0, read from the "dashboard at" line),
a token (through LAYERLAB_TOKEN, not argv) and local workers. Stopped with SIGTERM."""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(SOURCE_DIR / "clients" / "python"))

TOKEN = "test-token-0123"

# 1 dataset x 2 depths x 2 activations = 4 small trials.
TINY_STUDY = """name: {name}
datasets: [iris]
metric: {{name: val_accuracy, goal: maximize}}
method: grid
seeds: [0]
parameters:
  hidden_layers: {{values: [1, 2]}}
  activation: {{values: [relu, tanh]}}
  units: {{value: 8}}
  epochs: {{value: 3}}
"""


def layerlab_binary():
    path = os.environ.get("LAYERLAB_BINARY")
    if not path or not os.path.exists(path):
        raise RuntimeError("set LAYERLAB_BINARY to the layerlab executable (ctest does)")
    return path


class ServeProcess:
    def __init__(self, workers=1, token=TOKEN):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="layerlab-pytest-"))
        self.db = self.dir / "store.db"
        self.token = token
        env = dict(os.environ)
        env.pop("LAYERLAB_TOKEN", None)
        if token:
            env["LAYERLAB_TOKEN"] = token
        self._err = open(self.dir / "serve.err", "w+")
        self.proc = subprocess.Popen(
            [layerlab_binary(), "serve", "--store", f"sqlite:{self.db}", "--bind",
             "127.0.0.1:0", "--workers", str(workers)],
            stdout=subprocess.DEVNULL, stderr=self._err, env=env, cwd=self.dir)
        self.port = self._announced_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def _announced_port(self):
        pattern = re.compile(r"dashboard at http://127\.0\.0\.1:(\d+)/")
        for _ in range(400):  # 20 s
            m = pattern.search(self.log())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("serve did not start: " + self.log())

    def log(self):
        return (self.dir / "serve.err").read_text(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
