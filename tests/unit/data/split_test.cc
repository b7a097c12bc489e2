// split(), split_indices(), take_rows(), standardize().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::class_counts;

// A classification dataset with the given class counts; row i has x = {i, 2i}.
Dataset with_counts(const std::vector<int>& counts) {
  Dataset d;
  d.name = "made-up";
  d.features = 2;
  d.classes = static_cast<int>(counts.size());
  for (int c = 0; c < d.classes; ++c)
    for (int k = 0; k < counts[static_cast<size_t>(c)]; ++k) {
      d.x.push_back(static_cast<float>(d.rows));
      d.x.push_back(static_cast<float>(2 * d.rows));
      d.y.push_back(static_cast<float>(c));
      ++d.rows;
    }
  return d;
}

TEST(Split, SizesAndStratification) {
  Dataset iris = load("iris");
  Split s = split(iris, 0.2, 7);
  EXPECT_EQ(s.train.rows, 120);
  EXPECT_EQ(s.validation.rows, 30);
  EXPECT_EQ(class_counts(s.validation), (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(class_counts(s.train), (std::vector<int64_t>{40, 40, 40}));
  EXPECT_EQ(s.train.x.size(), 120u * 4);
  EXPECT_EQ(s.validation.y.size(), 30u);
  EXPECT_EQ(s.train.classes, 3);
  EXPECT_EQ(s.train.class_names, iris.class_names);

  // Unequal classes: each gets round(n_c * fraction).
  Dataset bc = load("breast_cancer");
  Split b = split(bc, 0.25, 1);
  EXPECT_EQ(class_counts(b.validation), (std::vector<int64_t>{53, 89}));  // 212/4, 357/4 = 89.25
  EXPECT_EQ(class_counts(b.train), (std::vector<int64_t>{159, 268}));
}

TEST(Split, SmallClassesKeepATrainingRow) {
  Dataset d = with_counts({1, 2, 3, 10});
  SplitIndices s = split_indices(d, 0.9, 0);
  Split m = split(d, 0.9, 0);
  // class 0 (1 row): round(0.9) = 1 to validation; others keep one training row.
  EXPECT_EQ(class_counts(m.validation), (std::vector<int64_t>{1, 1, 2, 9}));
  EXPECT_EQ(class_counts(m.train), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(s.validation.size(), 13u);
}

TEST(Split, Deterministic) {
  Dataset d = load("wine");
  SplitIndices a = split_indices(d, 0.3, 42), b = split_indices(d, 0.3, 42);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.validation, b.validation);
  SplitIndices c = split_indices(d, 0.3, 43);
  EXPECT_NE(a.validation, c.validation);
  Split sa = split(d, 0.3, 42), sb = split(d, 0.3, 42);
  EXPECT_EQ(sa.train.x, sb.train.x);
  EXPECT_EQ(sa.validation.y, sb.validation.y);
}

TEST(Split, NoOverlapAndUnionIsEverything) {
  for (bool stratify : {true, false}) {
    Dataset d = load("digits");
    SplitIndices s = split_indices(d, 0.15, 3, stratify);
    std::set<int64_t> train(s.train.begin(), s.train.end());
    std::set<int64_t> val(s.validation.begin(), s.validation.end());
    EXPECT_EQ(train.size(), s.train.size());  // no duplicates
    EXPECT_EQ(val.size(), s.validation.size());
    for (int64_t v : val) EXPECT_EQ(train.count(v), 0u);
    EXPECT_EQ(train.size() + val.size(), static_cast<size_t>(d.rows));
    EXPECT_EQ(*std::max_element(s.train.begin(), s.train.end()) < d.rows, true);
    // Stratified: sum over classes of round(n_c * 0.15) = 9 * 27 + 26; plain: round(269.55).
    EXPECT_EQ(s.validation.size(), stratify ? 269u : 270u);
  }
}

TEST(Split, RowsMatchIndicesAndAreMixed) {
  Dataset d = with_counts({20, 20});
  SplitIndices s = split_indices(d, 0.5, 9);
  Split m = split(d, 0.5, 9);
  for (size_t i = 0; i < s.train.size(); ++i) {
    EXPECT_EQ(m.train.x[2 * i], static_cast<float>(s.train[i]));
    EXPECT_EQ(m.train.y[i], d.y[static_cast<size_t>(s.train[i])]);
  }
  // Not grouped by class: both classes appear in the first half of the training rows.
  std::set<float> first(m.train.y.begin(), m.train.y.begin() + 10);
  EXPECT_EQ(first.size(), 2u);
}

TEST(Split, RegressionIsPlainRandom) {
  Dataset d = with_counts({10});
  d.task = Task::kRegression;
  d.classes = 0;
  for (size_t i = 0; i < d.y.size(); ++i) d.y[i] = static_cast<float>(i) * 0.5f;
  Split s = split(d, 0.3, 0);
  EXPECT_EQ(s.validation.rows, 3);
  EXPECT_EQ(s.train.rows, 7);
  EXPECT_EQ(s.train.task, Task::kRegression);
}

TEST(Split, UnstratifiedSizes) {
  Dataset d = with_counts({3, 97});
  Split s = split(d, 0.1, 5, /*stratify=*/false);
  EXPECT_EQ(s.validation.rows, 10);
}

TEST(Split, BadFraction) {
  Dataset d = with_counts({5, 5});
  for (double f : {-0.1, 1.0, 1.5, std::nan("")})
    EXPECT_TRUE(testing::throws_error([&] { split(d, f, 0); }, ErrorCode::kInvalidArgument,
                                      "validation fraction must be in [0, 1)"));
  EXPECT_EQ(split(d, 0.0, 0).validation.rows, 0);
}

TEST(Standardize, TrainStatisticsOnly) {
  // Hand computed: train feature 0 = {1, 2, 3, 6}: mean 3, population std sqrt(3.5);
  // feature 1 is constant 5: mean 5, std 0 -> 1.
  Split s;
  s.train.features = s.validation.features = 2;
  s.train.rows = 4;
  s.train.x = {1, 5, 2, 5, 3, 5, 6, 5};
  s.validation.rows = 2;
  s.validation.x = {3, 5, 10, 7};
  s.train.y = {0, 0, 0, 0};
  s.validation.y = {0, 0};
  standardize(s);
  float sd = std::sqrt(3.5f);
  EXPECT_FLOAT_EQ(s.train.x[0], -2 / sd);
  EXPECT_FLOAT_EQ(s.train.x[6], 3 / sd);
  EXPECT_FLOAT_EQ(s.train.x[1], 0);
  EXPECT_FLOAT_EQ(s.validation.x[0], 0);
  EXPECT_FLOAT_EQ(s.validation.x[2], 7 / sd);
  EXPECT_FLOAT_EQ(s.validation.x[3], 2);  // (7 - 5) / 1
}

TEST(Standardize, MeanZeroStdOne) {
  Split s = split(load("wine"), 0.2, 0);
  standardize(s);
  auto f = static_cast<size_t>(s.train.features);
  for (size_t j = 0; j < f; ++j) {
    double sum = 0, sq = 0;
    for (int64_t r = 0; r < s.train.rows; ++r) sum += s.train.x[static_cast<size_t>(r) * f + j];
    double mean = sum / static_cast<double>(s.train.rows);
    for (int64_t r = 0; r < s.train.rows; ++r) {
      double v = s.train.x[static_cast<size_t>(r) * f + j] - mean;
      sq += v * v;
    }
    EXPECT_NEAR(mean, 0, 1e-5) << j;
    EXPECT_NEAR(std::sqrt(sq / static_cast<double>(s.train.rows)), 1, 1e-4) << j;
  }
  // Validation is scaled with the training statistics, so it is only roughly standard.
  double vsum = 0;
  for (size_t r = 0; r < static_cast<size_t>(s.validation.rows); ++r) vsum += s.validation.x[r * f];
  EXPECT_NEAR(vsum / static_cast<double>(s.validation.rows), 0, 0.5);
}

TEST(Split, InconsistentShapes) {
  Dataset d = with_counts({3, 3});
  d.y.pop_back();
  EXPECT_TRUE(testing::throws_error([&] { split(d, 0.5, 0); }, ErrorCode::kInvalidArgument,
                                    "made-up: inconsistent dataset: 6 rows, 2 features"));
}

TEST(Standardize, ConstantColumnsStayFinite) {
  // digits has pixels that are 0 everywhere.
  Split s = split(load("digits"), 0.2, 0);
  Scaler sc = fit_scaler(s.train);
  EXPECT_EQ(sc.scale[0], 1.0f);
  EXPECT_EQ(sc.mean[0], 0.0f);
  standardize(s);
  for (float v : s.train.x) ASSERT_TRUE(std::isfinite(v));
  for (size_t r = 0; r < static_cast<size_t>(s.train.rows); ++r) EXPECT_EQ(s.train.x[r * 64], 0);
}

}  // namespace
}  // namespace layerlab::data
