// /api/v1/trials/{id}: one trial with its attempts and epoch curve, and whether a model is
// kept for it; /api/v1/trials/{id}/model: that model (a safetensors file).
#include "server/context.h"

namespace layerlab::server {

void add_trial_routes(Router& r, Context& c) {
  r.get("/api/v1/trials/{}", [&c](const Request& req, Response& res) {
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
    out["model_kept"] = store.find_weights(id, /*with_bytes=*/false).has_value();
    send_json(res, out);
  });

  // The model kept by the study's keep_weights, as the store holds it (the file `best
  // --save` writes); 404 with the reason when none is kept. The bytes go out from a buffer
  // shared by every download of the model, and downloads are limited (ModelDownloads).
  r.get("/api/v1/trials/{}/model", [&c](const Request& req, Response& res) {
    const int64_t id = path_id(req, 1, "trial");
    store::Store& store = c.store();
    const store::TrialRecord t = store.get_trial(id);  // 404 for an unknown trial
    std::shared_ptr<const std::string> bytes;
    try {
      bytes = c.model_downloads->start(id, req.client, [&]() -> std::optional<std::string> {
        std::optional<store::KeptWeights> w = store.find_weights(id);
        if (!w) return std::nullopt;
        return std::move(w->bytes);
      });
    } catch (const TooManyDownloads& e) {
      send_error(res, 429, e.what());
      res.set_header("Retry-After", "5");
      return;
    }
    if (!bytes) {
      send_error(res, 404,
                 "no model kept for trial " + std::to_string(id) +
                     ": its study keeps none (keep_weights in the study file), or the trial is "
                     "not among the best of its dataset");
      return;
    }
    const std::string name = store.get_study(t.study_id).name;  // [a-z0-9._-]: header-safe
    send_body(res, std::move(bytes), "application/octet-stream", 200);
    res.set_header("Content-Disposition", "attachment; filename=\"" + name + "-trial-" +
                                              std::to_string(t.number) + ".safetensors\"");
  });
}

}  // namespace layerlab::server
