// layerlab export STUDY --format csv|json [-o FILE]: every trial with its parameters and
// metrics; json also carries each trial's epoch curve.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/error.h"

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

void write_csv(std::ostream& os, const std::vector<store::TrialRecord>& trials) {
  std::set<std::string> params, metrics;
  for (const auto& t : trials) {
    for (const auto& [k, v] : t.params.items()) params.insert(k);
    if (t.result.is_object() && t.result.contains("metrics"))
      for (const auto& [k, v] : t.result["metrics"].items()) metrics.insert(k);
  }
  os << "number,dataset,status,value,attempts";
  for (const auto& p : params) os << "," << p;
  for (const auto& m : metrics) os << "," << m;
  os << ",epochs_run,seconds,error\n";
  for (const auto& t : trials) {
    os << t.number << "," << csv_field(t.dataset) << "," << store::to_string(t.status) << ","
       << (t.value ? fmt::format("{}", *t.value) : "") << "," << t.attempts;
    for (const auto& p : params) os << "," << csv_field(t.params.value(p, nlohmann::json()));
    const nlohmann::json& r = t.result.is_object() ? t.result : nlohmann::json::object();
    const nlohmann::json m = r.value("metrics", nlohmann::json::object());
    for (const auto& k : metrics) os << "," << csv_field(m.value(k, nlohmann::json()));
    os << "," << csv_field(r.value("epochs_run", nlohmann::json())) << ","
       << csv_field(r.value("seconds", nlohmann::json())) << "," << csv_field(t.error) << "\n";
  }
}

nlohmann::json json_export(store::Store& store, const store::StudyRecord& s,
                           const std::vector<store::TrialRecord>& trials) {
  nlohmann::json out = {
      {"study", s.name}, {"id", s.id}, {"spec", s.spec}, {"trials", nlohmann::json::array()}};
  for (const auto& t : trials) {
    nlohmann::json j = trial_json(t);
    j["attempt_log"] = nlohmann::json::array();
    for (const auto& a : store.list_attempts(t.id))
      j["attempt_log"].push_back(
          {{"attempt", a.attempt}, {"worker", a.worker_id}, {"outcome", a.outcome}});
    j["curve"] = nlohmann::json::array();
    for (const auto& e : store.list_epochs(t.id, t.attempts))
      j["curve"].push_back({{"epoch", e.row.epoch},
                            {"train_loss", e.row.train_loss},
                            {"val_loss", e.row.val_loss},
                            {"val_metric", e.row.val_metric},
                            {"seconds", e.row.seconds}});
    out["trials"].push_back(std::move(j));
  }
  return out;
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
    const auto trials = store->list_trials(s.id, {});
    std::ofstream file;
    if (!output->empty()) {
      file.open(*output);
      if (!file) throw invalid_argument("-o: cannot write '" + *output + "'");
    }
    std::ostream& os = output->empty() ? std::cout : file;
    if (*format == "csv")
      write_csv(os, trials);
    else
      os << json_export(*store, s, trials).dump(2) << "\n";
  });
}

}  // namespace layerlab::cli
