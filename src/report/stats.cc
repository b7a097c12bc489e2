#include "report/stats.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace layerlab::report {
namespace {

// Continued fraction of the incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    for (int step = 0; step < 2; ++step) {
      d = 1 + aa * d;
      if (std::abs(d) < kTiny) d = kTiny;
      c = 1 + aa / c;
      if (std::abs(c) < kTiny) c = kTiny;
      d = 1 / d;
      const double del = d * c;
      h *= del;
      if (step == 1 && std::abs(del - 1) < kEps) return h;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    }
  }
  return h;
}

// The regularized incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

// P(T <= t) for Student's t with df degrees of freedom.
double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0))
    throw internal_error("student_t_quantile: needs 0 < p < 1 and df > 0");
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MeanDifference mean_difference(const Moments& a, const Moments& b) {
  MeanDifference out;
  out.diff = a.mean - b.mean;
  if (a.n < 2 || b.n < 2) return out;
  const double na = static_cast<double>(a.n), nb = static_cast<double>(b.n);
  const double va = a.variance() / na, vb = b.variance() / nb;
  const double se = std::sqrt(va + vb);
  if (se > 0) {
    const double df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
    const double t = student_t_quantile(0.975, df);
    out.df = df;
    out.ci_low = out.diff - t * se;
    out.ci_high = out.diff + t * se;
  } else {  // no spread on either side: the difference is exact
    out.ci_low = out.ci_high = out.diff;
  }
  const double pooled =
      std::sqrt(((na - 1) * a.variance() + (nb - 1) * b.variance()) / (na + nb - 2));
  if (pooled > 0) out.cohens_d = out.diff / pooled;
  return out;
}

double explained_share(const std::vector<double>& y, const std::vector<int>& group, int groups) {
  if (y.size() != group.size()) throw internal_error("explained_share: sizes differ");
  if (y.empty()) return 0;
  std::vector<double> sum(static_cast<size_t>(groups), 0.0);
  std::vector<size_t> count(static_cast<size_t>(groups), 0);
  double total = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const auto g = static_cast<size_t>(group[i]);
    sum[g] += y[i];
    ++count[g];
    total += y[i];
  }
  const double mean = total / static_cast<double>(y.size());
  double ss_total = 0;
  for (double v : y) ss_total += (v - mean) * (v - mean);
  if (ss_total <= 0) return 0;
  double ss_between = 0;
  for (size_t g = 0; g < sum.size(); ++g) {
    if (count[g] == 0) continue;
    const double d = sum[g] / static_cast<double>(count[g]) - mean;
    ss_between += static_cast<double>(count[g]) * d * d;
  }
  return std::clamp(ss_between / ss_total, 0.0, 1.0);
}

}  // namespace layerlab::report
