#include <set>

#include "study/sampler.h"
#include "test_util.h"

namespace layerlab::study {
namespace {

using testing::first_suggestions;
using testing::identity;
using testing::parse;

const char* kGrid =
    "name: grid\n"
    "datasets: [iris, wine]\n"
    "validation: {fraction: 0.3, stratify: false}\n"
    "seeds: [7, 8, 9]\n"
    "early_stopping: {patience: 4}\n"
    "parameters:\n"
    "  hidden_layers: {values: [1, 2, 4]}\n"
    "  units: {distribution: q_uniform, min: 16, max: 64, q: 16}\n"
    "  optimizer: {value: sgd}\n"
    "  activation: {values: [relu, tanh]}\n";

TEST(GridSampler, IsCompleteAndDuplicateFree) {
  const StudySpec spec = parse(kGrid);
  ASSERT_EQ(spec.total_trials(), 3 * 4 * 2 * 2 * 3);
  auto sampler = make_sampler(spec);
  EXPECT_FALSE(sampler->adaptive());
  const auto all = first_suggestions(*sampler, 144);
  std::set<std::string> unique;
  std::set<std::tuple<std::string, int, int, std::string, uint64_t>> combos;
  for (const Suggestion& s : all) {
    unique.insert(identity(s.trial));
    const nn::Params& p = s.trial.params;
    combos.insert({s.trial.dataset, p.hidden_layers, p.units, p.activation, p.seed});
  }
  EXPECT_EQ(unique.size(), 144u);
  EXPECT_EQ(combos.size(), 144u);  // every (dataset, depth, units, activation, seed)
  EXPECT_FALSE(sampler->suggest(144, {}, {}).has_value());
  EXPECT_FALSE(sampler->suggest(-1, {}, {}).has_value());
}

TEST(GridSampler, OrderIsDatasetsThenParametersInFileOrderThenSeeds) {
  auto sampler = make_sampler(parse(kGrid));
  const auto all = first_suggestions(*sampler, 144);
  auto at = [&](int n) { return all[static_cast<size_t>(n)].trial; };
  // Seeds innermost: the repeats of a configuration are adjacent.
  EXPECT_EQ(at(0).params.seed, 7u);
  EXPECT_EQ(at(1).params.seed, 8u);
  EXPECT_EQ(at(2).params.seed, 9u);
  EXPECT_EQ(at(1).params.activation, at(0).params.activation);
  // Then the last parameter (activation), then units, then hidden_layers.
  EXPECT_EQ(at(0).params.activation, "relu");
  EXPECT_EQ(at(3).params.activation, "tanh");
  EXPECT_EQ(at(3).params.units, 16);
  EXPECT_EQ(at(6).params.units, 32);
  EXPECT_EQ(at(6).params.activation, "relu");
  EXPECT_EQ(at(23).params.hidden_layers, 1);
  EXPECT_EQ(at(24).params.hidden_layers, 2);
  // Datasets outermost.
  EXPECT_EQ(at(71).dataset, "iris");
  EXPECT_EQ(at(72).dataset, "wine");
  EXPECT_EQ(at(72).params.hidden_layers, 1);
  // Trial number is a pure function: asking out of order gives the same trials.
  for (int n : {143, 5, 72, 0})
    EXPECT_EQ(identity(sampler->suggest(n, {}, {})->trial), identity(at(n)));
}

TEST(GridSampler, SuggestionsAreFullyResolved) {
  auto sampler = make_sampler(parse(kGrid));
  const TrialSpec t = sampler->suggest(0, {}, {})->trial;
  EXPECT_EQ(t.dataset, "iris");
  EXPECT_DOUBLE_EQ(t.validation_fraction, 0.3);
  EXPECT_FALSE(t.stratify);
  EXPECT_EQ(t.split_seed, 0u);
  EXPECT_EQ(t.params.patience, 4);  // from early_stopping
  EXPECT_EQ(t.params.optimizer, "sgd");
  EXPECT_EQ(t.params.epochs, nn::Params().epochs);  // a default filled in
  // The stored form reruns exactly.
  EXPECT_EQ(TrialSpec::from_json(t.to_json()).to_json(), t.to_json());
}

TEST(GridSampler, BudgetCapsTheGrid) {
  auto sampler = make_sampler(parse(std::string(kGrid) + "budget: {trials: 10}\n"));
  EXPECT_TRUE(sampler->suggest(9, {}, {}).has_value());
  EXPECT_FALSE(sampler->suggest(10, {}, {}).has_value());
}

TEST(GridSampler, NoParametersIsOneConfiguration) {
  auto sampler = make_sampler(parse("name: a\ndatasets: [iris, wine]\nseeds: [0, 1]\n"));
  const auto all = first_suggestions(*sampler, 4);
  EXPECT_EQ(all[3].trial.dataset, "wine");
  EXPECT_EQ(all[3].trial.params.seed, 1u);
  EXPECT_FALSE(sampler->suggest(4, {}, {}).has_value());
}

}  // namespace
}  // namespace layerlab::study
