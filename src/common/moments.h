// Moments: count, mean, variance, min and max of a stream of numbers in one pass (Welford),
// for the dashboard's aggregates and the report's statistics.
#pragma once

#include <cstddef>
#include <optional>

namespace layerlab {

// Mean and variance in one pass (Welford).
struct Moments {
  size_t n = 0;
  double mean = 0, m2 = 0;
  double min = 0, max = 0;
  void add(double y);
  // As if every number `other` saw had been added here (Chan et al.'s pairwise update).
  void merge(const Moments& other);
  double variance() const;  // sample variance (n - 1); 0 when n < 2
  double sd() const;
  // Standard error of the mean, sd / sqrt(n); nullopt when n < 2 (not measurable).
  std::optional<double> se() const;
};

}  // namespace layerlab
