"""pandas DataFrames from the API's JSON shapes (docs/api.md). The HTTP client and the
SQLite reader both build TRIAL_SUMMARY dicts and go through here, so they give the same
frames."""

# The fixed columns of a trials frame, in order; parameters follow `status`, metrics follow
# `value`. A parameter or metric whose name is taken gets a "params." / "metrics." prefix.
TRIAL_HEAD = ["number", "trial_id", "dataset", "status"]
TRIAL_TAIL = ["seconds", "epochs_run", "attempts", "worker", "started_at", "finished_at",
              "error", "study_id"]
CURVE_COLUMNS = ["attempt", "epoch", "train_loss", "val_loss", "val_metric", "seconds"]
_TIMES = ["started_at", "finished_at"]


def pandas():
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("layerlab: DataFrames need pandas (Debian: apt-get install "
                          "python3-pandas); the *_records methods work without it") from e
    return pd


def _names(records, key):
    """Keys of records[i][key] in first-seen order."""
    seen = {}
    for r in records:
        for name in (r.get(key) or {}):
            seen.setdefault(name, None)
    return list(seen)


def _column(name, prefix, taken):
    return name if name not in taken else f"{prefix}.{name}"


def trial_rows(records, param_names=None):
    """Flat rows (dicts) and the column order for TRIAL_SUMMARY records."""
    params = list(param_names) if param_names else []
    for name in _names(records, "params"):
        if name not in params:
            params.append(name)
    metrics = _names(records, "metrics")
    taken = set(TRIAL_HEAD) | set(TRIAL_TAIL) | {"value"}
    pcols = [_column(n, "params", taken) for n in params]
    taken |= set(pcols)
    mcols = [_column(n, "metrics", taken) for n in metrics]
    columns = TRIAL_HEAD + pcols + ["value"] + mcols + TRIAL_TAIL
    rows = []
    for r in records:
        row = {"number": r["number"], "trial_id": r["id"], "dataset": r["dataset"],
               "status": r["status"], "value": r.get("value")}
        p = r.get("params") or {}
        for name, col in zip(params, pcols):
            row[col] = p.get(name)
        m = r.get("metrics") or {}
        for name, col in zip(metrics, mcols):
            row[col] = m.get(name)
        for key in TRIAL_TAIL:
            row[key] = r.get(key)
        rows.append(row)
    return rows, columns, pcols


def _frame(rows, columns):
    pd = pandas()
    df = pd.DataFrame.from_records(rows, columns=columns)
    for t in _TIMES:
        if t in df.columns:
            df[t] = pd.to_datetime(df[t], utc=True, format="ISO8601") if _iso8601_ok(pd) \
                else pd.to_datetime(df[t], utc=True)
    return df


def _iso8601_ok(pd):
    major, minor = (int(x) for x in pd.__version__.split(".")[:2])
    return (major, minor) >= (2, 0)


def trials_frame(records, param_names=None):
    """One row per trial, ordered by number: parameters as columns, value and metrics,
    status, times (UTC datetimes), seconds of training."""
    records = sorted(records, key=lambda r: r["number"])
    rows, columns, _ = trial_rows(records, param_names)
    return _frame(rows, columns).reset_index(drop=True)


def curves_frame(records, curves, param_names=None):
    """Long learning curves: one row per (trial, attempt, epoch) with the trial's number,
    dataset, status and parameters. `curves` maps trial id to its curve points."""
    records = sorted(records, key=lambda r: r["number"])
    rows, _, pcols = trial_rows(records, param_names)
    head = ["trial_id", "number", "dataset", "status"] + pcols
    out = []
    for row in rows:
        for point in curves.get(row["trial_id"], []):
            line = {k: row[k] for k in head}
            for k in CURVE_COLUMNS:
                line[k] = point.get(k)
            out.append(line)
    pd = pandas()
    return pd.DataFrame.from_records(out, columns=head + CURVE_COLUMNS)
