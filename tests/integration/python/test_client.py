"""The Python client (clients/python/layerlab) against a real `layerlab serve` with a token
and one local worker: every call, the error paths (401, 404, 400 with the study error,
409, no server), and the SQLite read-only reader giving the same records and DataFrames
as the API. Run by ctest with Debian's /usr/bin/python3 (python3-pandas)."""

import http.server
import json
import pathlib
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
import zipfile

import pandas as pd
import pandas.testing as pdt

from serve_process import SOURCE_DIR, TINY_STUDY, ServeProcess

import layerlab

server = None


def setUpModule():
    global server
    server = ServeProcess(workers=1)


def tearDownModule():
    server.cleanup()


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = layerlab.connect(server.url, token=server.token, timeout=30)
        cls.created = cls.lab.submit(TINY_STUDY.format(name="tiny"))
        cls.seen = []
        cls.final = cls.lab.wait("tiny", progress=cls.seen.append, poll=0.2, timeout=300)

    def test_submit_yaml_and_wait_with_progress(self):
        self.assertEqual(self.created["name"], "tiny")
        self.assertEqual(self.created["total"], 4)
        self.assertIsInstance(self.created["id"], int)
        self.assertEqual(self.final["status"], "finished")
        self.assertEqual(self.final["finished"], 4)
        self.assertEqual(self.final["counts"]["completed"], 4)
        # The callback saw every poll, the last one the finished study, and progress never
        # went backwards.
        self.assertGreaterEqual(len(self.seen), 1)
        self.assertEqual(self.seen[-1]["status"], "finished")
        done = [s["finished"] for s in self.seen]
        self.assertEqual(done, sorted(done))
        self.assertTrue(all(s["total"] == 4 for s in self.seen))

    def test_studies_study_and_reads(self):
        names = [s["name"] for s in self.lab.studies()]
        self.assertIn("tiny", names)
        s = self.lab.study("tiny")
        self.assertEqual(self.lab.study(s["id"]), s)  # by id or by name
        self.assertEqual(s["parameters"], ["hidden_layers", "activation", "units", "epochs"])
        self.assertEqual(s["datasets"], ["iris"])
        self.assertEqual([b["dataset"] for b in s["best"]], ["iris"])  # one entry per dataset
        self.assertEqual(s["best"][0]["trial"]["status"], "completed")
        self.assertEqual(self.lab.health()["status"], "ok")
        self.assertEqual(self.lab.openapi()["openapi"], "3.1.0")
        self.assertIsInstance(self.lab.workers(), list)
        self.assertEqual(self.lab.queue()["backend"], "store")
        summary = self.lab.summary("tiny", x="hidden_layers", group="activation")
        self.assertEqual(summary["trials"], 4)
        self.assertEqual(sorted(x["group"] for x in summary["series"]), ["relu", "tanh"])
        t = self.lab.trial(s["best"][0]["trial_id"])
        self.assertEqual(len(t["curve"]), t["epochs_run"])

    def test_trials_frame(self):
        df = self.lab.trials("tiny")
        self.assertEqual(len(df), 4)
        self.assertEqual(list(df["number"]), [0, 1, 2, 3])
        # The study's parameters first, in file order, then value and the metrics.
        cols = list(df.columns)
        self.assertEqual(cols[:8], ["number", "trial_id", "dataset", "status", "hidden_layers",
                                    "activation", "units", "epochs"])
        for c in ("value", "val_accuracy", "val_loss", "train_loss", "seconds", "started_at",
                  "finished_at", "epochs_run"):
            self.assertIn(c, cols)
        self.assertEqual(sorted(set(df["hidden_layers"])), [1, 2])
        self.assertEqual(sorted(set(df["activation"])), ["relu", "tanh"])
        self.assertTrue((df["status"] == "completed").all())
        self.assertTrue((df["value"] == df["val_accuracy"]).all())
        self.assertTrue(pd.api.types.is_datetime64_any_dtype(df["finished_at"]))
        self.assertTrue((df["finished_at"] >= df["started_at"]).all())
        self.assertTrue((df["seconds"] > 0).all())
        # Filters go to the server.
        self.assertEqual(len(self.lab.trials("tiny", status=["failed", "cancelled"])), 0)
        self.assertEqual(len(self.lab.trials("tiny", status="completed", dataset="iris")), 4)

    def test_curves_long_frame(self):
        df = self.lab.curves("tiny")
        self.assertEqual(len(df), 4 * 3)  # 4 trials x 3 epochs
        for c in ("trial_id", "number", "hidden_layers", "activation", "attempt", "epoch",
                  "train_loss", "val_loss", "val_metric", "seconds"):
            self.assertIn(c, df.columns)
        self.assertEqual(sorted(set(df["epoch"])), [1, 2, 3])
        last = df[df["epoch"] == 3].set_index("trial_id")["val_metric"]
        value = self.lab.trials("tiny").set_index("trial_id")["value"]
        pdt.assert_series_equal(last.sort_index(), value.sort_index(), check_names=False)

    def test_submit_dict_then_cancel(self):
        spec = {"name": "to-cancel", "datasets": ["digits"], "method": "grid", "seeds": [0, 1],
                "metric": {"name": "val_accuracy", "goal": "maximize"},
                "parameters": {"hidden_layers": {"values": [1, 2, 3, 4, 5, 6, 7, 8]},
                               "units": {"value": 32}, "epochs": {"value": 30}}}
        created = self.lab.submit(spec)
        self.assertEqual(created["total"], 16)
        out = self.lab.cancel("to-cancel")
        self.assertEqual(out["id"], created["id"])
        self.assertGreaterEqual(out["cancelled"], 0)
        final = self.lab.wait(created["id"], poll=0.2, timeout=300)
        self.assertEqual(final["status"], "cancelled")
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.cancel("to-cancel")
        self.assertEqual((e.exception.status, e.exception.code), (409, "failed_precondition"))
        self.assertIn("already cancelled", e.exception.message)

    def test_errors_carry_status_code_and_message(self):
        # 401: no token, and a wrong one.
        anonymous = layerlab.Client(server.url, token="")
        with self.assertRaises(layerlab.LayerlabError) as e:
            anonymous.submit(TINY_STUDY.format(name="no-token"))
        self.assertEqual((e.exception.status, e.exception.code), (401, "unauthenticated"))
        self.assertIn("Authorization: Bearer", e.exception.message)
        with self.assertRaises(layerlab.LayerlabError) as e:
            layerlab.Client(server.url, token="wrong").cancel("tiny")
        self.assertEqual((e.exception.status, e.exception.message), (401, "wrong token"))
        self.assertNotIn("wrong", repr(layerlab.Client(server.url, token="wrong")))
        # Reads need no token.
        self.assertIn("tiny", [s["name"] for s in anonymous.studies()])
        # 404.
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.trials("no-such-study")
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        self.assertIn("no-such-study", e.exception.message)
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.trial(999999)
        self.assertEqual(e.exception.status, 404)
        # 400 with the study error: where and what, with a suggestion.
        bad = TINY_STUDY.format(name="bad").replace("hidden_layers:", "hidden_layer:")
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.submit(bad)
        self.assertEqual((e.exception.status, e.exception.code), (400, "invalid_argument"))
        self.assertIn("did you mean 'hidden_layers'", e.exception.message)
        self.assertIn("<request body>:7:3", e.exception.message)
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.submit({"name": "bad-dict", "datasets": ["no-such-dataset"],
                             "parameters": {"units": {"value": 8}}})
        self.assertEqual(e.exception.status, 400)
        self.assertIn("no-such-dataset", e.exception.message)
        # 409: the name exists.
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.submit(TINY_STUDY.format(name="tiny"))
        self.assertEqual((e.exception.status, e.exception.code), (409, "failed_precondition"))
        # 400 from a query parameter.
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.trials("tiny", status="exploded")
        self.assertEqual(e.exception.status, 400)
        self.assertIn("status", e.exception.message)
        with self.assertRaises(TypeError):
            self.lab.submit(42)

    def test_no_server_and_bad_urls(self):
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(layerlab.LayerlabError) as e:
            layerlab.Client(f"http://127.0.0.1:{port}", timeout=5).studies()
        self.assertEqual((e.exception.status, e.exception.code), (None, "unavailable"))
        with self.assertRaises(layerlab.LayerlabError) as e:
            layerlab.Client("ftp://example.org/")
        self.assertEqual(e.exception.code, "invalid_argument")

    def test_wait_times_out_with_an_error(self):
        # A progress callback that hides the final status makes the study look running.
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.wait("tiny", progress=lambda s: s.update(status="running"), poll=0.01,
                          timeout=0)
        self.assertEqual((e.exception.status, e.exception.code), (None, "timeout"))

    def test_download_model_of_a_trial_without_one_says_why(self):
        trial = self.lab.trial_records("tiny")[0]["id"]
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.download_model(trial)
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        self.assertIn("no model kept for trial", e.exception.message)

    def test_download_model_of_a_kept_trial(self):
        self.lab.submit(TINY_STUDY.format(name="kept-client") + "keep_weights: {top: 1}\n")
        self.lab.wait("kept-client", timeout=120)
        best = [t for t in self.lab.trial_records("kept-client") if t["status"] == "completed"]
        best.sort(key=lambda t: (-t["value"], t["number"]))
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "kept.safetensors"
            data = self.lab.download_model(best[0]["id"], path)
            self.assertEqual(path.read_bytes(), data)
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n])
        self.assertEqual(header["__metadata__"]["kept"], "true")
        self.assertEqual(header["__metadata__"]["trial"], str(best[0]["number"]))


class StoreReaderTest(unittest.TestCase):
    """The SQLite file read directly (read-only) while serve runs on it."""

    @classmethod
    def setUpClass(cls):
        cls.lab = layerlab.connect(server.url, token=server.token)
        if "tiny" not in [s["name"] for s in cls.lab.studies()]:
            cls.lab.submit(TINY_STUDY.format(name="tiny"))
        cls.lab.wait("tiny", poll=0.2, timeout=300)
        cls.store = layerlab.connect(str(server.db))

    @classmethod
    def tearDownClass(cls):
        cls.store.close()

    def test_same_frames_and_records_as_the_api(self):
        self.assertIsInstance(self.store, layerlab.Store)
        pdt.assert_frame_equal(self.store.trials("tiny"), self.lab.trials("tiny"))
        pdt.assert_frame_equal(self.store.curves("tiny"), self.lab.curves("tiny"))
        self.assertEqual(self.store.trial_records("tiny"), self.lab.trial_records("tiny"))
        self.assertEqual(self.store.study("tiny"), self.lab.study("tiny"))
        # Finished studies only: a running one's counts move between the two reads.
        api = {s["name"]: s for s in self.lab.studies() if s["status"] != "running"}
        mine = {s["name"]: s for s in self.store.studies() if s["name"] in api}
        self.assertEqual(mine, api)
        pdt.assert_frame_equal(self.store.trials("tiny", status="completed", dataset="iris"),
                               self.lab.trials("tiny", status="completed", dataset="iris"))
        self.assertEqual(len(layerlab.connect("sqlite:" + str(server.db)).studies()),
                         len(self.lab.studies()))

    def test_read_only_and_errors(self):
        with self.assertRaises(sqlite3.OperationalError) as e:
            self.store._db.execute("CREATE TABLE intruder (x)")
        self.assertIn("readonly", str(e.exception).replace(" ", ""))
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.store.trials("no-such-study")
        self.assertEqual(e.exception.code, "not_found")
        with self.assertRaises(layerlab.LayerlabError) as e:
            layerlab.connect(str(server.dir / "missing.db"))
        self.assertEqual(e.exception.code, "not_found")
        not_a_store = server.dir / "plain.txt"
        not_a_store.write_text("hello")
        with self.assertRaises(layerlab.LayerlabError) as e:
            layerlab.Store(not_a_store)
        self.assertEqual(e.exception.code, "invalid_argument")


class _Liar(http.server.BaseHTTPRequestHandler):
    """A server that answers what the API never does."""

    def do_GET(self):
        if self.path.startswith("/api/v1/studies/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://elsewhere.example/steal")
            self.end_headers()
            return
        if self.path.startswith("/api/v1/studies/html-error"):
            body, status = b"<html>proxy error</html>", 502
        else:
            body, status = b"not json at all", 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class HostileServerTest(unittest.TestCase):
    """Answers that are not the documented JSON become LayerlabError, and a redirect is not
    followed (the token would go with it)."""

    @classmethod
    def setUpClass(cls):
        cls.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Liar)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.lab = layerlab.Client(f"http://127.0.0.1:{cls.httpd.server_address[1]}",
                                  token="secret", timeout=5)

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def test_bad_answers(self):
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.studies()
        self.assertEqual((e.exception.status, e.exception.code), (200, "bad_response"))
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.study("html-error")
        self.assertEqual((e.exception.status, e.exception.code), (502, "bad_response"))
        self.assertIn("proxy error", e.exception.message)
        with self.assertRaises(layerlab.LayerlabError) as e:
            self.lab.study("redirect")
        self.assertEqual((e.exception.status, e.exception.code), (302, "bad_response"))
        self.assertIn("not followed", e.exception.message)
        self.assertNotIn("secret", str(e.exception))


class PackagingTest(unittest.TestCase):
    def test_pip_builds_a_wheel_offline(self):
        with tempfile.TemporaryDirectory() as tmp:
            # A copy: setuptools writes build/ and *.egg-info next to the sources.
            src = pathlib.Path(tmp) / "src"
            shutil.copytree(SOURCE_DIR / "clients" / "python", src,
                            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-index",
                                "--no-build-isolation", "--no-deps", "-w", tmp, str(src)],
                               capture_output=True, text=True, cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            wheels = list(pathlib.Path(tmp).glob("layerlab-*.whl"))
            self.assertEqual(len(wheels), 1)
            names = zipfile.ZipFile(wheels[0]).namelist()
            for f in ("layerlab/__init__.py", "layerlab/client.py", "layerlab/store.py"):
                self.assertIn(f, names)


if __name__ == "__main__":
    unittest.main()
