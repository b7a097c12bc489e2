"""Reading a SQLite store file directly, read-only (sqlite3 URI mode=ro): the same
records and DataFrames as the API, with no server. A running `layerlab run` or `serve`
may write the file meanwhile (WAL mode lets readers in)."""

import datetime
import json
import pathlib
import sqlite3
import urllib.parse

from . import frames
from .errors import LayerlabError

_STATUSES = ["queued", "running", "completed", "pruned", "early_stopped", "diverged",
             "failed", "cancelled"]


def _iso(ms):
    """Milliseconds since the epoch as the server writes times."""
    if ms is None:
        return None
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + \
        datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _json(text, fallback):
    if text is None or text == "":
        return fallback
    return json.loads(text)


def _grid_size(parameters):
    total = 1
    for domain in parameters.values():
        if "value" in domain:
            n = 1
        elif "values" in domain:
            n = len(domain["values"])
        elif domain.get("distribution") == "int_uniform":
            n = int(domain["max"] - domain["min"]) + 1
        elif domain.get("distribution") == "q_uniform":
            n = int((domain["max"] - domain["min"]) / domain["q"] + 1e-9) + 1
        else:
            return 0
        total *= n
    return total


def _planned(spec):
    """The trials a study plans (StudySpec::total_trials)."""
    budget = (spec.get("budget") or {}).get("trials", 0) or 0
    if spec.get("method") != "grid":
        return budget
    per = len(spec.get("datasets", [])) * len(spec.get("seeds", [0]) or [0])
    total = _grid_size(spec.get("parameters", {})) * per
    return min(total, budget) if budget > 0 else total


class Store:
    """A SQLite store file opened read-only. `path`: a file name or "sqlite:PATH"."""

    def __init__(self, path, timeout=30.0):
        path = str(path)
        if path.startswith("sqlite:"):
            path = path[len("sqlite:"):]
        p = pathlib.Path(path)
        if not p.is_file():
            raise LayerlabError(None, "not_found", f"no store file {path}")
        uri = "file:" + urllib.parse.quote(str(p.resolve())) + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True, timeout=timeout)
            self._db.execute("SELECT 1 FROM studies LIMIT 1")
        except sqlite3.Error as e:
            raise LayerlabError(None, "invalid_argument",
                                f"{path} is not a layerlab store: {e}") from None

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rows(self, sql, args=()):
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise LayerlabError(None, "unavailable", f"reading the store: {e}") from None

    def _study_row(self, study):
        if isinstance(study, int) or (isinstance(study, str) and study.isascii() and study.isdigit()):
            rows = self._rows("SELECT id, name, spec, status, created_at FROM studies "
                              "WHERE id = ?", (int(study),))
        else:
            rows = self._rows("SELECT id, name, spec, status, created_at FROM studies "
                              "WHERE name = ?", (study,))
        if not rows:
            raise LayerlabError(None, "not_found", f"no study {study!r}")
        return rows[0]

    def _summary(self, row):
        sid, name, spec_text, status, created = row
        spec = _json(spec_text, {})
        counts = dict.fromkeys(_STATUSES, 0)
        for st, n in self._rows("SELECT status, COUNT(*) FROM trials WHERE study_id = ? "
                                "GROUP BY status", (sid,)):
            counts[st] = n
        metric = spec.get("metric") or {}
        maximize = metric.get("goal") == "maximize"
        return {"id": sid, "name": name, "status": status, "created_at": _iso(created),
                "metric": metric.get("name", ""), "goal": metric.get("goal", ""),
                "method": spec.get("method", ""), "total": _planned(spec),
                "finished": sum(counts.values()) - counts["queued"] - counts["running"],
                "counts": counts,
                "best": [self._best(sid, d, maximize) for d in spec.get("datasets", [])]}

    def _best(self, sid, dataset, maximize):
        """One dataset's best as STUDY_SUMMARY's `best` entry: ranked within the dataset
        (completed or early_stopped with a value), never across datasets."""
        ranked = ("study_id = ? AND dataset = ? AND status IN ('completed', 'early_stopped') "
                  "AND value IS NOT NULL")
        top = self._rows(f"SELECT id, number, value FROM trials WHERE {ranked} "
                         f"ORDER BY value {'DESC' if maximize else 'ASC'}, number ASC LIMIT 1",
                         (sid, dataset))
        if not top:
            return {"dataset": dataset, "trial_id": None, "number": None, "value": None,
                    "count": 0}
        tid, number, value = top[0]
        count = self._rows(f"SELECT COUNT(*) FROM trials WHERE {ranked} AND value = ?",
                           (sid, dataset, value))[0][0]
        return {"dataset": dataset, "trial_id": tid, "number": number, "value": value,
                "count": count}

    def studies(self):
        """Every study as the API's STUDY_SUMMARY dicts, by id."""
        return [self._summary(r) for r in
                self._rows("SELECT id, name, spec, status, created_at FROM studies ORDER BY id")]

    def study(self, study):
        """One study's summary plus spec, datasets, parameters and each dataset's best trial
        in full, as the API's GET /api/v1/studies/{study}."""
        row = self._study_row(study)
        out = self._summary(row)
        spec = _json(row[2], {})
        out["spec"] = spec
        out["datasets"] = spec.get("datasets", [])
        out["parameters"] = spec.get("parameter_order") or list(spec.get("parameters", {}))
        for b in out["best"]:
            b["trial"] = (self._trials("id = ?", [b["trial_id"]])[0]
                          if b["trial_id"] is not None else None)
        return out

    def trial_records(self, study, status=None, dataset=None):
        """Every TRIAL_SUMMARY of a study, ordered by number, as the API gives them."""
        where, args = "study_id = ?", [self._study_row(study)[0]]
        if status:
            names = status.split(",") if isinstance(status, str) else list(status)
            for n in names:
                if n not in _STATUSES:
                    raise LayerlabError(None, "invalid_argument", f"status: unknown {n!r}")
            where += f" AND status IN ({','.join('?' * len(names))})"
            args += names
        if dataset:
            where += " AND dataset = ?"
            args.append(dataset)
        return self._trials(where, args)

    def _trials(self, where, args):
        sql = ("SELECT id, study_id, number, dataset, status, params, value, result, attempts, "
               f"worker_id, started_at, finished_at, error FROM trials WHERE {where} "
               "ORDER BY number")
        out = []
        for (tid, study_id, number, ds, st, params, value, result, attempts, worker, started,
             finished, error) in self._rows(sql, args):
            res = _json(result, None)
            res_obj = res if isinstance(res, dict) else {}
            metrics = res_obj.get("metrics")
            out.append({"id": tid, "study_id": study_id, "number": number, "dataset": ds,
                        "status": st, "params": _json(params, {}), "value": value,
                        "metrics": metrics if isinstance(metrics, dict) else {},
                        "seconds": res_obj.get("seconds"),
                        "epochs_run": res_obj.get("epochs_run"), "attempts": attempts,
                        "worker": worker or "", "started_at": _iso(started),
                        "finished_at": _iso(finished), "error": error or ""})
        return out

    def curve(self, trial_id, attempt=None):
        """A trial's epochs (the latest attempt's; attempt=0: every attempt's)."""
        if attempt is None:
            rows = self._rows("SELECT attempts FROM trials WHERE id = ?", (int(trial_id),))
            if not rows:
                raise LayerlabError(None, "not_found", f"no trial with id {trial_id}")
            attempt = rows[0][0]
        sql = ("SELECT attempt, epoch, train_loss, val_loss, val_metric, seconds FROM epochs "
               "WHERE trial_id = ?")
        args = [int(trial_id)]
        if attempt:
            sql += " AND attempt = ?"
            args.append(int(attempt))
        return [dict(zip(frames.CURVE_COLUMNS, r)) for r in
                self._rows(sql + " ORDER BY attempt, epoch", args)]

    def trials(self, study, status=None, dataset=None):
        """The same DataFrame as Client.trials."""
        params = self.study(study)["parameters"]
        return frames.trials_frame(self.trial_records(study, status, dataset), params)

    def curves(self, study, status=None, dataset=None):
        """The same long DataFrame as Client.curves."""
        params = self.study(study)["parameters"]
        records = self.trial_records(study, status, dataset)
        return frames.curves_frame(records, {r["id"]: self.curve(r["id"]) for r in records},
                                   params)
