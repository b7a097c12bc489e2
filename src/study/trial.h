// A trial: one (dataset, parameters, seed) to train and evaluate. TrialSpec is what a trial
// record stores (fully resolved, so it reruns exactly); run_trial() loads the data, trains
// and returns the outcome with its learning curve.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "data/dataset.h"
#include "nn/params.h"
#include "nn/trainer.h"

namespace layerlab::study {

struct TrialSpec {
  std::string dataset = "digits";
  double validation_fraction = 0.2;
  bool stratify = true;
  uint64_t split_seed = 0;  // the train/validation split; the training seed is params.seed
  nn::Params params;

  // The parameters of nn::Params plus dataset, validation_fraction, stratify, split_seed.
  nlohmann::json to_json() const;
  static TrialSpec from_json(const nlohmann::json& j);
  // A stored trial's parameters (without the dataset, kept in its own column) and dataset.
  static TrialSpec from_stored(const nlohmann::json& params, const std::string& dataset);
};

struct TrialOutcome {
  TrialSpec spec;
  nn::Task task;
  nn::TrainResult result;
  std::string backend;        // Backend::describe()
  int pack_size = 1;          // trials trained together in one batched computation
  nlohmann::json provenance;  // study::provenance(): version, revision, host, BLAS, threads
  int64_t train_rows = 0, validation_rows = 0;
  int64_t parameter_count = 0;  // of the trained network (the cost side of a Pareto front)

  // The final JSON result: status, metrics, epochs run, seconds, parameter count, curve,
  // resolved parameters.
  nlohmann::json to_json() const;
};

// A trial's data, loaded, split and standardised (workers cache these per dataset).
struct PreparedData {
  data::Split split;
  nn::Task task;
  // The standardisation fitted on split.train and applied to both parts (what a saved or
  // kept model needs); empty when the data was prepared another way.
  data::Scaler scaler;
  nn::Examples train() const;
  nn::Examples validation() const;
};
PreparedData prepare_data(const TrialSpec& spec);

// Trials with equal keys can train in one pack: the same data and split, and parameters
// that differ only in what each member of a pack keeps for itself (learning rate,
// momentum, weight decay, dropout, seed, initialiser, patience).
std::string pack_key(const TrialSpec& spec);

// Trains specs (equal pack_key) as one pack on `data` (prepared for any of them);
// on_epoch's member is the index in specs. Each outcome equals run_trial's for that spec
// within float tolerance. keep_parameters: each outcome's result holds its final weights
// (for trained_model, a study's keep_weights). after_epochs: see nn::RoundCallback.
std::vector<TrialOutcome> run_trials(std::span<const TrialSpec> specs, const PreparedData& data,
                                     backend::Backend& b, const nn::EpochCallback& on_epoch = {},
                                     bool keep_parameters = false,
                                     const nn::RoundCallback& after_epochs = {});

inline TrialOutcome run_trial(const TrialSpec& spec, const PreparedData& data, backend::Backend& b,
                              const nn::EpochCallback& on_epoch = {}) {
  return run_trials(std::span<const TrialSpec>(&spec, 1), data, b, on_epoch)[0];
}

// The same on a backend made for `device` ("cpu" or "cuda[:N]", backend::make_backend) with
// `threads` CPU threads: `layerlab train`'s one trial.
TrialOutcome run_trial(const TrialSpec& spec, const PreparedData& data, const std::string& device,
                       int threads, const nn::EpochCallback& on_epoch = {});

}  // namespace layerlab::study
