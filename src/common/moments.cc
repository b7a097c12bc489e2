#include "common/moments.h"

#include <algorithm>
#include <cmath>

namespace layerlab {

void Moments::add(double y) {
  if (n == 0) min = max = y;
  ++n;
  const double d = y - mean;
  mean += d / static_cast<double>(n);
  m2 += d * (y - mean);
  min = std::min(min, y);
  max = std::max(max, y);
}

void Moments::merge(const Moments& other) {
  if (other.n == 0) return;
  if (n == 0) {
    *this = other;
    return;
  }
  const double na = static_cast<double>(n), nb = static_cast<double>(other.n);
  const double d = other.mean - mean;
  n += other.n;
  mean += d * nb / static_cast<double>(n);
  m2 += other.m2 + d * d * na * nb / static_cast<double>(n);
  min = std::min(min, other.min);
  max = std::max(max, other.max);
}

double Moments::variance() const {
  return n > 1 ? std::max(0.0, m2 / static_cast<double>(n - 1)) : 0.0;
}

double Moments::sd() const {
  return std::sqrt(variance());
}

std::optional<double> Moments::se() const {
  if (n < 2) return std::nullopt;
  return sd() / std::sqrt(static_cast<double>(n));
}

}  // namespace layerlab
