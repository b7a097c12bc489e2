// layerlab export STUDY --format csv|json [-o FILE]: every trial with its parameters and
// metrics; json also carries each trial's epoch curve.
#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <set>
#include <span>
#include <string_view>

#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/error.h"
#include "store/trial_pages.h"

namespace layerlab::cli {
namespace {

std::string csv_field(const nlohmann::json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// The study's trials by number, a page at a time (store/trial_pages.h), so that an export
// holds one page in memory however large the study. Trials numbered above `last` (added
// after the export began) are left out.
void for_each_trial_up_to(store::Store& store, int64_t study_id, int64_t last,
                          const std::function<void(const store::TrialRecord&)>& each) {
  store::for_each_trial(store, study_id, {}, [&](const store::TrialRecord& t) {
    if (t.number > last) return false;
    each(t);
    return true;
  });
}

// Two passes: the columns (every parameter and metric any trial has), then the rows.
void write_csv(std::ostream& os, store::Store& store, int64_t study_id) {
  std::set<std::string> params, metrics;
  int64_t last = -1;
  for_each_trial_up_to(store, study_id, std::numeric_limits<int64_t>::max(),
                       [&](const store::TrialRecord& t) {
                         for (const auto& [k, v] : t.params.items()) params.insert(k);
                         if (t.result.is_object() && t.result.contains("metrics"))
                           for (const auto& [k, v] : t.result["metrics"].items()) metrics.insert(k);
                         last = t.number;
                       });
  os << "number,dataset,status,value,attempts";
  for (const auto& p : params) os << "," << p;
  for (const auto& m : metrics) os << "," << m;
  os << ",epochs_run,seconds,error\n";
  for_each_trial_up_to(store, study_id, last, [&](const store::TrialRecord& t) {
    os << t.number << "," << csv_field(t.dataset) << "," << store::to_string(t.status) << ","
       << (t.value ? fmt::format("{}", *t.value) : "") << "," << t.attempts;
    for (const auto& p : params) os << "," << csv_field(t.params.value(p, nlohmann::json()));
    const nlohmann::json& r = t.result.is_object() ? t.result : nlohmann::json::object();
    const nlohmann::json m = r.value("metrics", nlohmann::json::object());
    for (const auto& k : metrics) os << "," << csv_field(m.value(k, nlohmann::json()));
    os << "," << csv_field(r.value("epochs_run", nlohmann::json())) << ","
       << csv_field(r.value("seconds", nlohmann::json())) << "," << csv_field(t.error) << "\n";
  });
}

// A trial with its attempts and its latest attempt's curve, as read for its page.
nlohmann::json trial_export(const store::TrialRecord& t,
                            std::span<const store::AttemptRecord> attempts,
                            std::span<const store::EpochRecord> epochs) {
  nlohmann::json j = trial_json(t);
  j["attempt_log"] = nlohmann::json::array();
  for (const auto& a : attempts)
    j["attempt_log"].push_back(
        {{"attempt", a.attempt}, {"worker", a.worker_id}, {"outcome", a.outcome}});
  j["curve"] = nlohmann::json::array();
  for (const auto& e : epochs)
    j["curve"].push_back({{"epoch", e.row.epoch},
                          {"train_loss", e.row.train_loss},
                          {"val_loss", e.row.val_loss},
                          {"val_metric", e.row.val_metric},
                          {"seconds", e.row.seconds}});
  return j;
}

// The records of `all` (ordered like the page's trials) that belong to trial `id`, from `at`
// on; advances `at` past them.
template <typename Record>
std::span<const Record> records_of(const std::vector<Record>& all, size_t& at, int64_t id) {
  const size_t begin = at;
  while (at < all.size() && all[at].trial_id == id) ++at;
  return {all.data() + begin, at - begin};
}

// The document nlohmann::json would print with an indent of 2, {"id", "spec", "study",
// "trials": [...]}, written one trial at a time.
void write_json(std::ostream& os, store::Store& store, const store::StudyRecord& s) {
  const std::string head =
      nlohmann::json{{"study", s.name}, {"id", s.id}, {"spec", s.spec}, {"trials", nullptr}}.dump(
          2);
  const std::string tail = "null\n}";  // "trials" comes last
  os << std::string_view(head).substr(0, head.size() - tail.size()) << "[";
  bool first = true;
  store::for_each_trial_page(store, s.id, {}, [&](const std::vector<store::TrialRecord>& page) {
    const int64_t from = page.front().number, to = page.back().number;
    const auto attempts = store.list_attempts_of(s.id, from, to);
    const auto epochs = store.list_latest_epochs_of(s.id, from, to);
    size_t next_attempt = 0, next_epoch = 0;
    for (const store::TrialRecord& t : page) {
      std::string text = trial_export(t, records_of(attempts, next_attempt, t.id),
                                      records_of(epochs, next_epoch, t.id))
                             .dump(2);
      for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += 5)
        text.replace(at, 1, "\n    ");  // nested two levels deep
      os << (first ? "\n    " : ",\n    ") << text;
      first = false;
    }
    return true;
  });
  os << (first ? "]" : "\n  ]") << "\n}\n";
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto url = std::make_shared<std::string>();
  auto ref = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  auto output = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("export", "Export a study's trials as CSV or JSON");
  cmd->add_option("study", *ref, "study name or id")->required();
  add_store_option(cmd, *url);
  cmd->add_option("--format", *format, "csv or json")
      ->check(CLI::IsMember({"csv", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", *output, "file to write (default: stdout)");
  cmd->callback([url, ref, format, output] {
    auto store = open_existing_store(*url);
    const auto s = resolve_study(*store, *ref);
    std::ofstream file;
    if (!output->empty()) {
      file.open(*output);
      if (!file) throw invalid_argument("-o: cannot write '" + *output + "'");
    }
    std::ostream& os = output->empty() ? std::cout : file;
    if (*format == "csv")
      write_csv(os, *store, s.id);
    else
      write_json(os, *store, s);
  });
}

}  // namespace layerlab::cli
