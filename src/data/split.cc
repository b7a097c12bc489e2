// Seeded train/validation splits and feature standardisation.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "data/dataset.h"
#include "data/random.h"

namespace layerlab::data {
namespace {

// round(n * fraction) rows for validation, leaving at least one for training when n >= 2.
int64_t validation_count(int64_t n, double fraction) {
  int64_t v = std::llround(static_cast<double>(n) * fraction);
  if (n >= 2 && v >= n) v = n - 1;
  return v;
}

// x and y must hold rows x features and rows x targets values.
void check_shape(const Dataset& d) {
  if (d.rows < 0 || d.features < 0 || d.targets < 1 ||
      d.x.size() != static_cast<size_t>(d.rows) * static_cast<size_t>(d.features) ||
      d.y.size() != static_cast<size_t>(d.rows) * static_cast<size_t>(d.targets))
    throw invalid_argument(fmt::format(
        "{}: inconsistent dataset: {} rows, {} features, {} targets, but {} x and {} y values",
        d.name, d.rows, d.features, d.targets, d.x.size(), d.y.size()));
}

}  // namespace

SplitIndices split_indices(const Dataset& d, double validation_fraction, uint64_t seed,
                           bool stratify) {
  if (!(validation_fraction >= 0 && validation_fraction < 1))
    throw invalid_argument(
        fmt::format("validation fraction must be in [0, 1), got {}", validation_fraction));
  check_shape(d);
  Rng rng(seed);
  SplitIndices s;
  // Groups of rows split separately: one per class, or all rows.
  std::vector<std::vector<int64_t>> groups;
  if (stratify && d.task == Task::kClassification && d.classes > 0) {
    groups.resize(static_cast<size_t>(d.classes));
    for (int64_t i = 0; i < d.rows; ++i) {
      auto c = static_cast<int64_t>(d.y[static_cast<size_t>(i)]);
      if (c < 0 || c >= d.classes)
        throw invalid_argument(
            fmt::format("{}: row {} has class {} outside 0..{}", d.name, i, c, d.classes - 1));
      groups[static_cast<size_t>(c)].push_back(i);
    }
  } else {
    groups.emplace_back(static_cast<size_t>(d.rows));
    for (int64_t i = 0; i < d.rows; ++i) groups[0][static_cast<size_t>(i)] = i;
  }
  for (std::vector<int64_t>& g : groups) {
    rng.shuffle(g);
    auto n_val =
        static_cast<size_t>(validation_count(static_cast<int64_t>(g.size()), validation_fraction));
    s.validation.insert(s.validation.end(), g.begin(), g.begin() + static_cast<ptrdiff_t>(n_val));
    s.train.insert(s.train.end(), g.begin() + static_cast<ptrdiff_t>(n_val), g.end());
  }
  // Mix the classes so that the rows do not come grouped by class.
  rng.shuffle(s.train);
  rng.shuffle(s.validation);
  return s;
}

Dataset take_rows(const Dataset& d, const std::vector<int64_t>& rows) {
  check_shape(d);
  Dataset out;
  out.name = d.name;
  out.task = d.task;
  out.features = d.features;
  out.classes = d.classes;
  out.targets = d.targets;
  out.feature_names = d.feature_names;
  out.class_names = d.class_names;
  out.rows = static_cast<int64_t>(rows.size());
  auto f = static_cast<size_t>(d.features);
  auto t = static_cast<size_t>(d.targets);
  out.x.reserve(rows.size() * f);
  out.y.reserve(rows.size() * t);
  for (int64_t r : rows) {
    if (r < 0 || r >= d.rows)
      throw internal_error(fmt::format("take_rows: row {} out of range", r));
    auto i = static_cast<size_t>(r);
    out.x.insert(out.x.end(), d.x.begin() + static_cast<ptrdiff_t>(i * f),
                 d.x.begin() + static_cast<ptrdiff_t>((i + 1) * f));
    out.y.insert(out.y.end(), d.y.begin() + static_cast<ptrdiff_t>(i * t),
                 d.y.begin() + static_cast<ptrdiff_t>((i + 1) * t));
  }
  return out;
}

Split split(const Dataset& d, double validation_fraction, uint64_t seed, bool stratify) {
  SplitIndices s = split_indices(d, validation_fraction, seed, stratify);
  return {take_rows(d, s.train), take_rows(d, s.validation)};
}

Scaler fit_scaler(const Dataset& d) {
  check_shape(d);
  auto f = static_cast<size_t>(d.features);
  Scaler s;
  s.mean.assign(f, 0.0f);
  s.scale.assign(f, 1.0f);
  if (d.rows == 0) return s;
  std::vector<double> mean(f, 0.0), m2(f, 0.0);
  std::vector<float> lo(d.x.begin(), d.x.begin() + static_cast<ptrdiff_t>(f)), hi = lo;
  for (int64_t r = 0; r < d.rows; ++r) {
    const float* row = d.x.data() + static_cast<size_t>(r) * f;
    for (size_t j = 0; j < f; ++j) {
      mean[j] += row[j];
      lo[j] = std::min(lo[j], row[j]);
      hi[j] = std::max(hi[j], row[j]);
    }
  }
  for (double& m : mean) m /= static_cast<double>(d.rows);
  for (int64_t r = 0; r < d.rows; ++r) {
    const float* row = d.x.data() + static_cast<size_t>(r) * f;
    for (size_t j = 0; j < f; ++j) m2[j] += (row[j] - mean[j]) * (row[j] - mean[j]);
  }
  for (size_t j = 0; j < f; ++j) {
    s.mean[j] = static_cast<float>(mean[j]);
    double sd = std::sqrt(m2[j] / static_cast<double>(d.rows));
    // A constant feature (exactly, not after rounding) keeps scale 1.
    s.scale[j] = lo[j] == hi[j] || sd == 0 ? 1.0f : static_cast<float>(sd);
    if (lo[j] == hi[j]) s.mean[j] = lo[j];
  }
  return s;
}

void apply_scaler(const Scaler& s, Dataset& d) {
  check_shape(d);
  auto f = static_cast<size_t>(d.features);
  if (s.mean.size() != f || s.scale.size() != f)
    throw invalid_argument(fmt::format("scaler has {} features, the dataset {}", s.mean.size(), f));
  for (size_t r = 0; r < static_cast<size_t>(d.rows); ++r) {
    float* row = d.x.data() + r * f;
    for (size_t j = 0; j < f; ++j) row[j] = (row[j] - s.mean[j]) / s.scale[j];
  }
}

Scaler standardize(Split& s) {
  Scaler sc = fit_scaler(s.train);
  apply_scaler(sc, s.train);
  apply_scaler(sc, s.validation);
  return sc;
}

}  // namespace layerlab::data
