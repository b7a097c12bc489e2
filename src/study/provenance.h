// Provenance: what makes a trial reproducible and observable, recorded with its result
// ("provenance" in the result JSON), and the checks `layerlab rerun` and `best --save` make
// when they train a stored trial again: the first number that differs from the record, and
// which provenance fields differ between the record and this machine.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "store/records.h"

namespace layerlab::study {

// {"layerlab_version", "revision" (git describe --always --dirty of the build, "unknown"
// outside a git checkout), "backend" (name), "backend_description" (describe(): BLAS
// config and threads), "threads", "precision", "host", "os" (uname: system, release,
// version, machine), "compiler"}.
nlohmann::json provenance(const backend::Backend& b);

// The build's revision, as in provenance().
const char* build_revision();

// The fields that make a rerun differ, compared between a record and this machine: one line
// per differing field, "host: 'a' (record) vs 'b' (here)". A field the record lacks is
// left out.
std::vector<std::string> provenance_differences(const nlohmann::json& recorded,
                                                const nlohmann::json& here);

// What a rerun produced, as a worker would store it.
struct RerunRecord {
  store::TrialStatus status = store::TrialStatus::kCompleted;
  nlohmann::json result;  // without params and curve, as stored
  std::optional<double> value;
  std::vector<store::EpochRow> epochs;
};

// The first difference between a stored trial and a rerun: epoch 0 for the final result.
struct Difference {
  int epoch = 0;
  std::string field;  // "val_loss", "learning_rate", "metrics.val_accuracy", "epochs", ...
  std::string stored, rerun;
  std::string describe() const;  // "epoch 3, val_loss: stored 0.41 vs rerun 0.4100000000000001"
};

// Compares every number bit for bit (NaN equals NaN; in the epoch columns train_loss,
// val_loss and val_metric 0 equals -0, which SQLite's REAL columns do not keep) except
// wall-clock seconds. The result's "seconds", "worker", "backend", "pack_size" and
// "provenance" say where and how a run happened, not what it computed, and are left out;
// so is "parameter_count" when the stored result predates it.
// Epochs are compared first, in order.
std::optional<Difference> first_difference(const store::TrialRecord& stored,
                                           const std::vector<store::EpochRow>& stored_epochs,
                                           const RerunRecord& rerun);

}  // namespace layerlab::study
