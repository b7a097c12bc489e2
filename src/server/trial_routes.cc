// /api/v1/trials/{id}: one trial with its attempts and epoch curve.
#include "server/context.h"

namespace layerlab::server {

void add_trial_routes(Router& r, Context& c) {
  r.get(R"(/api/v1/trials/([^/]+))", [&c](const Request& req, Response& res) {
    const int64_t id = path_id(req, 1, "trial");
    store::Store& store = c.store();
    const store::TrialRecord t = store.get_trial(id);
    const int attempt = static_cast<int>(query_int(req, "attempt", t.attempts, 0, 1 << 20));
    nlohmann::json out = analysis::trial_summary(t);
    out["result"] = t.result;
    nlohmann::json attempts = nlohmann::json::array();
    for (const store::AttemptRecord& a : store.list_attempts(id))
      attempts.push_back({{"attempt", a.attempt},
                          {"worker", a.worker_id},
                          {"started_at", analysis::iso_time(a.started_at)},
                          {"finished_at", analysis::iso_time_or_null(a.finished_at)},
                          {"outcome", a.outcome}});
    out["attempts"] = std::move(attempts);
    nlohmann::json curve = nlohmann::json::array();
    for (const store::EpochRecord& e : store.list_epochs(id, attempt)) {
      nlohmann::json row = analysis::epoch_json(e);
      row.erase("trial_id");
      curve.push_back(std::move(row));
    }
    out["curve"] = std::move(curve);
    send_json(res, out);
  });
}

}  // namespace layerlab::server
