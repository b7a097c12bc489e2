"""examples/python/depth_sweep.py end to end against a real `layerlab serve`: a smaller
depth sweep of the same shape (depths x activations x seeds) is submitted, waited for and
plotted; the PNG is a real image, and running the script again on the existing study
works (the 409 is handled)."""

import os
import pathlib
import subprocess
import sys
import unittest

from serve_process import SOURCE_DIR, ServeProcess

SMALL_SWEEP = """name: depth-sweep-small
datasets: [iris, wine]
validation: {fraction: 0.2, stratify: true}
metric: {name: val_accuracy, goal: maximize}
method: grid
seeds: [0, 1]
parameters:
  hidden_layers: {values: [1, 2, 4]}
  activation:    {values: [relu, tanh]}
  units:         {value: 8}
  epochs:        {value: 2}
"""


class ExampleTest(unittest.TestCase):
    def run_example(self, study, out):
        env = dict(os.environ, PYTHONPATH=str(SOURCE_DIR / "clients" / "python"),
                   LAYERLAB_TOKEN=self.server.token, MPLBACKEND="Agg")
        return subprocess.run(
            [sys.executable, str(SOURCE_DIR / "examples" / "python" / "depth_sweep.py"),
             "--server", self.server.url, "--study", str(study), "--out", str(out)],
            capture_output=True, text=True, env=env, timeout=600)

    def test_submits_waits_and_plots(self):
        self.server = ServeProcess(workers=1)
        self.addCleanup(self.server.cleanup)
        study = self.server.dir / "sweep.yaml"
        study.write_text(SMALL_SWEEP)
        out = self.server.dir / "plot.png"
        r = self.run_example(study, out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("24 trials plotted", r.stdout)
        self.assertIn("24/24 trials finished", r.stderr)
        data = out.read_bytes()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(data), 10_000)
        # Again: the study exists (409), so the script waits for it and plots it.
        out.unlink()
        r = self.run_example(study, out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(out.exists())

    def test_the_default_study_is_the_example_depth_sweep(self):
        script = (SOURCE_DIR / "examples" / "python" / "depth_sweep.py").read_text()
        self.assertIn('"depth_sweep.yaml"', script)
        yaml = (SOURCE_DIR / "examples" / "depth_sweep.yaml").read_text()
        for key in ("hidden_layers:", "activation:", "val_accuracy"):
            self.assertIn(key, yaml)


if __name__ == "__main__":
    unittest.main()
