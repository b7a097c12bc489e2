#include "analysis/views.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cmath>

namespace layerlab::analysis {

using nlohmann::json;

std::string iso_time(store::Time t) {
  const auto ms = t.time_since_epoch().count();
  const auto seconds = std::chrono::sys_seconds(std::chrono::seconds(ms / 1000 - (ms % 1000 < 0)));
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", seconds, ((ms % 1000) + 1000) % 1000);
}

json iso_time_or_null(const std::optional<store::Time>& t) {
  return t ? json(iso_time(*t)) : json(nullptr);
}

json number_or_null(double v) {
  return std::isnan(v) ? json(nullptr) : json(v);
}

json trial_summary(const store::TrialRecord& t) {
  const json* metrics = nullptr;
  json seconds = nullptr, epochs_run = nullptr;
  if (t.result.is_object()) {
    if (auto m = t.result.find("metrics"); m != t.result.end() && m->is_object()) metrics = &*m;
    if (auto s = t.result.find("seconds"); s != t.result.end()) seconds = *s;
    if (auto e = t.result.find("epochs_run"); e != t.result.end()) epochs_run = *e;
  }
  return {{"id", t.id},
          {"study_id", t.study_id},
          {"number", t.number},
          {"dataset", t.dataset},
          {"status", store::to_string(t.status)},
          {"params", t.params},
          {"value", t.value ? number_or_null(*t.value) : json(nullptr)},
          {"metrics", metrics ? *metrics : json::object()},
          {"seconds", seconds},
          {"epochs_run", epochs_run},
          {"attempts", t.attempts},
          {"worker", t.worker_id},
          {"started_at", iso_time_or_null(t.started_at)},
          {"finished_at", iso_time_or_null(t.finished_at)},
          {"error", t.error}};
}

json counts_json(const store::StudyCounts& c) {
  json out = json::object();
  for (store::TrialStatus s : store::kAllTrialStatuses) out[store::to_string(s)] = c[s];
  return out;
}

json best_per_dataset(const std::vector<study::Leaderboard>& boards) {
  json best = json::array();
  for (const study::Leaderboard& b : boards) {
    const bool ranked = !b.top.empty();
    best.push_back({{"dataset", b.dataset},
                    {"trial_id", ranked ? json(b.top.front().trial_id) : json(nullptr)},
                    {"number", ranked ? json(b.top.front().number) : json(nullptr)},
                    {"value", ranked ? number_or_null(b.top.front().value) : json(nullptr)},
                    {"count", b.best_count}});
  }
  return best;
}

json study_summary(const store::StudyRecord& s, const store::StudyCounts& counts, int64_t total,
                   const std::vector<study::Leaderboard>& boards) {
  const json& metric = s.spec.contains("metric") ? s.spec["metric"] : json::object();
  return {{"id", s.id},
          {"name", s.name},
          {"status", store::to_string(s.status)},
          {"created_at", iso_time(s.created_at)},
          {"metric", metric.value("name", "")},
          {"goal", metric.value("goal", "")},
          {"method", s.spec.value("method", "")},
          {"total", total},
          {"finished", counts.finished()},
          {"counts", counts_json(counts)},
          {"best", best_per_dataset(boards)}};
}

json best_with_trials(const json& best, const std::function<store::TrialRecord(int64_t)>& trial) {
  json out = best;
  for (json& b : out)
    b["trial"] = b["trial_id"].is_null() ? json(nullptr)
                                         : trial_summary(trial(b["trial_id"].get<int64_t>()));
  return out;
}

bool worker_alive(const store::WorkerRecord& w, store::Time now) {
  return w.status != store::WorkerStatus::kStopped && now - w.heartbeat_at < kWorkerSilentAfter;
}

json worker_json(const store::WorkerRecord& w, store::Time now) {
  return {{"id", w.info.id},
          {"host", w.info.host},
          {"pid", w.info.pid},
          {"device", w.info.device},
          {"pack", w.info.pack},
          {"memory_bytes", w.memory_bytes},
          {"status", store::to_string(w.status)},
          {"current_trial", w.current_trial ? json(*w.current_trial) : json(nullptr)},
          {"started_at", iso_time(w.started_at)},
          {"heartbeat_at", iso_time(w.heartbeat_at)},
          {"heartbeat_age", std::chrono::duration<double>(now - w.heartbeat_at).count()},
          {"alive", worker_alive(w, now)}};
}

json epoch_json(const store::EpochRecord& e) {
  return {{"trial_id", e.trial_id},
          {"attempt", e.attempt},
          {"epoch", e.row.epoch},
          {"train_loss", number_or_null(e.row.train_loss)},
          {"val_loss", number_or_null(e.row.val_loss)},
          {"val_metric", number_or_null(e.row.val_metric)},
          {"seconds", number_or_null(e.row.seconds)}};
}

}  // namespace layerlab::analysis
