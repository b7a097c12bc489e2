// The synthetic generators: shape, balance, determinism, parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::class_counts;

double max_abs(const Dataset& d) {
  double m = 0;
  for (float v : d.x) m = std::max(m, static_cast<double>(std::abs(v)));
  return m;
}

TEST(Synthetic, DefaultsShapeAndBalance) {
  struct Case {
    const char* spec;
    int features, classes;
  };
  for (Case c : {Case{"spirals", 2, 3}, Case{"moons", 2, 2}, Case{"xor", 2, 2},
                 Case{"checkerboard", 2, 2}}) {
    SCOPED_TRACE(c.spec);
    Dataset d = load(c.spec);
    EXPECT_EQ(d.rows, 1000);
    EXPECT_EQ(d.features, c.features);
    EXPECT_EQ(d.classes, c.classes);
    EXPECT_EQ(d.x.size(), 1000u * static_cast<size_t>(c.features));
    EXPECT_EQ(d.class_names.size(), static_cast<size_t>(c.classes));
    std::vector<int64_t> n = class_counts(d);
    EXPECT_LE(*std::max_element(n.begin(), n.end()) - *std::min_element(n.begin(), n.end()), 1);
    for (float v : d.x) ASSERT_TRUE(std::isfinite(v));
    EXPECT_LT(max_abs(d), 3.0);
  }
}

TEST(Synthetic, Deterministic) {
  for (const char* spec :
       {"spirals?seed=5", "moons?seed=5", "xor?seed=5&dims=3", "checkerboard?seed=5&noise=0.1"}) {
    SCOPED_TRACE(spec);
    Dataset a = load(spec), b = load(spec);
    EXPECT_EQ(a.x, b.x);
    EXPECT_EQ(a.y, b.y);
    std::string other = std::string(spec) + "&n=1000";  // same parameters, spelled out
    EXPECT_EQ(load(other).x, a.x);
  }
  EXPECT_NE(load("spirals?seed=1").x, load("spirals?seed=2").x);
  EXPECT_NE(load("moons?seed=1").y, load("moons?seed=2").y);
}

TEST(Synthetic, FixedValuesDoNotDriftAcrossPlatforms) {
  // Our own generator: these are the same on every standard library.
  Dataset d = load("xor?n=4&noise=0&seed=0");
  ASSERT_EQ(d.x.size(), 8u);
  for (int64_t r = 0; r < d.rows; ++r) {
    float a = d.x[static_cast<size_t>(2 * r)], b = d.x[static_cast<size_t>(2 * r + 1)];
    int positive = (a > 0) + (b > 0);
    EXPECT_EQ(positive % 2, static_cast<int>(d.y[static_cast<size_t>(r)]));
  }
}

TEST(Synthetic, SpiralsParameters) {
  Dataset d = load("spirals?n=601&classes=5&noise=0&turns=2&seed=3");
  EXPECT_EQ(d.rows, 601);
  EXPECT_EQ(d.classes, 5);
  EXPECT_EQ(class_counts(d), (std::vector<int64_t>{121, 120, 120, 120, 120}));
  // Without noise every point lies on its arm: radius t, angle 2 pi (turns t + k / classes).
  for (int64_t r = 0; r < d.rows; ++r) {
    double x = d.x[static_cast<size_t>(2 * r)], y = d.x[static_cast<size_t>(2 * r + 1)];
    double t = std::hypot(x, y);
    ASSERT_LE(t, 1.0 + 1e-6);
    int k = static_cast<int>(d.y[static_cast<size_t>(r)]);
    double a = 2 * std::numbers::pi * (2 * t + k / 5.0);
    EXPECT_NEAR(x, t * std::cos(a), 1e-4);
    EXPECT_NEAR(y, t * std::sin(a), 1e-4);
  }
}

TEST(Synthetic, NoiseIsRespected) {
  Dataset clean = load("moons?noise=0&seed=1"), noisy = load("moons?noise=0.5&seed=1");
  // Clean moons lie on unit circles around (-0.5, -0.25) and (0.5, 0.25).
  for (int64_t r = 0; r < clean.rows; ++r) {
    double x = clean.x[static_cast<size_t>(2 * r)], y = clean.x[static_cast<size_t>(2 * r + 1)];
    bool upper = clean.y[static_cast<size_t>(r)] == 0;
    double cx = upper ? -0.5 : 0.5, cy = upper ? -0.25 : 0.25;
    ASSERT_NEAR(std::hypot(x - cx, y - cy), 1.0, 1e-5);
  }
  EXPECT_GT(max_abs(noisy), max_abs(clean));
}

TEST(Synthetic, XorDims) {
  Dataset d = load("xor?n=500&dims=5&noise=0&seed=2");
  EXPECT_EQ(d.features, 5);
  EXPECT_EQ(d.feature_names.size(), 5u);
  EXPECT_EQ(class_counts(d), (std::vector<int64_t>{250, 250}));
  for (int64_t r = 0; r < d.rows; ++r) {
    int positive = 0;
    for (int j = 0; j < 5; ++j) positive += d.x[static_cast<size_t>(r * 5 + j)] > 0;
    ASSERT_EQ(positive % 2, static_cast<int>(d.y[static_cast<size_t>(r)]));
  }
  EXPECT_LOAD_ERROR("xor?dims=1", ErrorCode::kInvalidArgument, "dims: must be between 2 and 64");
}

TEST(Synthetic, CheckerboardCells) {
  Dataset d = load("checkerboard?n=2000&cells=3&seed=4");
  EXPECT_EQ(class_counts(d), (std::vector<int64_t>{1000, 1000}));
  for (int64_t r = 0; r < d.rows; ++r) {
    double x = d.x[static_cast<size_t>(2 * r)], y = d.x[static_cast<size_t>(2 * r + 1)];
    ASSERT_GE(x, -1);
    ASSERT_LT(x, 1);
    int i = static_cast<int>((x + 1) / (2.0 / 3)), j = static_cast<int>((y + 1) / (2.0 / 3));
    ASSERT_EQ((i + j) % 2, static_cast<int>(d.y[static_cast<size_t>(r)]));
  }
}

TEST(Synthetic, TooFewRows) {
  EXPECT_LOAD_ERROR("spirals?n=2&classes=3", ErrorCode::kInvalidArgument, "n: must be between 3");
}

}  // namespace
}  // namespace layerlab::data
