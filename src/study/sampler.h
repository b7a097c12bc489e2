// Samplers turn a study into trials: suggest(number) gives trial `number` (0-based) of the
// study, fully resolved, or nullopt once the study has no more (number >= total_trials()).
// Samplers register by method name (grid, random, sobol, tpe) in samplers().
//
// Trial numbering. Seeds always vary fastest, so the repeats of a configuration are
// adjacent; with S seeds and D datasets:
//   grid:               datasets outermost, then the parameters as nested loops in file
//                       order (the last parameter varies fastest), then seeds:
//                       number = ((dataset * configurations + config) * S) + seed
//   random, sobol, tpe: configurations outermost, then datasets, then seeds:
//                       number = ((config * D) + dataset) * S + seed
//                       so a budget cut short still covers every dataset, and random and
//                       sobol try each configuration on every dataset.
// Every suggestion carries the study's dataset, validation settings, early_stopping patience
// (unless patience is a parameter), the seed as params.seed and every other parameter
// resolved (defaults filled in). split_seed is 0 for every trial: all trials of a dataset
// share one train/validation split, so their metrics compare on the same rows, and the
// seeds measure training variance.
//
// grid, random and sobol are pure functions of (study, number): the same number gives the
// same trial whichever worker asks, in any order. random and sobol draw from the study seed
// (a hash of the study's name) with counter-based hashing, not a stateful generator. tpe is
// deterministic given (study, number, finished, pending).
//
// Thread safety: the samplers here hold no mutable state; suggest() may be called
// concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <vector>

#include "common/registry.h"
#include "study/spec.h"
#include "study/trial.h"

namespace layerlab::study {

struct Suggestion {
  int64_t number;  // 0-based trial number within the study
  TrialSpec trial;
};

struct Observation {
  int64_t number;
  TrialSpec trial;
  double value;      // the study's metric as measured (the sampler applies the goal)
  bool finished_ok;  // false for failed or diverged trials: tpe counts them as the worst
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The suggestion for trial `number` given finished observations and suggestions still
  // pending (running or queued); nullopt when the study has no trial `number`.
  virtual std::optional<Suggestion> suggest(int64_t number, std::span<const Observation> finished,
                                            std::span<const Suggestion> pending) = 0;
  // True when suggestions depend on results (tpe): the coordinator keeps only a bounded
  // number of trials in flight and passes finished results.
  virtual bool adaptive() const { return false; }
};

using SamplerFactory = std::unique_ptr<Sampler> (*)(const StudySpec&);
// The samplers by method name.
const Registry<SamplerFactory>& samplers();
// The sampler for spec.method; the spec must come from parse_study().
std::unique_ptr<Sampler> make_sampler(const StudySpec& spec);

std::unique_ptr<Sampler> make_grid_sampler(const StudySpec& spec);
std::unique_ptr<Sampler> make_random_sampler(const StudySpec& spec);
std::unique_ptr<Sampler> make_sobol_sampler(const StudySpec& spec);
std::unique_ptr<Sampler> make_tpe_sampler(const StudySpec& spec);

// ---- Building blocks shared by the samplers (and their tests). ----

// Where a trial number sits in the random/sobol/tpe layout above.
struct TrialSlot {
  int64_t config;  // configuration index
  size_t dataset;  // index into spec.datasets
  size_t seed;     // index into spec.seeds
};
TrialSlot trial_slot(const StudySpec& spec, int64_t number);

// The resolved trial for `config` (a JSON object of parameter values) on spec.datasets[dataset]
// with spec.seeds[seed].
TrialSpec make_trial(const StudySpec& spec, size_t dataset, size_t seed,
                     const nlohmann::json& config);

// The seed random draws come from: FNV-1a of the study's name.
uint64_t study_seed(const StudySpec& spec);

// Counter-based random numbers: a hash of (seed, a, b, c) (SplitMix64's mixer, chained), and
// that hash as a double uniform in [0, 1).
uint64_t counter_hash(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0);
double counter_uniform(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0);
// A uniform point of [0,1)^dims for configuration `config`: coordinate k is
// counter_uniform(seed, config, k).
std::vector<double> random_point(uint64_t seed, int64_t config, size_t dims);

// The unscrambled Sobol sequence (Joe-Kuo direction numbers, Gray-code order, as
// scipy.stats.qmc.Sobol(scramble=False)): coordinate `dim` (0-based) of point `index`,
// as a 32-bit fraction (value = bits / 2^32).
inline constexpr size_t kSobolMaxDimensions = 24;
uint32_t sobol_bits(uint64_t index, size_t dim);

}  // namespace layerlab::study
