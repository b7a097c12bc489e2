#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include "common/text_safety.h"

namespace layerlab::cli {
namespace {

std::string duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "?";
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

// "1.0000 (#105)", "1.0000 (18 tied)".
std::string best_of(const study::Leaderboard& b) {
  if (b.best_count > 1) return fmt::format("{:.4f} ({} tied)", *b.best_value(), b.best_count);
  return fmt::format("{:.4f} (#{})", *b.best_value(), b.top.front().number);
}

}  // namespace

std::string best_summary(const std::string& metric, const std::vector<study::Leaderboard>& boards) {
  if (boards.size() == 1) return boards[0].best_value() ? metric + " " + best_of(boards[0]) : "";
  std::string each;
  for (const study::Leaderboard& b : boards)
    if (b.best_value()) each += (each.empty() ? "" : ", ") + b.dataset + " " + best_of(b);
  return each.empty() ? "" : metric + ": " + each;
}

Progress::Progress(FILE* out)
    : out_(out), tty_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

std::string Progress::describe(const ProgressState& s, double elapsed) {
  using store::TrialStatus;
  const auto& c = s.counts;
  const int64_t done = c.finished();
  const int64_t this_run = done - s.finished_at_start;
  const double per_minute = elapsed > 0 ? this_run * 60.0 / elapsed : 0;
  const double eta = per_minute > 0 ? (s.total - done) * 60.0 / per_minute : -1;
  std::string line = fmt::format(
      "{}/{} done  running {}  failed {}  pruned {}  diverged {}  {:.1f} trials/min  ETA {}", done,
      s.total, c[TrialStatus::kRunning], c[TrialStatus::kFailed], c[TrialStatus::kPruned],
      c[TrialStatus::kDiverged], per_minute, done >= s.total ? "0s" : duration(eta));
  const std::string best = best_summary(s.metric, s.boards);
  if (!best.empty()) line += "  best " + best;
  return line;
}

bool Progress::due() const {
  const auto since = std::chrono::steady_clock::now() - last_;
  return !drawn_ || since >= (tty_ ? std::chrono::milliseconds(100) : plain_interval_);
}

void Progress::update(const ProgressState& s, bool force) {
  if (!force && !due()) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::string text = printable(describe(s, elapsed));
  if (tty_) {
    const int width = 24;
    const int filled = s.total ? static_cast<int>(width * s.counts.finished() / s.total) : width;
    std::fprintf(out_, "\r\033[K[%s%s] %s", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), text.c_str());
    if (force) std::fputc('\n', out_);
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
  last_ = now;
  drawn_ = true;
}

}  // namespace layerlab::cli
