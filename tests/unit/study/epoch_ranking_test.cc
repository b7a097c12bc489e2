#include "study/epoch_ranking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "study/pruner.h"

namespace layerlab::study {
namespace {

const double kNaN = std::nan("");

TEST(EpochRanking, RanksFiniteValuesAndCountsNaNApart) {
  EpochRanking r(std::vector<double>{0.5, kNaN, 0.2, 0.5, 0.9});
  EXPECT_EQ(r.finite(), 4u);
  EXPECT_EQ(r.nans(), 1u);
  EXPECT_EQ(r.nth_lowest(0), 0.2);
  EXPECT_EQ(r.nth_lowest(1), 0.5);
  EXPECT_EQ(r.nth_lowest(2), 0.5);
  EXPECT_EQ(r.nth_lowest(3), 0.9);
  EXPECT_THROW(r.nth_lowest(4), Error);
  // Strictly better: ties are not.
  EXPECT_EQ(r.count_better(0.5, true), 1u);
  EXPECT_EQ(r.count_better(0.5, false), 1u);
  EXPECT_EQ(r.count_better(0.1, true), 4u);
  EXPECT_EQ(r.count_better(0.1, false), 0u);
  EXPECT_EQ(r.count_better(kNaN, true), 4u);
}

TEST(EpochRanking, ErasesOneOccurrenceAtATime) {
  EpochRanking r(std::vector<double>{0.5, 0.5, kNaN});
  EXPECT_TRUE(r.erase(0.5));
  EXPECT_EQ(r.finite(), 1u);
  EXPECT_EQ(r.nth_lowest(0), 0.5);
  EXPECT_FALSE(r.erase(0.7));
  EXPECT_TRUE(r.erase(kNaN));
  EXPECT_FALSE(r.erase(kNaN));
  EXPECT_TRUE(r.erase(0.5));
  EXPECT_FALSE(r.erase(0.5));
  EXPECT_EQ(r.finite(), 0u);
  EXPECT_EQ(r.nans(), 0u);
}

// The pruners' decisions as they were written before the ranking: sort everything.
bool median_by_sorting(double value, std::vector<double> others, bool maximize, int min_trials) {
  if (std::isnan(value)) return true;
  std::erase_if(others, [](double v) { return std::isnan(v); });
  if (static_cast<int>(others.size()) < min_trials) return false;
  std::sort(others.begin(), others.end());
  const size_t n = others.size();
  const double median = n % 2 ? others[n / 2] : 0.5 * (others[n / 2 - 1] + others[n / 2]);
  return maximize ? value < median : value > median;
}

bool asha_by_sorting(double value, std::vector<double> others, bool maximize, int eta) {
  if (std::isnan(value)) return true;
  others.push_back(value);
  std::sort(others.begin(), others.end(), [maximize](double a, double b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return maximize ? a > b : a < b;
  });
  const size_t keep = std::max<size_t>(1, others.size() / static_cast<size_t>(eta));
  const double threshold = others[keep - 1];
  return maximize ? value < threshold : value > threshold;
}

// Random studies with many ties and some NaN, values added and removed as a worker's cache
// does: every decision equals the one that sorts all values.
TEST(EpochRanking, PrunersDecideAsIfTheySortedEveryValue) {
  PrunerConfig median_config;
  median_config.type = "median";
  median_config.min_trials = 3;
  PrunerConfig asha_config;
  asha_config.type = "asha";
  asha_config.eta = 3;
  const auto median = make_pruner(median_config);
  const auto asha = make_pruner(asha_config);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 12);
  auto draw = [&] { return level(rng) == 0 ? kNaN : level(rng) / 12.0; };
  std::vector<double> values;
  EpochRanking ranking;
  int decisions = 0, pruned = 0;
  for (int step = 0; step < 3000; ++step) {
    if (!values.empty() && level(rng) < 3) {
      const size_t i = std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng);
      ASSERT_TRUE(ranking.erase(values[i]));
      values.erase(values.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      values.push_back(draw());
      ranking.insert(values.back());
    }
    const double value = draw();
    for (bool maximize : {true, false}) {
      const bool m = median->should_prune(1, value, ranking, maximize);
      const bool a = asha->should_prune(1, value, ranking, maximize);
      ASSERT_EQ(m, median_by_sorting(value, values, maximize, median_config.min_trials))
          << "step " << step << " value " << value << " maximize " << maximize;
      ASSERT_EQ(a, asha_by_sorting(value, values, maximize, asha_config.eta))
          << "step " << step << " value " << value << " maximize " << maximize;
      decisions += 2;
      pruned += m + a;
    }
  }
  // Both outcomes occur often enough for the comparison to mean something.
  EXPECT_GT(pruned, decisions / 10);
  EXPECT_LT(pruned, decisions * 9 / 10);
}

}  // namespace
}  // namespace layerlab::study
