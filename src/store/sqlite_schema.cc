#include <string>

#include "store/schema.h"

namespace layerlab::store::sqlite {
namespace {

// Times are INTEGER milliseconds since the Unix epoch; JSON is TEXT.
constexpr const char* kV1 = R"sql(
CREATE TABLE studies (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  spec        TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled')),
  created_at  INTEGER NOT NULL
);
CREATE TABLE trials (
  id             INTEGER PRIMARY KEY,
  study_id       INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  number         INTEGER NOT NULL,
  dataset        TEXT NOT NULL,
  params         TEXT NOT NULL,
  status         TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'pruned',
                   'early_stopped', 'diverged', 'failed', 'cancelled')),
  attempts       INTEGER NOT NULL DEFAULT 0,
  lost           INTEGER NOT NULL DEFAULT 0,
  worker_id      TEXT,
  lease_expires  INTEGER,
  result         TEXT,
  value          REAL,
  error          TEXT NOT NULL DEFAULT '',
  created_at     INTEGER NOT NULL,
  started_at     INTEGER,
  finished_at    INTEGER,
  UNIQUE (study_id, number)
);
CREATE INDEX trials_by_queue ON trials (status, study_id, number);
CREATE INDEX trials_by_study_status ON trials (study_id, status);
CREATE INDEX trials_by_lease ON trials (lease_expires) WHERE status = 'running';
CREATE TABLE attempts (
  trial_id     INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  attempt      INTEGER NOT NULL,
  worker_id    TEXT NOT NULL,
  started_at   INTEGER NOT NULL,
  finished_at  INTEGER,
  outcome      TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (trial_id, attempt)
) WITHOUT ROWID;
CREATE TABLE epochs (
  trial_id    INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  epoch       INTEGER NOT NULL,
  train_loss  REAL,
  val_loss    REAL,
  val_metric  REAL,
  seconds     REAL,
  extra       TEXT,
  PRIMARY KEY (trial_id, attempt, epoch),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE workers (
  id             TEXT PRIMARY KEY,
  host           TEXT NOT NULL,
  pid            INTEGER NOT NULL,
  device         TEXT NOT NULL,
  started_at     INTEGER NOT NULL,
  heartbeat_at   INTEGER NOT NULL,
  current_trial  INTEGER,
  status         TEXT NOT NULL CHECK (status IN ('idle', 'busy', 'stopped'))
);
)sql";

// Trials carry the coordinator's estimate of their cost; workers claim the most expensive
// queued trial first, so a study does not end with one long trial and idle workers.
constexpr const char* kV2 = R"sql(
ALTER TABLE trials ADD COLUMN cost REAL NOT NULL DEFAULT 0;
DROP INDEX trials_by_queue;
CREATE INDEX trials_by_claim ON trials (status, study_id, cost DESC, number);
)sql";

// Change numbers: readers that follow a store (the server's event stream and caches) ask
// for the trials changed since the last number they saw. Every status change appends a
// row; writers are serialised (BEGIN IMMEDIATE), so numbers grow in commit order and a
// reader never skips a change that commits late. Appending costs about one page per
// commit: an index on a changing trials.seq column cost 28% of the queue's throughput, and
// numbering epoch rows 20% of the 50,000-trial run, so epochs are not numbered.
constexpr const char* kV3 = R"sql(
CREATE TABLE trial_changes (seq INTEGER PRIMARY KEY, trial_id INTEGER NOT NULL);
)sql";

// Workers that train packs say how many trials they train at once, and every heartbeat
// carries the backend memory in use (the workers page shows both).
constexpr const char* kV4 = R"sql(
ALTER TABLE workers ADD COLUMN pack INTEGER NOT NULL DEFAULT 1;
ALTER TABLE workers ADD COLUMN memory_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

// PostgreSQL's writers stopped numbering changes under a store-wide lock (pg_schema.cc);
// SQLite's writers hold the file's write lock anyway, and number them as before.
constexpr const char* kV5 = "SELECT 1";

// Kept models: the weights (a safetensors file, at most 64 MiB) of each dataset's best
// trials of a study with keep_weights, written in the transaction that commits the trial's
// result, and deleted in the one that pushes the trial out of its dataset's top.
constexpr const char* kV6 = R"sql(
CREATE TABLE trial_weights (
  trial_id    INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,
  study_id    INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  dataset     TEXT NOT NULL,
  bytes       BLOB NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX trial_weights_by_board ON trial_weights (study_id, dataset);
)sql";

// PostgreSQL's version 7 keeps the queued trials in a table of their own so that concurrent
// claimers never lock a trial they do not take, and version 8 narrows the trigger that keeps
// it; SQLite has one writer at a time, which claims from trials directly.
constexpr const char* kNothing = "-- nothing on SQLite";

constexpr Migration kMigrations[] = {
    {1, "studies, trials, attempts, epochs, workers", kV1},
    {2, "trial cost: claim the longest trials first", kV2},
    {3, "trial change log, for followers", kV3},
    {4, "worker pack size and memory in use", kV4},
    {5, "change log without a store-wide write lock", kV5},
    {6, "kept models: the weights of each dataset's best trials", kV6},
    {7, "queued trials on their own (claims that delete; nothing on SQLite)", kNothing},
    {8, "starts leave the queue themselves, without the trigger (nothing on SQLite)", kNothing},
};

constexpr const char* kVersionTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version      INTEGER PRIMARY KEY,
  description  TEXT NOT NULL,
  applied_at   INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
))sql";

}  // namespace

// A write transaction (BEGIN IMMEDIATE) already holds the file's one write lock, so
// lock_key is never taken, and the catalog read under it is the same as before it.
constexpr const char* kHasVersionTable =
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'";
const SchemaDialect& schema() {
  static const SchemaDialect kSchema{kMigrations, kVersionTable, kHasVersionTable, kHasVersionTable,
                                     0};
  return kSchema;
}

}  // namespace layerlab::store::sqlite
