#!/usr/bin/python3
"""The peer of an adaptive study: Optuna 3.1's TPESampler (Debian python3-optuna) on the
study of bench/studies/tpe_1000.yaml: iris, one hidden layer of {4, 8, 16} units, 2 epochs,
batch 32, adam, learning rate log-uniform in [1e-3, 1e-1], each trial trained by PyTorch
(../shared/peers/torch_mlp.py), 2 processes sharing SQLite storage (as optuna_sweep.py
runs them). Prints one JSON line: trials, wall seconds (from the study's creation to the
last process's exit, torch imported by then), best value.

  /usr/bin/python3 bench/optuna_tpe.py --peers DIR [--trials 1000] [--workers 2] --db FILE
"""
import argparse
import json
import os
import subprocess
import sys
import time

STUDY = "tpe"


def storage(url):
    import optuna
    return optuna.storages.RDBStorage(url, engine_kwargs={"connect_args": {"timeout": 120}})


def worker(a):
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    sys.path.insert(0, a.peers)
    import optuna
    import torch_mlp
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(trial):
        cfg = {"dataset": "iris", "depth": 1, "activation": "relu", "optimizer": "adam",
               "batch": 32, "epochs": 2, "threads": 1, "seed": 0, "val_fraction": 0.2,
               "steps": 0, "max_seconds": 300.0}
        cfg["width"] = trial.suggest_categorical("units", [4, 8, 16])
        cfg["lr"] = trial.suggest_float("learning_rate", 1e-3, 1e-1, log=True)
        return torch_mlp.run(cfg)["val_accuracy"]

    study = optuna.load_study(study_name=STUDY, storage=storage(a.db_url),
                              sampler=optuna.samplers.TPESampler(seed=a.worker))
    # MaxTrialsCallback: the processes together stop at --trials.
    study.optimize(objective, callbacks=[optuna.study.MaxTrialsCallback(a.trials)])


def parent(a):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    db = os.path.abspath(a.db)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    url = "sqlite:///" + db
    t0 = time.perf_counter()
    optuna.create_study(study_name=STUDY, storage=storage(url), direction="maximize")
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(k),
                               "--db-url", url, "--peers", a.peers, "--trials", str(a.trials)])
             for k in range(a.workers)]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - t0
    study = optuna.load_study(study_name=STUDY, storage=storage(url))
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    print(json.dumps({"peer": "optuna_tpe", "trials": len(done), "wall_seconds": wall,
                      "best": study.best_value if done else None, "exit_codes": codes}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--peers", required=True)
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--db", default="/tmp/optuna_tpe.sqlite")
    p.add_argument("--worker", type=int)
    p.add_argument("--db-url")
    a = p.parse_args()
    a.peers = os.path.abspath(a.peers)
    worker(a) if a.worker is not None else parent(a)


if __name__ == "__main__":
    main()
