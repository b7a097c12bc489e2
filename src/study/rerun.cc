#include "study/rerun.h"

#include <fmt/format.h>

#include <regex>

#include "backend/backend.h"
#include "common/error.h"
#include "common/strings.h"
#include "study/trial_report.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

std::string trial_name(const store::StudyRecord& s, int64_t number) {
  return fmt::format("trial {} of study {}", number, s.name);
}

// The thread count in a CPU backend's describe() text: "cpu (OpenBLAS ..., 4 threads)".
std::optional<int> threads_in(const std::string& description) {
  static const std::regex re(R"(, (\d+) threads?\)$)");
  std::smatch m;
  if (!std::regex_search(description, m, re)) return std::nullopt;
  return std::stoi(m[1].str());
}

// j[key] when j is an object with a string there, else "".
std::string string_field(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::optional<store::TrialRecord> find_trial(store::Store& store, int64_t study_id,
                                             int64_t number) {
  if (number < 0) return std::nullopt;  // numbers start at 0 (and number - 1 must not wrap)
  // The first trial numbered from `number` on (a keyset read of one row).
  for (const auto& t : store.list_trials(study_id, {.limit = 1, .after_number = number - 1}))
    if (t.number == number) return t;
  return std::nullopt;
}

}  // namespace

StoredTrial load_stored_trial(store::Store& store, const store::StudyRecord& study, int64_t number,
                              bool for_export) {
  if (number < 0)
    throw invalid_argument(fmt::format("trial number {}: numbers start at 0", number));
  auto trial = find_trial(store, study.id, number);
  if (!trial)
    throw not_found(fmt::format("study {} has no trial {} ({} trials)", study.name, number,
                                store.count_trials(study.id, {})));
  return load_stored_trial(store, study, *trial, for_export);
}

StoredTrial load_stored_trial(store::Store& store, const store::StudyRecord& study,
                              const store::TrialRecord& trial, bool for_export) {
  const std::string name = trial_name(study, trial.number);
  switch (trial.status) {
    case store::TrialStatus::kQueued:
    case store::TrialStatus::kRunning:
      throw failed_precondition(fmt::format("{} is {}: only a finished trial can be rerun", name,
                                            store::to_string(trial.status)));
    case store::TrialStatus::kCancelled:
      throw failed_precondition(name + " was cancelled before it ran: there is nothing to rerun");
    case store::TrialStatus::kFailed:
      throw failed_precondition(
          fmt::format("{} failed ({}): it has no result to reproduce", name,
                      trial.error.empty() ? "no reason recorded" : trial.error));
    default:
      break;
  }
  StoredTrial t;
  t.study = study;
  t.spec = StudySpec::from_json(study.spec);
  t.trial = trial;
  if (!trial.result.is_object())
    throw failed_precondition(name + " is " + store::to_string(trial.status) +
                              " but has no stored result");
  t.trial_spec = TrialSpec::from_stored(trial.params, trial.dataset);
  t.epochs.clear();
  for (const auto& e : store.list_epochs(trial.id, trial.attempts)) t.epochs.push_back(e.row);

  const json& result = trial.result;
  const std::string backend = string_field(result, "backend");
  if (result.contains("provenance") && result["provenance"].is_object()) {
    t.provenance = result["provenance"];
  } else {
    t.notes.push_back(fmt::format(
        "note: {} has no provenance record (trained before layerlab recorded it); its backend "
        "was '{}'",
        name, backend.empty() ? "not recorded" : backend));
  }
  const std::string device = string_field(t.provenance, "backend");
  std::string gpu;
  for (const std::string& where : {device, backend})
    if (gpu.empty() && where.rfind("cuda", 0) == 0) gpu = where;
  if (!gpu.empty() && !for_export)
    throw failed_precondition(fmt::format(
        "{} was trained on {}: rerun trains on the CPU and compares bit for bit, which a GPU "
        "run cannot match (rerun it on the same GPU with `layerlab train --trial`)",
        name, gpu));
  if (t.trial_spec.params.precision != "fp32") {
    if (!for_export)
      throw failed_precondition(
          fmt::format("{} used precision {}; the CPU backend computes in fp32", name,
                      t.trial_spec.params.precision));
    t.notes.push_back(fmt::format("note: {} used precision {}; the CPU trains it in fp32", name,
                                  t.trial_spec.params.precision));
    t.trial_spec.params.precision = "fp32";
  }
  if (!gpu.empty()) {
    t.notes.push_back(fmt::format(
        "note: {} was trained on {}; the CPU cannot match a GPU run bit for bit", name, gpu));
    t.threads = 1;  // the thread count recorded is the GPU backend's
    return t;
  }
  std::optional<int> threads;
  if (t.provenance.is_object() && t.provenance.contains("threads") &&
      t.provenance["threads"].is_number_integer())
    threads = t.provenance["threads"].get<int>();
  if (!threads) threads = threads_in(backend);
  if (!threads) {
    threads = 1;
    t.notes.push_back("note: the record does not say how many threads trained it; using 1");
  }
  t.threads = *threads;
  return t;
}

Retrained retrain(const StoredTrial& t, bool keep_parameters) {
  Retrained r;
  auto backend = backend::make_backend("cpu", t.threads);
  r.data = prepare_data(t.trial_spec);
  // The record's pruning decision (made against other trials) is replayed, not retaken.
  const int prune_at = t.trial.status == store::TrialStatus::kPruned
                           ? static_cast<int>(t.epochs.size())
                           : std::numeric_limits<int>::max();
  auto on_epoch = [prune_at](int, const nn::EpochRecord& e) { return e.epoch < prune_at; };
  if (keep_parameters) {
    // As run_trial, keeping the weights (run_trial takes no TrainOptions).
    const TrialSpec& spec = t.trial_spec;
    spec.params.validate();
    r.outcome.spec = spec;
    r.outcome.task = r.data.task;
    r.outcome.backend = backend->describe();
    r.outcome.provenance = provenance(*backend);
    r.outcome.train_rows = r.data.split.train.rows;
    r.outcome.validation_rows = r.data.split.validation.rows;
    r.outcome.parameter_count =
        nn::parameter_count(spec.params, r.data.task, r.data.split.train.features);
    nn::TrainOptions options;
    options.on_epoch = on_epoch;
    options.keep_parameters = true;
    r.outcome.result =
        nn::train(*backend, spec.params, r.data.task, r.data.train(), r.data.validation(), options);
  } else {
    r.outcome = run_trial(t.trial_spec, r.data, *backend, on_epoch);
  }

  const TrialReport report = make_report(r.outcome, t.spec.metric, "");
  RerunRecord rerun;
  rerun.status = report.status;
  rerun.result = report.result;
  rerun.value = report.value;
  for (const auto& e : r.outcome.result.epochs) rerun.epochs.push_back(epoch_row(e));
  r.difference = first_difference(t.trial, t.epochs, rerun);
  if (!r.difference) return r;

  if (t.provenance.is_object()) {
    r.likely_causes = provenance_differences(t.provenance, provenance(*backend));
  } else {
    r.likely_causes.push_back(
        "the record has no provenance (trained before layerlab recorded it): the host, "
        "revision and BLAS it ran with are unknown");
  }
  const json& result = t.trial.result;
  if (result.contains("pack_size") && result["pack_size"].is_number_integer() &&
      result["pack_size"].get<int>() > 1)
    r.likely_causes.push_back(fmt::format(
        "it was trained in a pack of {} trials (one batched computation); a rerun trains it alone",
        result["pack_size"].get<int>()));
  return r;
}

std::vector<std::string> describe_rerun(const StoredTrial& t, const Retrained& r) {
  std::vector<std::string> lines = t.notes;
  const std::string name = trial_name(t.study, t.trial.number);
  if (!r.difference) {
    const auto& epochs = r.outcome.result.epochs;
    std::string value =
        t.trial.value ? fmt::format("{} {}", t.spec.metric, *t.trial.value) : "no value";
    lines.push_back(fmt::format("{} reproduced bit for bit ({} epoch{}, {}, {}, {} CPU thread{})",
                                name, epochs.size(), epochs.size() == 1 ? "" : "s",
                                store::to_string(t.trial.status), value, t.threads,
                                t.threads == 1 ? "" : "s"));
    return lines;
  }
  lines.push_back(
      fmt::format("{} was not reproduced: first difference at {}", name, r.difference->describe()));
  if (r.likely_causes.empty()) {
    lines.push_back(
        "no provenance field differs between the record and this machine (host, revision, "
        "BLAS, threads, OS, compiler): the difference is not explained by where it ran");
  } else {
    lines.push_back("likely causes:");
    for (const auto& c : r.likely_causes) lines.push_back("  " + c);
  }
  return lines;
}

}  // namespace layerlab::study
