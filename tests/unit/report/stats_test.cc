// Statistics with known answers: moments, Student's t quantiles (table values), Welch's
// interval and Cohen's d, eta squared.
#include "report/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace layerlab::report {
namespace {

Moments of(std::initializer_list<double> ys) {
  Moments m;
  for (double y : ys) m.add(y);
  return m;
}

TEST(Moments, MeanVarianceAndStandardError) {
  const Moments m = of({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(m.n, 8u);
  EXPECT_DOUBLE_EQ(m.mean, 5);
  EXPECT_NEAR(m.variance(), 32.0 / 7, 1e-12);
  EXPECT_NEAR(*m.se(), std::sqrt(32.0 / 7 / 8), 1e-12);
  EXPECT_EQ(m.min, 2);
  EXPECT_EQ(m.max, 9);
  const Moments one = of({3});
  EXPECT_EQ(one.variance(), 0);
  EXPECT_FALSE(one.se()) << "one value: no standard error";
  EXPECT_EQ(*of({1, 1, 1}).se(), 0);
}

// Merged moments are those of the numbers of both, with either side empty too.
TEST(Moments, MergeIsAsIfEveryNumberWereAddedToOne) {
  Moments a = of({2, 4, 4, 4});
  a.merge(of({5, 5, 7, 9}));
  const Moments all = of({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(a.n, all.n);
  EXPECT_NEAR(a.mean, all.mean, 1e-12);
  EXPECT_NEAR(a.variance(), all.variance(), 1e-12);
  EXPECT_EQ(a.min, 2);
  EXPECT_EQ(a.max, 9);
  Moments empty;
  empty.merge(of({-3, 3}));
  EXPECT_EQ(empty.n, 2u);
  EXPECT_EQ(empty.min, -3);
  EXPECT_NEAR(empty.variance(), 18, 1e-12);
  Moments one = of({1});
  one.merge(Moments{});
  EXPECT_EQ(one.n, 1u);
  EXPECT_EQ(one.mean, 1);
}

TEST(StudentT, QuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062047, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.30265273, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.77644511, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.22813885, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.04227246, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 1e7), 1.95996398, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.01504837, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.77644511, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.5, 3), 0, 1e-9);
}

TEST(MeanDifference, WelchIntervalAndCohensD) {
  // Equal sizes and variances: df = 4; se = sqrt(1/3 + 1/3).
  const MeanDifference d = mean_difference(of({1, 2, 3}), of({4, 5, 6}));
  EXPECT_DOUBLE_EQ(d.diff, -3);
  ASSERT_TRUE(d.df && d.ci_low && d.ci_high && d.cohens_d);
  EXPECT_NEAR(*d.df, 4, 1e-12);
  const double half = 2.77644511 * std::sqrt(2.0 / 3);
  EXPECT_NEAR(*d.ci_low, -3 - half, 1e-6);
  EXPECT_NEAR(*d.ci_high, -3 + half, 1e-6);
  EXPECT_NEAR(*d.cohens_d, -3, 1e-12);
  // Unequal variances: Welch-Satterthwaite df between min(n) - 1 and n1 + n2 - 2.
  const MeanDifference w = mean_difference(of({10, 12, 14, 16}), of({1, 1.5, 2}));
  EXPECT_GT(*w.df, 3);
  EXPECT_LT(*w.df, 5);
  EXPECT_GT(*w.ci_low, 0);
  // One side with a single value: the difference only.
  const MeanDifference one = mean_difference(of({1}), of({2, 3}));
  EXPECT_DOUBLE_EQ(one.diff, -1.5);
  EXPECT_FALSE(one.ci_low || one.cohens_d || one.df);
  // No spread at all: an exact difference, no d.
  const MeanDifference flat = mean_difference(of({2, 2}), of({1, 1}));
  EXPECT_EQ(*flat.ci_low, 1);
  EXPECT_EQ(*flat.ci_high, 1);
  EXPECT_FALSE(flat.cohens_d);
}

TEST(ExplainedShare, EtaSquared) {
  // Groups {0.9, 0.8} and {0.6, 0.5}: SSbetween 0.09 of SStotal 0.1.
  EXPECT_NEAR(explained_share({0.9, 0.8, 0.6, 0.5}, {0, 0, 1, 1}, 2), 0.9, 1e-12);
  EXPECT_NEAR(explained_share({1, 2, 3, 4}, {0, 1, 2, 3}, 4), 1, 1e-12);  // one trial a group
  EXPECT_NEAR(explained_share({1, 2, 1, 2}, {0, 0, 1, 1}, 2), 0, 1e-12);  // equal group means
  EXPECT_EQ(explained_share({5, 5, 5}, {0, 1, 1}, 2), 0);                 // constant metric
  EXPECT_EQ(explained_share({}, {}, 0), 0);
}

}  // namespace
}  // namespace layerlab::report
