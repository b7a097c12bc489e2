#include "common/strings.h"

#include <algorithm>

namespace layerlab {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of two
  // neighbouring letters each cost one ("irsi" is one edit from "iris").
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // A likely typo: at most a third of the word changed (and at least one edit allowed).
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    // The distance is at least the difference in length: skip what cannot be close (and
    // never build a table for a megabyte of hostile input).
    const size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (gap > limit) continue;
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best_d <= limit ? best : std::string();
}

}  // namespace layerlab
