// Workers, queue, the event stream, /metrics and /healthz.
#include <fmt/format.h>

#include "server/context.h"

namespace layerlab::server {
namespace {

using nlohmann::json;

store::Time now() {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

struct QueueState {
  int64_t depth = 0, in_flight = 0, dead_lettered = 0;
  json studies = json::array();
};

QueueState queue_state(store::Store& store) {
  QueueState q;
  for (const store::StudyRecord& s : store.list_studies()) {
    if (s.status == store::StudyStatus::kRunning) {
      const store::StudyCounts c = store.counts(s.id);
      q.depth += c[store::TrialStatus::kQueued];
      q.in_flight += c[store::TrialStatus::kRunning];
      q.studies.push_back({{"id", s.id},
                           {"name", s.name},
                           {"queued", c[store::TrialStatus::kQueued]},
                           {"running", c[store::TrialStatus::kRunning]}});
    }
    // Trials failed because their worker kept dying: the store queue's dead letters.
    for (const store::TrialRecord& t :
         store.list_trials(s.id, {.statuses = {store::TrialStatus::kFailed}}))
      q.dead_lettered += t.lost > 0;
  }
  return q;
}

std::string label(const std::string& v) {  // Prometheus label value escaping
  std::string out;
  for (char ch : v) {
    if (ch == '\\' || ch == '"') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out;
}

void metric(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::string metrics_text(Context& c) {
  store::Store& store = c.store();
  std::string out;
  metric(out, "layerlab_trials", "gauge", "Trials per study and status.");
  for (const store::StudyRecord& s : store.list_studies()) {
    const store::StudyCounts counts = store.counts(s.id);
    for (store::TrialStatus st : store::kAllTrialStatuses)
      out += fmt::format("layerlab_trials{{study=\"{}\",status=\"{}\"}} {}\n", label(s.name),
                         to_string(st), counts[st]);
  }
  int alive = 0, silent = 0, stopped = 0;
  const store::Time t = now();
  for (const store::WorkerRecord& w : store.list_workers()) {
    if (w.status == store::WorkerStatus::kStopped)
      ++stopped;
    else if (analysis::worker_alive(w, t))
      ++alive;
    else
      ++silent;
  }
  metric(out, "layerlab_workers", "gauge", "Workers by state (silent: no heartbeat for 10 s).");
  out += fmt::format("layerlab_workers{{status=\"alive\"}} {}\n", alive);
  out += fmt::format("layerlab_workers{{status=\"silent\"}} {}\n", silent);
  out += fmt::format("layerlab_workers{{status=\"stopped\"}} {}\n", stopped);
  const QueueState q = queue_state(store);
  metric(out, "layerlab_queue_depth", "gauge", "Queued trials of running studies.");
  out += fmt::format("layerlab_queue_depth {}\n", q.depth);
  metric(out, "layerlab_queue_in_flight", "gauge", "Running trials of running studies.");
  out += fmt::format("layerlab_queue_in_flight {}\n", q.in_flight);
  metric(out, "layerlab_http_requests_total", "counter", "HTTP responses by status code.");
  {
    MutexLock lock(c.counters_mu);
    for (const auto& [code, n] : c.responses)
      out += fmt::format("layerlab_http_requests_total{{code=\"{}\"}} {}\n", code, n);
  }
  uint64_t transactions = 0;
  for (const auto& s : c.stores) transactions += s->stats().transactions;
  metric(out, "layerlab_store_transactions_total", "counter",
         "Store transactions committed by this server's request connections.");
  out += fmt::format("layerlab_store_transactions_total {}\n", transactions);
  metric(out, "layerlab_sse_clients", "gauge", "Connected event stream clients.");
  out += fmt::format("layerlab_sse_clients {}\n", c.hub.clients());
  metric(out, "layerlab_feed_errors_total", "counter", "Failed polls of the store's changes.");
  out += fmt::format("layerlab_feed_errors_total {}\n", c.feed->errors());
  return out;
}

}  // namespace

void add_operation_routes(Router& r, Context& c) {
  r.get("/api/v1/workers", [&c](const Request&, Response& res) {
    json list = json::array();
    const store::Time t = now();
    for (const store::WorkerRecord& w : c.store().list_workers())
      list.push_back(analysis::worker_json(w, t));
    send_json(res, {{"workers", std::move(list)}});
  });

  r.get("/api/v1/queue", [&c](const Request&, Response& res) {
    QueueState q = queue_state(c.store());
    send_json(res, {{"backend", "store"},
                    {"depth", q.depth},
                    {"in_flight", q.in_flight},
                    {"dead_lettered", q.dead_lettered},
                    {"studies", std::move(q.studies)}});
  });

  r.get("/api/v1/events", [&c](const Request& req, Response& res) {
    const int64_t study = query_int(req, "study", 0, 0, int64_t{1} << 62);
    const ServerOptions& o = c.options;
    auto sub = c.hub.subscribe(study, req.client, {o.max_streams, o.max_streams_per_client});
    if (!sub.stream) {
      const std::string why = sub.refusal == EventHub::Refusal::kPerClient
                                  ? "too many event streams from " + req.client + " (" +
                                        std::to_string(o.max_streams_per_client) +
                                        "); close some dashboards"
                                  : "too many event stream clients (" +
                                        std::to_string(o.max_streams) + "); try again later";
      send_error(res, sub.refusal == EventHub::Refusal::kPerClient ? 429 : 503, why);
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.content_type = "text/event-stream";
    res.stream = std::move(sub.stream);
  });

  r.get("/metrics", [&c](const Request&, Response& res) {
    send_body(res, std::make_shared<const std::string>(metrics_text(c)),
              "text/plain; version=0.0.4");
  });

  r.get("/healthz", [&c](const Request&, Response& res) {
    c.store().list_studies();  // throws kUnavailable (503) when the store cannot be read
    // The store's kind only: /healthz is open to anyone who reaches the server, and a URL
    // carries host names, user names and, for PostgreSQL, perhaps a password.
    const std::string& url = c.options.store_url;
    send_json(res, {{"status", "ok"}, {"store", url.substr(0, url.find(':'))}});
  });
}

}  // namespace layerlab::server
