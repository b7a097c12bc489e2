// StudySpec: a study file (DESIGN.md, "Study file"), parsed and checked. parse_study() either
// returns a spec that every sampler can run or throws InvalidArgument before anything else
// happens; every message names the key path, what was expected, what was got and where:
//   parameters.units: expected a positive integer, got -3 (study.yaml:9:20)
// (FILE:LINE:COLUMN, 1-based, of the offending node).
//
// Schema (every key but name and datasets is optional; unknown keys are errors, with a
// "did you mean"):
//   name: depth-vs-activation                   [a-z0-9._-]+, at most 100 characters
//   datasets: [iris, wine]                      dataset specs (data/dataset.h); plain names
//                                               must be known (files are not opened here)
//   validation: {fraction: 0.2, stratify: true} 0 < fraction < 1
//   metric: {name: val_accuracy, goal: maximize}
//       name: val_accuracy | val_rmse | val_loss | train_loss (study/metrics.h), one that
//       every dataset's task reports (the task is read from the dataset spec: task=regression
//       of csv: and libsvm:, else classification); the default follows the task:
//       val_accuracy for classification, val_rmse for regression, none when the datasets
//       mix tasks. The goal is the metric's own (maximize val_accuracy, minimize the others);
//       the other one is refused.
//   method: grid                                grid | random | sobol | tpe
//   budget: {trials: 500, hours: 2}             trials: required except for grid; hours: no
//                                               trial starts that long after the study was
//                                               created (Coordinator::top_up)
//   seeds: [0, 1, 2]                            distinct non-negative integers, default [0]
//   parameters:                                 names of nn::Params except seed
//     NAME: {value: X} | {values: [A, B]} |
//           {distribution: D, min: A, max: B[, q: Q]}
//       D: uniform | log_uniform | int_uniform | q_uniform | q_log_uniform, or categorical
//       with values; every value and both ends of a range are checked as nn::Params checks
//       them; integer parameters round draws to integers.
//   parameter_order: [a, b]                     the parameters' order when the mapping's own
//                                               order is lost (canonical JSON carries it)
//   early_terminate: {type: asha, min_epochs: 1, eta: 3} | {type: median, warmup_epochs: 0}
//   early_stopping: {patience: 5}               becomes every trial's patience (0 = off)
//   keep_weights: {top: 5}                      keep the weights of each dataset's 5 best
//                                               trials in the store (1..100; see
//                                               store::KeepWeights)
//
// Trials, and what the budget counts: a configuration is one value per parameter; each is
// trained once per dataset and once per seed. budget.trials counts trials in total (not
// configurations). total_trials():
//   grid:                configurations x datasets x seeds, capped at budget.trials if given
//   random, sobol, tpe:  budget.trials exactly (the last configuration may get fewer seeds)
// Trial numbering (sampler.h): seeds always vary fastest, so the repeats of a configuration
// have adjacent numbers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "nn/network.h"
#include "study/search_space.h"

namespace layerlab::study {

struct StudySpec {
  std::string name;
  std::vector<std::string> datasets;
  double validation_fraction = 0.2;
  bool stratify = true;
  std::string metric = "val_accuracy";
  bool maximize = true;
  std::string method = "grid";
  int64_t budget_trials = 0;  // 0 = none (grid only)
  double budget_hours = 0;    // 0 = none
  std::vector<uint64_t> seeds{0};
  std::vector<std::pair<std::string, Domain>> parameters;  // in file order
  struct EarlyTerminate {
    std::string type;  // "" = none, "asha", "median"
    int min_epochs = 1;
    int eta = 3;
    int warmup_epochs = 0;
  } early_terminate;
  int patience = 0;    // early_stopping.patience
  int keep_top = 0;    // keep_weights.top; 0 = keep no weights
  std::string source;  // the original study file text, stored with the study
  // Where the parser found each dataset entry and validation.fraction (FILE:LINE:COL), for
  // check_datasets()' messages; empty for a spec not parsed from text. Not stored.
  std::vector<std::string> dataset_places;
  std::string validation_place;

  // The canonical form, stored in the store: the study-file schema with every default
  // filled in (not `source`). It is itself a study file: from_json(to_json()) gives an equal
  // spec, parameter order included (through parameter_order).
  nlohmann::json to_json() const;
  // Parses a canonical form (or any study file as JSON) under SpecLimits::stored(); errors
  // name "<json>".
  static StudySpec from_json(const nlohmann::json& j);

  // The number of trials this study will have (see the header comment).
  int64_t total_trials() const;
  // The number of distinct configurations: the grid's size for grid, else
  // ceil(total_trials / (datasets x seeds)).
  int64_t configurations() const;

  SearchSpace search_space() const { return SearchSpace(parameters); }
};

// Limits on a study file, each refused with a message naming the field (DESIGN.md, "Hostile
// input": a study may come from anyone who can reach the server). The defaults suit the
// command line and the server; `layerlab serve` may set its own.
struct SpecLimits {
  // The study file or request body, in bytes.
  size_t max_file_bytes = 4 << 20;
  // Nesting of mappings and lists, aliases expanded (a study file needs 5).
  int max_depth = 64;
  // Bytes of the document's strings (keys and values) with every alias expanded, each use
  // of an alias counting the whole node it names: an alias to one long string is refused
  // at the alias that crosses the line, before the text is copied out.
  int64_t max_expanded_bytes = 4 << 20;
  // YAML or JSON nodes with every alias expanded: a "billion laughs" document is refused
  // while it is read, before anything is built from it. Ten times a values: list at its
  // largest; a study file rarely has a thousand.
  int64_t max_nodes = 100'000;
  // Trials in one study: the grid's size x datasets x seeds, or budget.trials.
  int64_t max_trials = 1'000'000;
  // Entries of datasets: and seeds:.
  int64_t max_datasets = 100;
  int64_t max_seeds = 1'000;
  // Values of one parameter: a values: list, or the points of a grid over a range.
  int64_t max_values = 10'000;
  // Every number a study file gives, at most (parameters' values and both ends of their
  // ranges; units and hidden_layers are bounded by `network`):
  int64_t max_epochs = 100'000;        // epochs, lr_step_epochs, warmup_epochs, patience,
                                       // early_stopping.patience, early_terminate's epochs
  int64_t max_batch_size = 1'000'000;  // batch_size
  double max_rate = 100;               // learning_rate, weight_decay, lr_gamma, lr_min
  int64_t max_eta = 1'000;             // early_terminate.eta
  double max_hours = 10'000;           // budget.hours
  // The fewest rows each split of each dataset may hold (check_datasets): a trial with no
  // training or no validation rows has nothing to learn from or nothing to measure.
  int64_t min_train_rows = 1;
  int64_t min_validation_rows = 1;
  // Every network the search space allows (the widest, deepest, largest batch) must fit:
  // checked at parse time without the dataset's inputs and outputs, and again with them by
  // check_datasets().
  nn::NetworkLimits network;

  // The limits for a study already stored (StudySpec::from_json): its size was checked when
  // it was created, perhaps under a server's larger limits, so only the parser's own safety
  // limits (bytes, depth, nodes) apply.
  static SpecLimits stored();
};

// Parses and checks a study file; `file_name` is used in messages only. Throws
// InvalidArgument, naming FILE:LINE:COL, for anything wrong: YAML syntax, a recursive alias,
// nesting or alias expansion beyond the limits, text that is not UTF-8, and every schema
// and limit check. The spec's `source` is yaml_text.
StudySpec parse_study(const std::string& yaml_text, const std::string& file_name,
                      const SpecLimits& limits = {});

// A study sent as text of either kind (a request body): JSON when the first non-blank
// character is '{', else YAML (as the server's POST /api/v1/studies takes it). JSON is
// checked first as JSON: nesting beyond limits.max_depth is refused before it is parsed,
// a syntax error, a number out of range ("value": 1e400) or invalid UTF-8 gets
// "invalid JSON: ..." with LINE:COL; an empty text gets "empty body". Every error is
// InvalidArgument whose message names `source` and the place.
StudySpec parse_study_text(const std::string& text, const std::string& source,
                           const SpecLimits& limits = {});

// Reads and parses the file at `path`; an unreadable file is NotFound naming the path.
StudySpec load_study_file(const std::string& path, const SpecLimits& limits = {});

// Throws InvalidArgument when some network the search space allows exceeds `limits`, for a
// dataset of `inputs` features and `outputs` outputs (0 and 0: not known yet, hidden layers
// only); the message starts with `context`.
void check_network_size(const StudySpec& spec, int inputs, int outputs,
                        const nn::NetworkLimits& limits, const std::string& context);

// Loads every dataset of the study once, as a trial would (data::load, then the split), and
// checks that each can be trained on: InvalidArgument naming the dataset, the file and line
// of a bad row (ragged, NaN, truncated...), a split with fewer rows than
// limits.min_train_rows or min_validation_rows (with both counts, at validation.fraction
// when the file gives it, else at the dataset's entry), or a network of the search space
// too large for the dataset's inputs and outputs. NotFound for a missing file,
// FailedPrecondition for a missing data package. `layerlab run` calls it before it stores
// anything; so may the server, after data::confine_to_directory().
void check_datasets(const StudySpec& spec, const SpecLimits& limits = {},
                    const data::DataLimits& data_limits = {});

}  // namespace layerlab::study
