#include "cli/trial_table.h"

#include <fmt/format.h>

#include "common/text_safety.h"
#include "store/store.h"

namespace layerlab::cli {
namespace {

std::string cell(const nlohmann::json& v) {
  if (v.is_string()) return printable(v.get<std::string>());
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}

std::vector<std::string> varied_parameters(const study::StudySpec& spec) {
  std::vector<std::string> out;
  for (const auto& [name, domain] : spec.parameters)
    if (!domain.fixed()) out.push_back(name);
  return out;
}

}  // namespace

nlohmann::json trial_json(const store::TrialRecord& t) {
  nlohmann::json j = {{"id", t.id},
                      {"number", t.number},
                      {"dataset", t.dataset},
                      {"status", store::to_string(t.status)},
                      {"value", t.value ? nlohmann::json(*t.value) : nlohmann::json(nullptr)},
                      {"attempts", t.attempts},
                      {"params", t.params},
                      {"result", t.result}};
  if (!t.error.empty()) j["error"] = t.error;
  return j;
}

void print_trial_table(std::ostream& os, const std::vector<store::TrialRecord>& trials,
                       const study::StudySpec& spec) {
  const std::vector<std::string> params = varied_parameters(spec);
  std::string header =
      fmt::format("{:>6}  {:<14} {:<13} {:>12}", "#", "dataset", "status", printable(spec.metric));
  for (const auto& p : params) header += fmt::format("  {:>13}", printable(p));
  header += fmt::format("  {:>4}  {:>6}  {:>8}", "seed", "epochs", "seconds");
  os << header << "\n";
  for (const auto& t : trials) {
    std::string line =
        fmt::format("{:>6}  {:<14} {:<13} {:>12}", t.number, printable(t.dataset.substr(0, 14)),
                    store::to_string(t.status), t.value ? fmt::format("{:.4f}", *t.value) : "-");
    for (const auto& p : params)
      line += fmt::format("  {:>13}", t.params.contains(p) ? cell(t.params[p]) : "-");
    const auto& r = t.result;
    line += fmt::format("  {:>4}  {:>6}  {:>8}", t.params.value("seed", 0),
                        r.is_object() && r.contains("epochs_run") ? r["epochs_run"].dump() : "-",
                        r.is_object() && r.contains("seconds")
                            ? fmt::format("{:.2f}", r["seconds"].get<double>())
                            : "-");
    os << line << "\n";
  }
}

std::vector<store::TrialRecord> leaders(store::Store& store, int64_t study_id,
                                        const study::StudySpec& spec, int64_t limit) {
  std::vector<store::TrialRecord> out;
  for (const study::StoredLeaderboard& b :
       study::leaderboards(store, study_id, spec, static_cast<size_t>(limit)))
    out.insert(out.end(), b.trials.begin(), b.trials.end());
  return out;
}

std::vector<study::Leaderboard> boards_of(const std::vector<study::StoredLeaderboard>& stored) {
  std::vector<study::Leaderboard> out;
  for (const study::StoredLeaderboard& s : stored) out.push_back(s.board);
  return out;
}

std::string best_line(const study::Leaderboard& board) {
  const std::optional<double> best = board.best_value();
  if (!best) return printable(board.dataset) + ": no trial with a value yet";
  if (board.best_count > 1)
    return fmt::format("{}: {} trials share the best value {:.4f}", printable(board.dataset),
                       board.best_count, *best);
  return fmt::format("{}: best {:.4f} (trial #{})", printable(board.dataset), *best,
                     board.top.front().number);
}

void print_leaderboards(std::ostream& os, const std::vector<study::StoredLeaderboard>& boards,
                        const study::StudySpec& spec) {
  for (size_t i = 0; i < boards.size(); ++i) {
    os << (i ? "\n" : "") << best_line(boards[i].board) << "\n";
    if (!boards[i].trials.empty()) print_trial_table(os, boards[i].trials, spec);
  }
}

nlohmann::json leaderboards_json(const std::vector<study::StoredLeaderboard>& boards) {
  nlohmann::json out = nlohmann::json::array();
  for (const study::StoredLeaderboard& b : boards) {
    nlohmann::json trials = nlohmann::json::array();
    for (const store::TrialRecord& t : b.trials) trials.push_back(trial_json(t));
    const std::optional<double> best = b.board.best_value();
    out.push_back({{"dataset", b.board.dataset},
                   {"best_value", best ? nlohmann::json(*best) : nlohmann::json(nullptr)},
                   {"best_count", b.board.best_count},
                   {"trials", std::move(trials)}});
  }
  return out;
}

}  // namespace layerlab::cli
