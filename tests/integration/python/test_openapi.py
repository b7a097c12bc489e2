"""docs/openapi.json against a real `layerlab serve` on a real store: every documented
operation is called, every explicitly documented status is provoked, and every answer is
validated against the document's schema for its status and media type (JSON Schema 2020-12,
Debian's python3-jsonschema). The event stream's events are validated against the schemas
its x-events names. Which routes exist is checked by tests/unit/server/openapi_test.cc."""

import http.client
import json
import socket
import threading
import unittest
import urllib.error
import urllib.request

import jsonschema

from serve_process import SOURCE_DIR, TINY_STUDY, ServeProcess

server = None
DOC = json.loads((SOURCE_DIR / "docs" / "openapi.json").read_text())


def setUpModule():
    global server
    server = ServeProcess(workers=1)


def tearDownModule():
    server.cleanup()


def validator(schema):
    return jsonschema.Draft202012Validator(
        schema, resolver=jsonschema.RefResolver.from_schema(DOC))


def call(method, path, body=None, headers=None, token=True):
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = "Bearer " + server.token
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(server.url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers.get("Content-Type", ""), e.read()


# Submitted, then cancelled while it runs: 100 trials of 50 epochs, so that it cannot finish
# before the cancel arrives (a study of 4 small trials did, on a fast worker: a 409).
LONG_STUDY = ("name: second\ndatasets: [iris]\nmethod: grid\nparameters:\n"
              "  units: {values: [" + ", ".join(str(u) for u in range(8, 108)) + "]}\n"
              "  epochs: {value: 50}\n")


class OpenApiResponsesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.events = []
        cls.stop_events = threading.Event()
        cls.events_ready = threading.Event()
        cls.reader = threading.Thread(target=cls.read_events, daemon=True)
        cls.reader.start()
        assert cls.events_ready.wait(30), "the event stream did not open"
        status, _, body = call("POST", "/api/v1/studies", TINY_STUDY.format(name="tiny"),
                               {"Content-Type": "application/yaml"})
        assert status == 201, body
        cls.study_id = json.loads(body)["id"]
        cls.wait_finished("tiny")
        # A study that keeps its best trial's model (keep_weights), for /trials/{id}/model.
        status, _, body = call("POST", "/api/v1/studies",
                               TINY_STUDY.format(name="kept") + "keep_weights: {top: 1}\n",
                               {"Content-Type": "application/yaml"})
        assert status == 201, body
        cls.wait_finished("kept")
        status, _, body = call("GET", "/api/v1/studies/kept/leaderboard?limit=1")
        cls.kept_trial_id = json.loads(body)["datasets"][0]["trials"][0]["id"]
        # A second study to cancel; it stays cancelled, so a second cancel is a 409. It has
        # 100 trials of 50 epochs: a study of one small trial could finish before the cancel
        # arrives on a loaded machine (then it is a 409 already; seen in CI's sanitizer run).
        status, _, body = call("POST", "/api/v1/studies", json.dumps(
            {"name": "cancelled", "datasets": ["iris"], "method": "grid",
             "parameters": {"units": {"values": list(range(8, 108))},
                            "epochs": {"value": 50}}}), {"Content-Type": "application/json"})
        assert status == 201, body
        assert call("POST", "/api/v1/studies/cancelled/cancel")[0] == 200
        status, _, body = call("GET", f"/api/v1/studies/{cls.study_id}/trials?limit=1")
        cls.trial_id = json.loads(body)["trials"][0]["id"]
        cls.stop_reading()

    @classmethod
    def stop_reading(cls):
        cls.stop_events.set()
        sock = cls.events_conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # the server closed the stream already: nothing left to stop
                pass
        cls.reader.join(10)

    @classmethod
    def wait_finished(cls, name):
        import time
        for _ in range(3000):
            status, _, body = call("GET", f"/api/v1/studies/{name}")
            if json.loads(body)["status"] != "running":
                return
            time.sleep(0.1)
        raise AssertionError(f"study {name} did not finish")

    @classmethod
    def read_events(cls):
        # Lines through the response, which undoes the chunked transfer encoding (the raw
        # socket's lines break where a chunk ends, cutting an event's data in two). No read
        # timeout: one can strike inside a chunk's framing and lose bytes; the stream is
        # stopped by shutting its socket down (stop_reading).
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        cls.events_conn = conn
        try:
            conn.request("GET", "/api/v1/events")
            resp = conn.getresponse()
            conn.sock.settimeout(None)
            cls.events_status = (resp.status, resp.getheader("Content-Type"))
            cls.events_ready.set()
            kind, data = None, []
            while not cls.stop_events.is_set():
                try:
                    line = resp.readline()
                except (OSError, http.client.HTTPException):  # stop_reading shut it down
                    break
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line == "" and kind is not None:
                    cls.events.append((kind, "\n".join(data)))
                    kind, data = None, []
        finally:
            cls.events_ready.set()
            conn.close()

    def operation(self, template, method):
        return DOC["paths"][template][method.lower()]

    def check(self, template, method, path, expected, body=None, headers=None, token=True):
        """Calls path and validates the answer against the document; returns it."""
        status, ctype, raw = call(method, path, body, headers, token)
        where = f"{method} {path}"
        self.assertEqual(status, expected, f"{where}: {raw[:300]!r}")
        responses = self.operation(template, method)["responses"]
        self.assertIn(str(status), responses, f"{where}: status {status} is not documented")
        content = responses[str(status)]["content"]
        media = ctype.split(";")[0].strip()
        self.assertIn(media, content, f"{where}: Content-Type {ctype} is not documented")
        schema = content[media]["schema"]
        if media == "application/json":
            value = json.loads(raw)
        elif media == "application/octet-stream":
            value = raw.decode("latin-1")  # bytes, as a string schema sees them
        else:
            value = raw.decode()
        errors = sorted(validator(schema).iter_errors(value), key=lambda e: list(e.path))
        self.assertEqual([], [f"{list(e.path)}: {e.message}" for e in errors][:5], where)
        type(self).covered.add((template, method.lower(), str(status)))
        return value

    covered = set()

    def test_every_operation_and_documented_status(self):
        s, t = "/api/v1/studies/{study}", "/api/v1/trials/{trial}"
        sid, tid = self.study_id, self.trial_id
        yaml = {"Content-Type": "application/yaml"}
        c = self.check
        # Studies.
        studies = c("/api/v1/studies", "GET", "/api/v1/studies", 200)
        self.assertEqual({x["name"] for x in studies["studies"]}, {"tiny", "kept", "cancelled"})
        c("/api/v1/studies", "POST", "/api/v1/studies", 201, LONG_STUDY, yaml)
        c("/api/v1/studies", "POST", "/api/v1/studies", 400,
          TINY_STUDY.format(name="bad").replace("epochs:", "epoch:"), yaml)
        c("/api/v1/studies", "POST", "/api/v1/studies", 401, TINY_STUDY.format(name="x"), yaml,
          token=False)
        c("/api/v1/studies", "POST", "/api/v1/studies", 403, TINY_STUDY.format(name="x"),
          {"Origin": "http://evil.example", **yaml})
        c("/api/v1/studies", "POST", "/api/v1/studies", 409, TINY_STUDY.format(name="tiny"),
          yaml)
        c("/api/v1/studies", "POST", "/api/v1/studies", 413, "#" * (1 << 20) + "\n", yaml)
        detail = c(s, "GET", f"/api/v1/studies/{sid}", 200)
        self.assertEqual(detail["best"][0]["trial"]["status"], "completed")  # a TRIAL_SUMMARY
        c(s, "GET", "/api/v1/studies/tiny", 200)
        c(s, "GET", "/api/v1/studies/no-such", 404)
        cancel = s + "/cancel"
        c(cancel, "POST", "/api/v1/studies/second/cancel", 200)  # still running: LONG_STUDY
        c(cancel, "POST", "/api/v1/studies/tiny/cancel", 401, token=False)
        c(cancel, "POST", "/api/v1/studies/tiny/cancel", 403, headers={"Origin": "null"})
        c(cancel, "POST", "/api/v1/studies/no-such/cancel", 404)
        c(cancel, "POST", "/api/v1/studies/tiny/cancel", 409)
        # Trials, aggregates, columns.
        trials = s + "/trials"
        page = c(trials, "GET", f"/api/v1/studies/{sid}/trials?limit=1000", 200)
        self.assertEqual(page["total"], 4)
        c(trials, "GET", "/api/v1/studies/tiny/trials?status=completed&sort=params.hidden_layers"
          "&order=desc&limit=2&offset=1&dataset=iris", 200)
        c(trials, "GET", "/api/v1/studies/cancelled/trials", 200)
        c(trials, "GET", "/api/v1/studies/tiny/trials?sort=colour", 400)
        c(trials, "GET", "/api/v1/studies/no-such/trials", 404)
        summary = s + "/summary"
        c(summary, "GET", "/api/v1/studies/tiny/summary?x=hidden_layers&group=activation", 200)
        c(summary, "GET", "/api/v1/studies/tiny/summary?x=activation&y=seconds", 200)
        c(summary, "GET", "/api/v1/studies/tiny/summary?x=hidden_layers&y=val_loss", 200)
        c(summary, "GET", "/api/v1/studies/tiny/summary", 400)
        c(summary, "GET", "/api/v1/studies/no-such/summary?x=hidden_layers", 404)
        columns = s + "/columns"
        cols = c(columns, "GET", "/api/v1/studies/tiny/columns?fields=number,value,seconds,"
                 "dataset,finished,params.hidden_layers,params.activation,metrics.val_loss", 200)
        self.assertEqual(cols["returned"], 4)
        c(columns, "GET", "/api/v1/studies/tiny/columns?fields=colour", 400)
        c(columns, "GET", "/api/v1/studies/no-such/columns", 404)
        leaderboard = s + "/leaderboard"
        lb = c(leaderboard, "GET", "/api/v1/studies/tiny/leaderboard?limit=3", 200)
        self.assertEqual([b["dataset"] for b in lb["datasets"]], ["iris"])
        self.assertEqual(len(lb["datasets"][0]["trials"]), 3)  # of the 4 finished trials
        self.assertGreaterEqual(lb["datasets"][0]["best_count"], 1)
        c(leaderboard, "GET", "/api/v1/studies/tiny/leaderboard?limit=101", 400)
        c(leaderboard, "GET", "/api/v1/studies/no-such/leaderboard", 404)
        pareto = s + "/pareto"
        front = c(pareto, "GET", "/api/v1/studies/tiny/pareto?limit=2", 200)
        self.assertEqual([d["dataset"] for d in front["datasets"]], ["iris"])
        self.assertEqual(front["datasets"][0]["points"]["total"], 4)
        self.assertGreaterEqual(len(front["datasets"][0]["fronts"]["parameter_count"]["trials"]), 1)
        c(pareto, "GET", "/api/v1/studies/tiny/pareto?limit=50001", 400)
        c(pareto, "GET", "/api/v1/studies/no-such/pareto", 404)
        trial = c(t, "GET", f"/api/v1/trials/{tid}", 200)
        self.assertEqual(len(trial["curve"]), 3)
        c(t, "GET", f"/api/v1/trials/{tid}?attempt=0", 200)
        c(t, "GET", f"/api/v1/trials/{tid}?attempt=-1", 400)
        c(t, "GET", "/api/v1/trials/99999", 404)
        self.assertFalse(trial["model_kept"])  # tiny keeps no weights
        model = t + "/model"
        kept = c(model, "GET", f"/api/v1/trials/{self.kept_trial_id}/model", 200)
        self.assertEqual(kept[8:9], "{")  # a safetensors header follows its length
        self.assertTrue(c(t, "GET", f"/api/v1/trials/{self.kept_trial_id}", 200)["model_kept"])
        c(model, "GET", f"/api/v1/trials/{tid}/model", 404)
        c(model, "GET", "/api/v1/trials/99999/model", 404)
        # Operations.
        workers = c("/api/v1/workers", "GET", "/api/v1/workers", 200)
        self.assertGreaterEqual(sum(w["done"] for w in workers["workers"]), 4)  # tiny, and
        # perhaps a trial of the cancelled study claimed before the cancel
        c("/api/v1/workers", "GET", "/api/v1/workers?minutes=0", 400)
        c("/api/v1/queue", "GET", "/api/v1/queue", 200)
        tp = c("/api/v1/throughput", "GET", "/api/v1/throughput?minutes=30&bucket=30", 200)
        self.assertEqual(len(tp["buckets"]), 60)
        self.assertGreaterEqual(sum(tp["total"]), 4)
        c("/api/v1/throughput", "GET", "/api/v1/throughput?bucket=5", 400)
        c("/api/v1/events", "GET", "/api/v1/events?study=x", 400)
        served = c("/api/v1/openapi.json", "GET", "/api/v1/openapi.json", 200)
        self.assertEqual(served, DOC)
        metrics = c("/metrics", "GET", "/metrics", 200)
        self.assertIn('layerlab_trials{study="tiny",status="completed"} 4', metrics)
        self.assertIn('layerlab_trial_duration_seconds_count{study="tiny"} 4', metrics)
        self.assertIn('layerlab_worker_trials_total{worker="', metrics)
        self.assertEqual(c("/healthz", "GET", "/healthz", 200)["store"], "sqlite")
        # The dashboard.
        self.assertIn("<html", c("/", "GET", "/", 200).lower())
        c("/vendor/{file}", "GET", "/vendor/plotly-gl2d.min.js", 200)
        c("/vendor/{file}", "GET", "/vendor/plotly.min.js", 404)
        c("/js/{file}", "GET", "/js/app.js", 200)
        c("/js/{file}", "GET", "/js/nope.js", 404)
        c("/css/{file}", "GET", "/css/style.css", 200)
        c("/css/{file}", "GET", "/css/nope.css", 404)

        # The event stream (read in setUpClass) answered 200 as documented.
        status, ctype = self.events_status
        self.assertEqual(status, 200)
        self.assertIn(ctype.split(";")[0], self.operation("/api/v1/events", "GET")
                      ["responses"]["200"]["content"])
        self.covered.add(("/api/v1/events", "get", "200"))

        # Every status the document lists explicitly was provoked and matched.
        documented = {(p, m, st) for p, item in DOC["paths"].items()
                      for m, op in item.items() for st in op["responses"] if st != "default"}
        self.assertEqual(sorted(documented - self.covered), [])

    def test_events_match_their_schemas(self):
        kinds = DOC["paths"]["/api/v1/events"]["get"]["x-events"]
        self.assertTrue(self.events, "no events while a study ran")
        seen = set()
        for kind, data in self.events:
            self.assertIn(kind, kinds, f"event type {kind} is not documented")
            errors = list(validator(kinds[kind]).iter_errors(json.loads(data)))
            self.assertEqual([], [e.message for e in errors][:5], f"{kind}: {data[:300]}")
            seen.add(kind)
        # The study's trials were added, claimed and finished while the stream was open.
        self.assertIn("trial", seen)
        trials = [json.loads(d) for k, d in self.events if k == "trial"]
        finished = {t["number"] for t in trials
                    if t["study_id"] == self.study_id and t["status"] == "completed"}
        self.assertEqual(finished, {0, 1, 2, 3})


if __name__ == "__main__":
    unittest.main()
