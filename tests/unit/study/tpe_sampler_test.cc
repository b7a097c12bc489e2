// tpe: better than random on a known objective, deterministic given its history, and the
// constant liar spreads parallel suggestions.
#include <algorithm>
#include <cmath>
#include <limits>

#include "study/sampler.h"
#include "test_util.h"

namespace layerlab::study {
namespace {

using testing::identity;
using testing::parse;

std::string objective_spec(const std::string& method, const std::string& name,
                           const std::string& metric = "val_loss") {
  return "name: " + name + "\ndatasets: [iris]\nmetric: {name: " + metric + "}\nmethod: " + method +
         "\nbudget: {trials: 60}\nparameters:\n"
         "  learning_rate: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-1}\n"
         "  weight_decay: {distribution: uniform, min: 0, max: 1}\n";
}

// Minimum at learning_rate = 10^-2.5, weight_decay = 0.3.
double objective(const nn::Params& p) {
  return std::pow(std::log10(p.learning_rate) + 2.5, 2) + std::pow(p.weight_decay - 0.3, 2);
}

// Runs a study sequentially (one worker) and returns the best objective value.
double best_after(const StudySpec& spec, int trials) {
  auto sampler = make_sampler(spec);
  std::vector<Observation> finished;
  double best = std::numeric_limits<double>::infinity();
  for (int64_t n = 0; n < trials; ++n) {
    auto s = sampler->suggest(n, finished, {});
    if (!s) ADD_FAILURE() << "no suggestion " << n;
    if (!s) break;
    const double v = objective(s->trial.params);
    finished.push_back({n, s->trial, v, true});
    best = std::min(best, v);
  }
  return best;
}

TEST(TpeSampler, BeatsRandomOnAKnownObjective) {
  double tpe = 0, random = 0;
  int tpe_wins = 0;
  constexpr int kStudies = 20;
  for (int seed = 0; seed < kStudies; ++seed) {
    const std::string name = "objective-" + std::to_string(seed);
    const double t = best_after(parse(objective_spec("tpe", name)), 60);
    const double r = best_after(parse(objective_spec("random", name)), 60);
    tpe += t / kStudies;
    random += r / kStudies;
    tpe_wins += t < r;
  }
  EXPECT_LT(tpe, random * 0.5) << "mean best: tpe " << tpe << ", random " << random;
  EXPECT_GE(tpe_wins, 14) << "tpe " << tpe << ", random " << random;
}

std::vector<Observation> history(Sampler& sampler, int n) {
  std::vector<Observation> finished;
  for (int64_t i = 0; i < n; ++i) {
    auto s = sampler.suggest(i, finished, {});
    finished.push_back({i, s->trial, objective(s->trial.params), true});
  }
  return finished;
}

TEST(TpeSampler, IsDeterministicGivenItsHistory) {
  const StudySpec spec = parse(objective_spec("tpe", "determinism"));
  auto sampler = make_sampler(spec);
  EXPECT_TRUE(sampler->adaptive());
  std::vector<Observation> finished = history(*sampler, 25);
  const std::string expected = identity(sampler->suggest(25, finished, {})->trial);
  EXPECT_EQ(identity(make_sampler(spec)->suggest(25, finished, {})->trial), expected);
  std::reverse(finished.begin(), finished.end());  // the order of the history does not matter
  EXPECT_EQ(identity(make_sampler(spec)->suggest(25, finished, {})->trial), expected);
  EXPECT_FALSE(sampler->suggest(60, finished, {}).has_value());
}

TEST(TpeSampler, GoalIsApplied) {
  // Maximising -f is minimising f: the same suggestions.
  const StudySpec min_spec = parse(objective_spec("tpe", "goal", "val_loss"));
  const StudySpec max_spec = parse(objective_spec("tpe", "goal", "val_accuracy"));
  ASSERT_TRUE(max_spec.maximize);
  auto sampler = make_sampler(min_spec);
  std::vector<Observation> finished = history(*sampler, 30);
  std::vector<Observation> negated = finished;
  for (Observation& o : negated) o.value = -o.value;
  EXPECT_EQ(identity(make_sampler(min_spec)->suggest(30, finished, {})->trial),
            identity(make_sampler(max_spec)->suggest(30, negated, {})->trial));
  EXPECT_NE(identity(make_sampler(min_spec)->suggest(30, finished, {})->trial),
            identity(make_sampler(max_spec)->suggest(30, finished, {})->trial));
}

double coordinate(const nn::Params& p) {
  return std::log10(p.learning_rate);
}

double mean_pairwise_distance(const std::vector<nn::Params>& ps) {
  double total = 0;
  int pairs = 0;
  for (size_t i = 0; i < ps.size(); ++i)
    for (size_t j = i + 1; j < ps.size(); ++j) {
      total += std::hypot(coordinate(ps[i]) - coordinate(ps[j]),
                          ps[i].weight_decay - ps[j].weight_decay);
      ++pairs;
    }
  return total / pairs;
}

TEST(TpeSampler, ConstantLiarSpreadsParallelSuggestions) {
  double with_liar = 0, without = 0;
  for (int seed = 0; seed < 10; ++seed) {
    auto sampler = make_sampler(parse(objective_spec("tpe", "liar-" + std::to_string(seed))));
    const std::vector<Observation> finished = history(*sampler, 30);
    // Four workers ask while the others' trials are still running (same finished history).
    std::vector<Suggestion> pending;
    std::vector<nn::Params> parallel, ignoring_pending;
    for (int64_t n = 30; n < 34; ++n) {
      auto s = sampler->suggest(n, finished, pending);
      parallel.push_back(s->trial.params);
      pending.push_back(*s);
      ignoring_pending.push_back(sampler->suggest(n, finished, {})->trial.params);
    }
    for (size_t i = 0; i < parallel.size(); ++i)
      for (size_t j = i + 1; j < parallel.size(); ++j)
        EXPECT_NE(parallel[i].to_json(), parallel[j].to_json());
    with_liar += mean_pairwise_distance(parallel);
    without += mean_pairwise_distance(ignoring_pending);

    // Pending trials change the suggestion: four pending copies of the same point push the
    // next one away from it.
    const Suggestion same = *sampler->suggest(30, finished, {});
    const std::vector<Suggestion> copies = {
        {30, same.trial}, {31, same.trial}, {32, same.trial}, {33, same.trial}};
    EXPECT_NE(identity(sampler->suggest(34, finished, copies)->trial),
              identity(sampler->suggest(34, finished, {})->trial));
  }
  EXPECT_GT(with_liar, without * 1.2) << "with liar " << with_liar << ", without " << without;
}

TEST(TpeSampler, SeedsRepeatTheFirstSeedsConfiguration) {
  const StudySpec spec = parse(
      "name: seeds\ndatasets: [iris]\nmethod: tpe\nbudget: {trials: 40}\nseeds: [5, "
      "6]\nparameters:\n"
      "  learning_rate: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-1}\n"
      "  activation: {values: [relu, tanh]}\n");
  auto sampler = make_sampler(spec);
  std::vector<Observation> finished;
  for (int64_t n = 0; n < 40; n += 2) {
    const Suggestion first = *sampler->suggest(n, finished, {});
    const std::vector<Suggestion> pending = {first};
    const Suggestion second = *sampler->suggest(n + 1, finished, pending);
    EXPECT_EQ(first.trial.params.seed, 5u);
    EXPECT_EQ(second.trial.params.seed, 6u);
    EXPECT_EQ(first.trial.params.learning_rate, second.trial.params.learning_rate) << n;
    EXPECT_EQ(first.trial.params.activation, second.trial.params.activation) << n;
    finished.push_back({n, first.trial, coordinate(first.trial.params), true});
    finished.push_back({n + 1, second.trial, coordinate(second.trial.params), n % 4 == 0});
  }
}

}  // namespace
}  // namespace layerlab::study
