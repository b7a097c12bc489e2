// Synthetic classification problems for depth studies: spirals, moons, xor, checkerboard.
// Deterministic from the seed (data/random.h), classes balanced exactly, rows shuffled.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "data/loaders.h"
#include "data/random.h"

namespace layerlab::data {
namespace {

constexpr int64_t kMaxRows = 10'000'000;

struct Common {
  int64_t n;
  double noise;
  uint64_t seed;
};

// n is bounded by DataLimits (rows, and rows x features values) as well as kMaxRows.
Common read_common(const Spec& spec, const DataLimits& limits, int features, int64_t min_rows,
                   double default_noise) {
  const int64_t max_rows =
      std::max(min_rows, std::min({kMaxRows, limits.max_rows, limits.max_values / features}));
  return {spec.get_int("n", 1000, min_rows, max_rows),
          spec.get_double("noise", default_noise, 0, 10), spec.get_seed("seed", 0)};
}

// Generates c.n rows of `features` values: classes balanced (n / classes each, the first
// n % classes classes one more), in a seeded random order; point(rng, class, out) writes one
// row, then Gaussian noise of std c.noise is added to every value.
template <typename PointFn>
Dataset generate(const Common& c, int features, int classes, PointFn point) {
  Rng rng(c.seed);
  Dataset d;
  d.rows = c.n;
  d.features = features;
  d.classes = classes;
  for (int k = 0; k < classes; ++k) d.class_names.push_back(std::to_string(k));
  for (int f = 0; f < features; ++f) d.feature_names.push_back(fmt::format("x{}", f));
  d.y.reserve(static_cast<size_t>(c.n));
  for (int64_t i = 0; i < c.n; ++i) d.y.push_back(static_cast<float>(i % classes));
  rng.shuffle(d.y);
  d.x.resize(static_cast<size_t>(c.n) * static_cast<size_t>(features));
  std::vector<double> row(static_cast<size_t>(features));
  for (int64_t i = 0; i < c.n; ++i) {
    point(rng, static_cast<int>(d.y[static_cast<size_t>(i)]), row);
    for (int f = 0; f < features; ++f) {
      double v = row[static_cast<size_t>(f)];
      if (c.noise > 0) v += c.noise * rng.normal();
      d.x[static_cast<size_t>(i * features + f)] = static_cast<float>(v);
    }
  }
  return d;
}

constexpr double kPi = std::numbers::pi;

Dataset spirals(const Spec& spec, const DataLimits& limits) {
  int classes = static_cast<int>(spec.get_int("classes", 3, 2, 100));
  double turns = spec.get_double("turns", 1, 0.1, 20);
  Common c = read_common(spec, limits, 2, classes, 0.05);
  // Arm k: radius t, angle 2*pi*(turns * t + k / classes), t uniform in [0, 1).
  return generate(c, 2, classes, [&](Rng& rng, int k, std::vector<double>& p) {
    double t = rng.uniform();
    double a = 2 * kPi * (turns * t + static_cast<double>(k) / classes);
    p[0] = t * std::cos(a);
    p[1] = t * std::sin(a);
  });
}

Dataset moons(const Spec& spec, const DataLimits& limits) {
  Common c = read_common(spec, limits, 2, 2, 0.1);
  // scikit-learn's make_moons shapes, centred on the origin.
  return generate(c, 2, 2, [](Rng& rng, int k, std::vector<double>& p) {
    double t = kPi * rng.uniform();
    p[0] = (k == 0 ? std::cos(t) : 1 - std::cos(t)) - 0.5;
    p[1] = (k == 0 ? std::sin(t) : 0.5 - std::sin(t)) - 0.25;
  });
}

Dataset xor_data(const Spec& spec, const DataLimits& limits) {
  int dims = static_cast<int>(spec.get_int("dims", 2, 2, 64));
  Common c = read_common(spec, limits, dims, 2, 0.1);
  // Uniform in [-1, 1]^dims; class = parity of the number of positive coordinates.
  return generate(c, dims, 2, [dims](Rng& rng, int k, std::vector<double>& p) {
    int positive = 0;
    for (int j = 0; j < dims; ++j) {
      p[static_cast<size_t>(j)] = rng.uniform(-1, 1);
      positive += p[static_cast<size_t>(j)] > 0;
    }
    if (positive % 2 != k) p[0] = -p[0];  // flips the parity, keeps the density uniform
  });
}

Dataset checkerboard(const Spec& spec, const DataLimits& limits) {
  int cells = static_cast<int>(spec.get_int("cells", 4, 2, 64));
  Common c = read_common(spec, limits, 2, 2, 0.0);
  // A cells x cells board on [-1, 1]^2; cell (i, j) has class (i + j) % 2. A point picks one
  // of its class's cells uniformly, then a uniform position inside it.
  std::vector<std::vector<int>> cells_of(2);
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j)
      cells_of[static_cast<size_t>((i + j) % 2)].push_back(i * cells + j);
  double w = 2.0 / cells;
  return generate(c, 2, 2, [&](Rng& rng, int k, std::vector<double>& p) {
    const std::vector<int>& mine = cells_of[static_cast<size_t>(k)];
    int cell = mine[rng.below(mine.size())];
    p[0] = -1 + w * (cell / cells + rng.uniform());
    p[1] = -1 + w * (cell % cells + rng.uniform());
  });
}

}  // namespace

void register_synthetic(LoaderRegistry& r) {
  r.add("spirals", {"Interleaved spiral arms in 2-D; ?n=1000&classes=3&turns=1&noise=0.05&seed=0",
                    {"n", "classes", "turns", "noise", "seed"},
                    spirals});
  r.add("moons", {"Two interleaving half circles in 2-D, 2 classes; ?n=1000&noise=0.1&seed=0",
                  {"n", "noise", "seed"},
                  moons});
  r.add("xor", {"XOR / parity of the signs in [-1,1]^dims, 2 classes; "
                "?n=1000&dims=2&noise=0.1&seed=0",
                {"n", "dims", "noise", "seed"},
                xor_data});
  r.add("checkerboard", {"Checkerboard of cells x cells on [-1,1]^2, 2 classes; "
                         "?n=1000&cells=4&noise=0&seed=0",
                         {"n", "cells", "noise", "seed"},
                         checkerboard});
}

}  // namespace layerlab::data
