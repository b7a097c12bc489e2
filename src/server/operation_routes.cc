// Workers, queue, the event stream, /metrics and /healthz.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "common/text_safety.h"
#include "server/context.h"

namespace layerlab::server {
namespace {

using nlohmann::json;

struct QueueState {
  int64_t depth = 0, in_flight = 0, dead_lettered = 0;
  json studies = json::array();
};

// dead_letters: also count the trials failed because their worker kept dying (the store
// queue's dead letters).
QueueState queue_state(store::Store& store, bool dead_letters = true) {
  QueueState q;
  for (const store::StudyRecord& s : store.list_studies({.specs = false})) {
    if (s.status == store::StudyStatus::kRunning) {
      const store::StudyCounts c = store.counts(s.id);
      q.depth += c[store::TrialStatus::kQueued];
      q.in_flight += c[store::TrialStatus::kRunning];
      q.studies.push_back({{"id", s.id},
                           {"name", s.name},
                           {"queued", c[store::TrialStatus::kQueued]},
                           {"running", c[store::TrialStatus::kRunning]}});
    }
    if (dead_letters)
      q.dead_lettered +=
          store.count_trials(s.id, {.statuses = {store::TrialStatus::kFailed}, .lost_only = true});
  }
  return q;
}

// The window the workers page measures utilisation over, and the throughput chart's.
constexpr int64_t kDefaultMinutes = 60;
constexpr int64_t kMaxMinutes = 24 * 60;
constexpr int64_t kMaxBuckets = 360;
// /api/v1/workers answers a page of this many workers by default, at most kMaxWorkerPage.
constexpr int64_t kDefaultWorkerPage = 200;
constexpr int64_t kMaxWorkerPage = 1000;
// /metrics: per-worker series for this many workers (the most recently seen), the others
// summed under worker="(others)"; the duration histogram for this many studies (the newest).
constexpr size_t kMetricWorkers = 100;
constexpr size_t kMetricStudies = 50;
// The label of the series that sums the workers or studies beyond those limits.
constexpr const char* kOthers = "(others)";
// Training time buckets of the duration histogram, in seconds.
const std::vector<double> kDurationBounds = {0.1, 0.25, 0.5, 1,   2.5, 5,    10,
                                             30,  60,   120, 300, 600, 1800, 3600};
// /metrics' utilisation gauge looks back this far.
constexpr std::chrono::minutes kMetricUtilisationWindow{5};

json utilisation(const store::WorkerActivity& a) {
  if (a.alive.count() <= 0) return nullptr;
  return static_cast<double>(a.busy.count()) / static_cast<double>(a.alive.count());
}

double seconds_of(std::chrono::milliseconds d) {
  return std::chrono::duration<double>(d).count();
}

// A Prometheus label value: backslash, double quote and line feed escaped (the exposition
// format's only escapes), and bytes that are not UTF-8 replaced by U+FFFD, since the format
// is UTF-8 and a worker id or study name may come from anywhere.
std::string label(const std::string& v) {
  std::string out;
  std::string_view rest = v;
  while (!rest.empty()) {
    const size_t bad = find_invalid_utf8(rest);
    for (char ch : rest.substr(0, bad)) {
      if (ch == '\\' || ch == '"') out += '\\';
      if (ch == '\n') {
        out += "\\n";
        continue;
      }
      out += ch;
    }
    if (bad == std::string_view::npos) break;
    out += "\xEF\xBF\xBD";
    rest.remove_prefix(bad + 1);
  }
  return out;
}

void metric(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// Per worker: attempts by how they ended (counters: history only grows) and the busy
// share of the last minutes (a gauge), for the kMetricWorkers most recently seen workers;
// the rest are summed (their counters) under worker="(others)", so the series stay bounded
// however many worker processes a store has seen.
void worker_metrics(std::string& out, store::Store& store, store::Time now) {
  std::vector<store::WorkerRecord> workers = store.list_workers();
  std::stable_sort(workers.begin(), workers.end(),
                   [](const auto& a, const auto& b) { return a.heartbeat_at > b.heartbeat_at; });
  std::set<std::string> shown;
  for (size_t i = 0; i < workers.size() && i < kMetricWorkers; ++i)
    shown.insert(workers[i].info.id);
  const auto activity = store.worker_activity(now - kMetricUtilisationWindow, now);
  store::WorkerActivity others;
  bool any_other = false;
  metric(out, "layerlab_worker_trials_total", "counter",
         "Attempts by worker and outcome: done (a result), failed, lost (lease expired or "
         "redelivered: the worker died or hung), released (handed back).");
  auto counters = [&out](const std::string& worker, const store::WorkerActivity& a) {
    const std::string w = label(worker);
    const std::pair<const char*, int64_t> by_outcome[] = {
        {"done", a.done}, {"failed", a.failed}, {"lost", a.lost}, {"released", a.released}};
    for (const auto& [outcome, n] : by_outcome)
      out += fmt::format("layerlab_worker_trials_total{{worker=\"{}\",outcome=\"{}\"}} {}\n", w,
                         outcome, n);
  };
  for (const store::WorkerActivity& a : activity) {
    if (shown.count(a.worker_id)) {
      counters(a.worker_id, a);
      continue;
    }
    any_other = true;
    others.done += a.done;
    others.failed += a.failed;
    others.lost += a.lost;
    others.released += a.released;
  }
  if (any_other) counters(kOthers, others);
  metric(out, "layerlab_worker_utilisation", "gauge",
         "Share of the last 5 minutes a worker was running at least one trial, of the time it "
         "was alive in them.");
  for (const store::WorkerActivity& a : activity) {
    const json u = utilisation(a);
    if (shown.count(a.worker_id) && u.is_number())
      out += fmt::format("layerlab_worker_utilisation{{worker=\"{}\"}} {}\n", label(a.worker_id),
                         u.get<double>());
  }
}

// Training time of trials with a result, per study (the kMetricStudies newest studies).
void duration_metrics(std::string& out, store::Store& store) {
  std::map<int64_t, std::string> names;
  for (const store::StudyRecord& s : store.list_studies({.specs = false})) names[s.id] = s.name;
  std::vector<store::DurationHistogram> hs = store.duration_histograms(kDurationBounds);
  if (hs.size() > kMetricStudies) hs.erase(hs.begin(), hs.end() - kMetricStudies);
  metric(out, "layerlab_trial_duration_seconds", "histogram",
         "Training time of trials that ended with a result (completed, pruned, early_stopped, "
         "diverged), by study.");
  for (const store::DurationHistogram& h : hs) {
    auto name = names.find(h.study_id);
    const std::string study =
        label(name != names.end() ? name->second : std::to_string(h.study_id));
    int64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      const std::string le =
          i < kDurationBounds.size() ? fmt::format("{}", kDurationBounds[i]) : "+Inf";
      out += fmt::format("layerlab_trial_duration_seconds_bucket{{study=\"{}\",le=\"{}\"}} {}\n",
                         study, le, cumulative);
    }
    out += fmt::format("layerlab_trial_duration_seconds_sum{{study=\"{}\"}} {}\n", study,
                       h.sum_seconds);
    out +=
        fmt::format("layerlab_trial_duration_seconds_count{{study=\"{}\"}} {}\n", study, h.count);
  }
}

// Trials per study and status: the kMetricStudies newest studies, the older ones summed under
// study="(others)", so the series stay bounded however many studies a store holds.
void trial_metrics(std::string& out, store::Store& store) {
  // By id: oldest first.
  const std::vector<store::StudyRecord> studies = store.list_studies({.specs = false});
  const size_t first_shown = studies.size() > kMetricStudies ? studies.size() - kMetricStudies : 0;
  metric(out, "layerlab_trials", "gauge", "Trials per study and status.");
  auto series = [&out](const std::string& study, const store::StudyCounts& counts) {
    for (store::TrialStatus st : store::kAllTrialStatuses)
      out += fmt::format("layerlab_trials{{study=\"{}\",status=\"{}\"}} {}\n", label(study),
                         to_string(st), counts[st]);
  };
  store::StudyCounts others;
  for (size_t i = 0; i < studies.size(); ++i) {
    const store::StudyCounts counts = store.counts(studies[i].id);
    if (i >= first_shown) {
      series(studies[i].name, counts);
      continue;
    }
    for (size_t k = 0; k < others.by_status.size(); ++k) others.by_status[k] += counts.by_status[k];
  }
  if (first_shown > 0) series(kOthers, others);
}

std::string metrics_text(Context& c) {
  store::Store& store = c.store();
  const store::Time t = c.now();
  // Per-study series read every study's counts: kept as long as /workers' answers.
  std::string out = *c.monitoring.get(cache_key({"metrics-trials"}), t, [&] {
    std::string series;
    trial_metrics(series, store);
    return series;
  });
  int alive = 0, silent = 0, stopped = 0;
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
  // These read the attempts, like /workers: kept as long, so scraping /metrics in a loop
  // costs one read per TTL.
  out += *c.monitoring.get(cache_key({"metrics"}), t, [&] {
    std::string series;
    worker_metrics(series, store, t);
    duration_metrics(series, store);
    return series;
  });
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

// One page of the workers: alive ones first, then by last heartbeat, newest first (a store
// that many `run`s used holds every worker that ever registered).
struct WorkerPage {
  int64_t minutes = kDefaultMinutes;
  int64_t limit = kDefaultWorkerPage;
  int64_t offset = 0;
};

// /workers' body: each worker of the page with what it did (trials done, failed, lost and
// handed back, ever) and its busy share over the last `minutes`.
std::string workers_text(store::Store& store, store::Time t, const WorkerPage& page) {
  std::vector<store::WorkerRecord> workers = store.list_workers();
  const std::vector<store::WorkerActivity> activity =
      store.worker_activity(t - std::chrono::minutes(page.minutes), t);
  std::map<std::string, const store::WorkerActivity*> by_id;
  for (const store::WorkerActivity& a : activity) by_id[a.worker_id] = &a;
  auto alive = [t](const store::WorkerRecord& w) { return analysis::worker_alive(w, t); };
  const auto alive_count = std::count_if(workers.begin(), workers.end(), alive);
  std::stable_sort(workers.begin(), workers.end(),
                   [&](const store::WorkerRecord& a, const store::WorkerRecord& b) {
                     if (alive(a) != alive(b)) return alive(a);
                     return a.heartbeat_at > b.heartbeat_at;
                   });
  const auto total = static_cast<int64_t>(workers.size());
  const int64_t from = std::min(page.offset, total);
  const int64_t to = std::min(total, from + page.limit);
  json list = json::array();
  for (int64_t i = from; i < to; ++i) {
    const store::WorkerRecord& w = workers[static_cast<size_t>(i)];
    json j = analysis::worker_json(w, t);
    auto it = by_id.find(w.info.id);
    const store::WorkerActivity a = it != by_id.end() ? *it->second : store::WorkerActivity{};
    j["done"] = a.done;
    j["failed"] = a.failed;
    j["lost"] = a.lost;
    j["released"] = a.released;
    j["busy_seconds"] = seconds_of(a.busy);
    j["alive_seconds"] = seconds_of(a.alive);
    j["utilisation"] = utilisation(a);
    list.push_back(std::move(j));
  }
  return json{{"workers", std::move(list)},
              {"total", total},
              {"alive", alive_count},
              {"offset", from},
              {"window_seconds", page.minutes * 60}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

store::Time Context::now() const {
  return options.clock ? options.clock->now()
                       : std::chrono::time_point_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now());
}

void Context::sample_queue() {
  const QueueState q = queue_state(store(), false);
  queue_history.add({now(), q.depth, q.in_flight});
}

void add_operation_routes(Router& r, Context& c) {
  // Each worker with what it did: trials done, failed, lost and handed back (history), and
  // its busy share over the last `minutes`.
  r.get("/api/v1/workers", [&c](const Request& req, Response& res) {
    WorkerPage page;
    page.minutes = query_int(req, "minutes", kDefaultMinutes, 1, kMaxMinutes);
    page.limit = query_int(req, "limit", kDefaultWorkerPage, 1, kMaxWorkerPage);
    page.offset = query_int(req, "offset", 0, 0, std::numeric_limits<int32_t>::max());
    const store::Time t = c.now();
    send_json_text(
        res, c.monitoring.get(cache_key({"workers", page.minutes, page.limit, page.offset}), t,
                              [&] { return workers_text(c.store(), t, page); }));
  });

  // Finished trials per worker and time bucket, and the queue's depth in the same buckets.
  r.get("/api/v1/throughput", [&c](const Request& req, Response& res) {
    const int64_t minutes = query_int(req, "minutes", kDefaultMinutes, 1, kMaxMinutes);
    const int64_t bucket = query_int(req, "bucket", 60, 10, 3600);
    const int64_t max_workers = query_int(req, "workers", 10, 1, 50);
    const int64_t buckets = (minutes * 60 + bucket - 1) / bucket;
    if (buckets > kMaxBuckets)
      throw invalid_argument(fmt::format(
          "bucket: {} minutes in buckets of {} s make {} buckets, over the limit of {}; use a "
          "bucket of at least {} s or fewer minutes",
          minutes, bucket, buckets, kMaxBuckets, (minutes * 60 + kMaxBuckets - 1) / kMaxBuckets));
    // Buckets aligned to multiples of their length, the last one holding now, so that the
    // same minute is the same bucket from one poll to the next.
    const std::chrono::milliseconds width{bucket * 1000};
    const store::Time t = c.now();
    const int64_t now_ms = t.time_since_epoch().count();
    const store::Time end{std::chrono::milliseconds{(now_ms / width.count() + 1) * width.count()}};
    ThroughputWindow w;
    w.bucket = width;
    w.buckets = static_cast<int>(buckets);
    w.from = end - width * buckets;
    w.max_workers = static_cast<size_t>(max_workers);
    send_json_text(
        res, c.monitoring.get(cache_key({"throughput", minutes, bucket, max_workers}), t, [&] {
          return throughput_json(w, c.store().finished_per_bucket(w.from, w.bucket, w.buckets),
                                 c.queue_history.since(w.from), c.options.queue_sample)
              .dump(-1, ' ', false, json::error_handler_t::replace);
        }));
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
    // Throws kUnavailable (503) when the store cannot be read.
    c.store().list_studies({.status = store::StudyStatus::kRunning, .specs = false});
    // The store's kind only: /healthz is open to anyone who reaches the server, and a URL
    // carries host names, user names and, for PostgreSQL, perhaps a password.
    const std::string& url = c.options.store_url;
    send_json(res, {{"status", "ok"}, {"store", url.substr(0, url.find(':'))}});
  });
}

}  // namespace layerlab::server
