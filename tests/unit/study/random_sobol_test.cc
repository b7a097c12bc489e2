// random and sobol: pure functions of the trial number, inside the domains, and (sobol)
// more even than random.
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "study/sampler.h"
#include "test_util.h"

namespace layerlab::study {
namespace {

using testing::first_suggestions;
using testing::identity;
using testing::parse;

std::string space_spec(const std::string& method, const std::string& name = "space") {
  return "name: " + name + "\n" +
         "datasets: [iris, wine]\n"
         "method: " +
         method +
         "\n"
         "budget: {trials: 400}\n"
         "seeds: [0, 1]\n"
         "parameters:\n"
         "  learning_rate: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-1}\n"
         "  units: {value: 32}\n"
         "  dropout: {distribution: uniform, min: 0.1, max: 0.5}\n"
         "  hidden_layers: {distribution: int_uniform, min: 1, max: 5}\n"
         "  batch_size: {distribution: q_uniform, min: 16, max: 128, q: 16}\n"
         "  activation: {values: [relu, tanh, gelu]}\n";
}

class UnitCubeSampler : public ::testing::TestWithParam<std::string> {};

TEST_P(UnitCubeSampler, SameNumberSameTrialInAnyOrder) {
  const StudySpec spec = parse(space_spec(GetParam()));
  auto in_order = make_sampler(spec);
  const auto reference = first_suggestions(*in_order, 400);
  EXPECT_FALSE(in_order->suggest(400, {}, {}).has_value());

  // A fresh sampler asked in reverse.
  auto reversed = make_sampler(spec);
  for (int64_t n = 399; n >= 0; --n)
    EXPECT_EQ(identity(reversed->suggest(n, {}, {})->trial),
              identity(reference[static_cast<size_t>(n)].trial));

  // Two workers sharing one sampler, interleaved: one ascending through the even numbers,
  // the other descending through the odd ones, with history that must not matter.
  auto shared = make_sampler(spec);
  std::vector<Suggestion> pending;
  for (int64_t i = 0; i < 200; ++i) {
    for (int64_t n : {2 * i, 399 - 2 * i}) {
      auto s = shared->suggest(n, {}, pending);
      ASSERT_TRUE(s.has_value());
      EXPECT_EQ(identity(s->trial), identity(reference[static_cast<size_t>(n)].trial));
      pending.push_back(*s);
    }
  }
  // Reproducible from the study (its name is the seed).
  EXPECT_EQ(identity(make_sampler(spec)->suggest(123, {}, {})->trial),
            identity(reference[123].trial));
}

TEST_P(UnitCubeSampler, ValuesStayInsideTheirDomains) {
  auto sampler = make_sampler(parse(space_spec(GetParam())));
  std::set<int> depths;
  std::set<int> batches;
  std::set<std::string> activations;
  for (const Suggestion& s : first_suggestions(*sampler, 400)) {
    const nn::Params& p = s.trial.params;
    EXPECT_GE(p.learning_rate, 1e-4);
    EXPECT_LE(p.learning_rate, 1e-1);
    EXPECT_GE(p.dropout, 0.1);
    EXPECT_LT(p.dropout, 0.5);
    EXPECT_EQ(p.units, 32);
    EXPECT_EQ(p.batch_size % 16, 0);
    depths.insert(p.hidden_layers);
    batches.insert(p.batch_size);
    activations.insert(p.activation);
  }
  EXPECT_EQ(depths, (std::set<int>{1, 2, 3, 4, 5}));  // both ends included
  EXPECT_EQ(batches, (std::set<int>{16, 32, 48, 64, 80, 96, 112, 128}));
  EXPECT_EQ(activations.size(), 3u);
}

TEST_P(UnitCubeSampler, SeedsRepeatAndDatasetsShareConfigurations) {
  auto sampler = make_sampler(parse(space_spec(GetParam())));
  const auto all = first_suggestions(*sampler, 8);
  auto config = [](const TrialSpec& t) {
    nlohmann::json j = t.params.to_json();
    j.erase("seed");
    return j.dump();
  };
  // number = ((config x 2 datasets) + dataset) x 2 seeds + seed
  EXPECT_EQ(all[0].trial.dataset, "iris");
  EXPECT_EQ(all[2].trial.dataset, "wine");
  EXPECT_EQ(all[0].trial.params.seed, 0u);
  EXPECT_EQ(all[1].trial.params.seed, 1u);
  for (size_t i : {1, 2, 3}) EXPECT_EQ(config(all[i].trial), config(all[0].trial));
  EXPECT_NE(config(all[4].trial), config(all[0].trial));
  EXPECT_EQ(all[5].trial.params.seed, 1u);
}

TEST_P(UnitCubeSampler, DependsOnTheStudyName) {
  auto a = make_sampler(parse(space_spec(GetParam(), "one")));
  auto b = make_sampler(parse(space_spec(GetParam(), "two")));
  EXPECT_NE(identity(a->suggest(4, {}, {})->trial), identity(b->suggest(4, {}, {})->trial));
}

TEST_P(UnitCubeSampler, LogUniformIsUniformInLogSpace) {
  auto sampler = make_sampler(
      parse("name: log\ndatasets: [iris]\nmethod: " + GetParam() +
            "\nbudget: {trials: 3000}\nparameters:\n"
            "  learning_rate: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-1}\n"));
  std::array<int, 3> decades{};
  for (int64_t n = 0; n < 3000; ++n) {
    const double lr = sampler->suggest(n, {}, {})->trial.params.learning_rate;
    decades[static_cast<size_t>(
        std::clamp(static_cast<int>(std::floor(std::log10(lr) + 4)), 0, 2))]++;
  }
  for (int count : decades) EXPECT_NEAR(count / 3000.0, 1.0 / 3.0, 0.04) << count;
}

INSTANTIATE_TEST_SUITE_P(Methods, UnitCubeSampler, ::testing::Values("random", "sobol"));

TEST(Sobol, MatchesTheJoeKuoSequence) {
  // scipy.stats.qmc.Sobol(d=24, scramble=False, bits=32).random(12346), points x 2^32.
  const std::map<uint64_t, std::array<uint32_t, 24>> reference = {
      {5, {3758096384, 3758096384, 536870912,  1610612736, 3758096384, 2684354560,
           3758096384, 1610612736, 1610612736, 536870912,  1610612736, 3758096384,
           3758096384, 536870912,  3758096384, 1610612736, 3758096384, 1610612736,
           1610612736, 2684354560, 2684354560, 2684354560, 3758096384, 1610612736}},
      {200, {889192448,  1660944384, 1761607680, 2533359616, 3506438144, 2399141888,
             117440512,  4177526784, 1426063360, 2667577344, 4278190080, 2533359616,
             1325400064, 2533359616, 419430400,  2969567232, 2734686208, 3640655872,
             3204448256, 754974720,  1560281088, 1291845632, 3707764736, 1157627904}},
      {1000, {943718400,  415236096,  2227175424, 2906652672, 1203765248, 3896508416,
              197132288,  3862953984, 2151677952, 297795584,  364904448,  1094713344,
              692060160,  1648361472, 616562688,  1589641216, 3091202048, 1480589312,
              4257218560, 3116367872, 2243952640, 2361393152, 4081057792, 2319450112}},
      {12345, {2752774144, 3493593088, 688652288,  2262564864, 3816030208, 252968960,
               546570240,  486801408,  3443785728, 1845231616, 319029248,  2571894784,
               3998482432, 4045144064, 148111360,  2752249856, 268697600,  218890240,
               1371799552, 1475084288, 855900160,  348913664,  2607022080, 3705405440}},
  };
  for (const auto& [index, point] : reference)
    for (size_t d = 0; d < kSobolMaxDimensions; ++d)
      EXPECT_EQ(sobol_bits(index, d), point[d]) << "point " << index << " dimension " << d;
  for (size_t d = 0; d < kSobolMaxDimensions; ++d) EXPECT_EQ(sobol_bits(0, d), 0u);
}

// The variance of the counts of n points over a k x k grid of cells of [0,1)^2.
double cell_count_variance(const std::vector<std::pair<double, double>>& points, int k) {
  std::vector<int> counts(static_cast<size_t>(k * k));
  for (const auto& [x, y] : points)
    counts[static_cast<size_t>(static_cast<int>(x * k) * k + static_cast<int>(y * k))]++;
  const double mean = static_cast<double>(points.size()) / (k * k);
  double var = 0;
  for (int c : counts) var += (c - mean) * (c - mean);
  return var / (k * k);
}

std::vector<std::pair<double, double>> unit_points(const std::string& method,
                                                   const std::string& name) {
  auto sampler = make_sampler(parse("name: " + name + "\ndatasets: [iris]\nmethod: " + method +
                                    "\nbudget: {trials: 256}\nparameters:\n"
                                    "  momentum: {distribution: uniform, min: 0, max: 1}\n"
                                    "  weight_decay: {distribution: uniform, min: 0, max: 1}\n"));
  std::vector<std::pair<double, double>> out;
  for (int64_t n = 0; n < 256; ++n) {
    const nn::Params p = sampler->suggest(n, {}, {})->trial.params;
    out.emplace_back(p.momentum, p.weight_decay);
  }
  return out;
}

TEST(Sobol, IsMoreEvenThanRandom) {
  double random_variance = 0;
  for (int s = 0; s < 5; ++s) {
    const std::string name = "even-" + std::to_string(s);
    // 256 Sobol points fill a 16 x 16 grid exactly once per cell, scramble or not.
    EXPECT_DOUBLE_EQ(cell_count_variance(unit_points("sobol", name), 16), 0.0);
    EXPECT_LT(cell_count_variance(unit_points("sobol", name), 4), 1e-12);
    random_variance += cell_count_variance(unit_points("random", name), 16) / 5;
  }
  EXPECT_GT(random_variance, 0.5);  // Poisson-like: about 1
}

}  // namespace
}  // namespace layerlab::study
