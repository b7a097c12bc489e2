// /api/v1/studies...: list, create, get, cancel, trials (paged), summary, columns,
// leaderboard and pareto (per dataset).
#include <algorithm>
#include <sstream>

#include "analysis/aggregates.h"
#include "analysis/pareto.h"
#include "data/confine.h"
#include "data/dataset.h"
#include "server/context.h"
#include "study/spec.h"
#include "study/trial.h"

namespace layerlab::server {
namespace {

using nlohmann::json;

constexpr const char* kStudy = "/api/v1/studies/{}";

using ViewAccess = analysis::StudyCache::ViewAccess;

// STUDY_SUMMARY, read afresh (a maker runs again on every refresh).
json summary_of(store::Store& store, int64_t id, const ViewAccess& with_view) {
  const store::StudyRecord s = store.get_study(id);
  const store::StudyCounts counts = store.counts(id);
  std::vector<study::Leaderboard> boards;
  int64_t total = 0;
  with_view([&](analysis::StudyView& v) {
    boards = analysis::leaderboards(v, 1);
    total = v.total;
  });
  return analysis::study_summary(s, counts, total, boards);
}

std::string summary_text(Context& c, int64_t id) {
  return *c.cache->response(id, "summary", c.making_store(),
                            [id](store::Store& store, const ViewAccess& with_view) {
                              return summary_of(store, id, with_view).dump();
                            });
}

// What a dataset of a study created over HTTP may hold when the server loads it to check
// it: a generated xor?n=500000&dims=64 (32 million values) is refused, naming the limit.
data::DataLimits http_data_limits() {
  data::DataLimits d;
  d.max_file_bytes = uint64_t{64} << 20;
  d.max_decompressed_bytes = uint64_t{64} << 20;
  d.max_values = int64_t{16} << 20;  // 64 MB as floats
  return d;
}

// A study file in a request body (YAML or JSON), held to the limits, with its file
// datasets confined to the operator's data directory and every dataset loaded and checked
// before anything is stored (DESIGN.md, "Hostile input"). The loading takes a turn of
// Context::dataset_checks, so it holds few of the server's threads.
study::StudySpec parse_body(const std::string& body, Context& c) {
  const ServerOptions& o = c.options;
  study::SpecLimits limits;
  limits.max_trials = o.max_trials_per_study;
  study::StudySpec spec = study::parse_study_text(body, "<request body>", limits);
  for (std::string& d : spec.datasets) d = data::confine_to_directory(d, o.data_dir);
  if (!c.dataset_checks.take())
    throw unavailable("the server is checking the datasets of other studies; try again shortly");
  const Turns::Turn turn(c.dataset_checks);
  study::check_datasets(spec, limits, http_data_limits());
  return spec;
}

std::vector<store::TrialStatus> parse_statuses(const std::string& text) {
  std::vector<store::TrialStatus> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(store::parse_trial_status(item));
  return out;
}

store::TrialFilter trial_filter(const Request& req) {
  store::TrialFilter f;
  try {
    f.statuses = parse_statuses(query_text(req, "status", ""));
  } catch (const Error& e) {
    throw invalid_argument(std::string("status: ") + e.what());
  }
  f.dataset = query_text(req, "dataset", "");
  const std::string sort = query_text(req, "sort", "number");
  static const std::map<std::string, store::TrialSort> kSorts = {
      {"number", store::TrialSort::kNumber},     {"value", store::TrialSort::kValue},
      {"started", store::TrialSort::kStarted},   {"finished", store::TrialSort::kFinished},
      {"duration", store::TrialSort::kDuration},
  };
  if (auto it = kSorts.find(sort); it != kSorts.end()) {
    f.sort = it->second;
  } else if (sort.rfind("params.", 0) == 0) {
    f.sort = store::TrialSort::kParam;
    f.param = sort.substr(7);
    if (!store::is_param_key(f.param))
      throw invalid_argument("sort: cannot sort by parameter '" + f.param +
                             "': expected a name of letters, digits, '_' (dots for nesting), "
                             "at most " +
                             std::to_string(store::kMaxParamKey) + " bytes");
  } else {
    throw invalid_argument("sort: unknown key '" + sort +
                           "'; use number, value, started, finished, duration or params.NAME");
  }
  const std::string order = query_text(req, "order", "asc");
  if (order != "asc" && order != "desc")
    throw invalid_argument("order: expected asc or desc, got '" + order + "'");
  f.descending = order == "desc";
  f.limit = query_int(req, "limit", 50, 1, 1000);
  f.offset = query_int(req, "offset", 0, 0, int64_t{1} << 40);
  return f;
}

// /columns?fields=: distinct names, at most kMaxFields, in a canonical order (the columns
// are an object keyed by name), so one cached response serves every order of the same set.
constexpr size_t kMaxFields = 64;

std::vector<std::string> split_fields(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw invalid_argument("fields: '" + item + "' is listed twice");
    if (out.size() == kMaxFields)
      throw invalid_argument("fields: more than " + std::to_string(kMaxFields) + " fields");
    out.push_back(item);
  }
  if (out.empty()) throw invalid_argument("fields: required, e.g. fields=number,value");
  std::sort(out.begin(), out.end());
  return out;
}

// sort=params.NAME must name a trial parameter (or a key inside one, "opt.lr"): the study
// file's parameters and those every trial stores (study::TrialSpec), checked before the
// store sorts anything.
void check_sort_param(const store::StudyRecord& s, const std::string& key) {
  static const std::vector<std::string> kStored = [] {
    std::vector<std::string> names;
    const json stored = study::TrialSpec{}.to_json();
    for (const auto& [name, value] : stored.items())
      if (name != "dataset") names.push_back(name);
    return names;
  }();
  std::vector<std::string> names;
  if (s.spec.contains("parameters") && s.spec["parameters"].is_object())
    for (const auto& [name, domain] : s.spec["parameters"].items()) names.push_back(name);
  auto names_it = [&key](const std::string& name) {
    return key == name ||
           (key.starts_with(name) && key.size() > name.size() && key[name.size()] == '.');
  };
  if (std::any_of(names.begin(), names.end(), names_it) ||
      std::any_of(kStored.begin(), kStored.end(), names_it))
    return;
  std::string known;
  for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
  throw invalid_argument("sort: study '" + s.name + "' has no parameter '" + key +
                         "'; the study file's parameters: " + known +
                         " (or one every trial has: learning_rate, seed, ...)");
}

// /leaderboard: each dataset's best trials (at most kMaxLeaderboard each; the tables are
// for people, the trials endpoint pages through everything else).
constexpr int64_t kMaxLeaderboard = 100;

json leaderboard_of(store::Store& store, int64_t limit, const ViewAccess& with_view) {
  std::vector<study::Leaderboard> boards;
  json out;
  with_view([&](analysis::StudyView& v) {
    boards = analysis::leaderboards(v, static_cast<size_t>(limit));
    out = {{"metric", v.spec.metric},
           {"goal", v.spec.maximize ? "maximize" : "minimize"},
           {"limit", limit}};
  });
  json datasets = json::array();
  for (const study::Leaderboard& b : boards) {
    json trials = json::array();
    for (const study::LeaderboardEntry& e : b.top)
      trials.push_back(analysis::trial_summary(store.get_trial(e.trial_id)));
    const std::optional<double> best = b.best_value();
    datasets.push_back({{"dataset", b.dataset},
                        {"best_value", best ? analysis::number_or_null(*best) : json(nullptr)},
                        {"best_count", b.best_count},
                        {"trials", std::move(trials)}});
  }
  out["datasets"] = std::move(datasets);
  return out;
}

// /pareto: points per dataset for the plot (the fronts' trials are always all there).
constexpr int64_t kDefaultParetoPoints = 5000;
constexpr int64_t kMaxParetoPoints = 50000;

}  // namespace

void add_study_routes(Router& r, Context& c) {
  r.get("/api/v1/studies", [&c](const Request&, Response& res) {
    std::string body = "{\"studies\":[";
    bool first = true;
    for (const store::StudyRecord& s : c.store().list_studies({.specs = false})) {
      if (!first) body += ',';
      body += summary_text(c, s.id);
      first = false;
    }
    send_json_text(res, std::make_shared<const std::string>(body + "]}"));
  });

  r.post("/api/v1/studies", [&c](const Request& req, Response& res) {
    const study::StudySpec spec = parse_body(req.body, c);
    const int64_t id = c.store().create_study(spec.name, spec.to_json());
    send_json(res, {{"id", id}, {"name", spec.name}, {"total", spec.total_trials()}}, 201);
  });

  r.get(kStudy, [&c](const Request& req, Response& res) {
    const int64_t id = c.study(req.matches[1]).id;
    send_json_text(res, c.cache->response(id, "study", c.making_store(),
                                          [id](store::Store& store, const ViewAccess& with_view) {
                                            json out = summary_of(store, id, with_view);
                                            out["spec"] = store.get_study(id).spec;
                                            with_view([&](analysis::StudyView& v) {
                                              out["datasets"] = v.spec.datasets;
                                              json names = json::array();
                                              for (const auto& [name, domain] : v.spec.parameters)
                                                names.push_back(name);
                                              out["parameters"] = std::move(names);
                                            });
                                            out["best"] = analysis::best_with_trials(
                                                out["best"],
                                                [&](int64_t t) { return store.get_trial(t); });
                                            return out.dump();
                                          }));
  });

  r.post(std::string(kStudy) + "/cancel", [&c](const Request& req, Response& res) {
    const store::StudyRecord s = c.study(req.matches[1]);
    if (s.status != store::StudyStatus::kRunning)
      throw failed_precondition("study '" + s.name + "' is already " + to_string(s.status));
    send_json(res, {{"id", s.id}, {"cancelled", c.store().cancel_study(s.id)}});
  });

  r.get(std::string(kStudy) + "/trials", [&c](const Request& req, Response& res) {
    const store::TrialFilter f = trial_filter(req);  // bad parameters before the lookup
    const store::StudyRecord s = c.study(req.matches[1]);
    if (f.sort == store::TrialSort::kParam) check_sort_param(s, f.param);
    const int64_t id = s.id;
    json statuses = json::array();
    for (store::TrialStatus st : f.statuses) statuses.push_back(to_string(st));
    const std::string key = cache_key({"trials", statuses, f.dataset, static_cast<int>(f.sort),
                                       f.param, f.descending, f.limit, f.offset});
    send_json_text(res,
                   c.cache->response(id, key, c.making_store(),
                                     [id, f](store::Store& store, const ViewAccess&) {
                                       json trials = json::array();
                                       for (const store::TrialRecord& t : store.list_trials(id, f))
                                         trials.push_back(analysis::trial_summary(t));
                                       return json{{"total", store.count_trials(id, f)},
                                                   {"offset", f.offset},
                                                   {"limit", f.limit},
                                                   {"trials", std::move(trials)}}
                                           .dump();
                                     }));
  });

  r.get(std::string(kStudy) + "/summary", [&c](const Request& req, Response& res) {
    analysis::SummaryQuery q{query_text(req, "x", ""), query_text(req, "y", "value"),
                             query_text(req, "group", "")};
    const int64_t id = c.study(req.matches[1]).id;
    const auto body = c.cache->response(
        id, cache_key({"summary", q.x, q.y, q.group}), c.making_store(),
        [q](store::Store&, const ViewAccess& with_view) {
          std::string out;
          with_view([&](analysis::StudyView& v) { out = analysis::summarize(v, q).dump(); });
          return out;
        });
    send_json_text(res, body);
  });

  r.get(std::string(kStudy) + "/leaderboard", [&c](const Request& req, Response& res) {
    const int64_t limit = query_int(req, "limit", 10, 1, kMaxLeaderboard);
    const int64_t id = c.study(req.matches[1]).id;
    send_json_text(res,
                   c.cache->response(id, cache_key({"leaderboard", limit}), c.making_store(),
                                     [limit](store::Store& store, const ViewAccess& with_view) {
                                       return leaderboard_of(store, limit, with_view).dump();
                                     }));
  });

  r.get(std::string(kStudy) + "/pareto", [&c](const Request& req, Response& res) {
    const int64_t limit = query_int(req, "limit", kDefaultParetoPoints, 1, kMaxParetoPoints);
    const int64_t id = c.study(req.matches[1]).id;
    send_json_text(res, c.cache->response(
                            id, cache_key({"pareto", limit}), c.making_store(),
                            [limit](store::Store&, const ViewAccess& with_view) {
                              std::string out;
                              with_view([&](analysis::StudyView& v) {
                                out = analysis::pareto_view(v, static_cast<size_t>(limit)).dump();
                              });
                              return out;
                            }));
  });

  r.get(std::string(kStudy) + "/columns", [&c](const Request& req, Response& res) {
    const std::string text = query_text(req, "fields", "number,value");
    const std::vector<std::string> fields = split_fields(text);
    const int64_t limit = query_int(req, "limit", 5000, 1, 50000);
    const int64_t id = c.study(req.matches[1]).id;
    const auto body =
        c.cache->response(id, cache_key({"columns", fields, limit}), c.making_store(),
                          [fields, limit](store::Store&, const ViewAccess& with_view) {
                            std::string out;
                            with_view([&](analysis::StudyView& v) {
                              out = analysis::columns(v, fields, static_cast<size_t>(limit)).dump();
                            });
                            return out;
                          });
    send_json_text(res, body);
  });
}

}  // namespace layerlab::server
