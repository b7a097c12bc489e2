// StudyCache: the finished trials of each study the dashboard looks at, held in memory in
// a compact form, so that plot aggregates (summary, columns) and the leaderboards cost a
// pass over arrays instead of a store query that parses 50,000 JSON documents.
//
// A study is loaded from the store on first use; after that the change feed applies every
// changed trial (apply), in change-number order, so the cache lags the store by one poll.
// Any change of a study's trials or status bumps its generation and drops its cached
// responses (summaries, trial pages, counts): what the dashboard asks for again and again
// is computed at most once per poll while the study changes, and once while it does not.
//
// Making a response (a cache miss) is the expensive part, and it runs on the requesting
// thread: at most a few requests make responses at once and a few wait for a turn
// (Turns), so misses hold a bounded number of a server's threads
// and cached responses (and everything else) are answered by the others meanwhile.
//
// Thread-safety: all calls may be made from any thread; a study's view is read and changed
// under its own lock.
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/views.h"
#include "common/mutex.h"
#include "common/turns.h"
#include "store/store.h"
#include "study/spec.h"

namespace layerlab::analysis {

// A parameter value: a number (bools as 0/1), or a string interned in StudyView::strings.
struct Scalar {
  double number = std::nan("");
  int32_t string = -1;  // index into strings; -1 for numbers
  bool missing() const { return string < 0 && std::isnan(number); }
};

// One finished trial (completed, early_stopped or pruned), reduced to what plots read.
struct CachedTrial {
  int64_t id = 0;
  int64_t number = 0;
  int64_t seq = 0;
  int32_t dataset = 0;  // index into datasets
  store::TrialStatus status = store::TrialStatus::kCompleted;
  double value = std::nan("");
  double seconds = std::nan("");
  double parameter_count = std::nan("");  // weights and biases; NaN when the result has none
  double epochs_run = std::nan("");
  std::vector<Scalar> params;   // by StudyView::param_names
  std::vector<double> metrics;  // by StudyView::metric_names (NaN when missing)
};

// The one rule every aggregate counts by (the dashboard's views, the report, the
// leaderboards): a trial is analysed when it ranks (study/leaderboard.h: completed or
// early_stopped) with a finite value. A pruned trial's value and time were cut short, so it
// is left out and counted apart.
bool analysed(const CachedTrial& t);

struct StudyView {
  int64_t id = 0;
  study::StudySpec spec;
  int64_t total = 0;                     // trials planned
  std::vector<std::string> param_names;  // the spec's parameters, then "seed"
  std::vector<std::string> metric_names;
  std::vector<std::string> datasets;
  std::vector<std::string> strings;
  std::vector<CachedTrial> trials;
  std::unordered_map<int64_t, size_t> index;  // trial id -> position in trials
  uint64_t generation = 0;  // bumped by every change of the study's trials or status

  int param_index(const std::string& name) const;   // -1 if unknown
  int metric_index(const std::string& name) const;  // -1 if unknown
  // The string form of a scalar (numbers as JSON numbers print).
  nlohmann::json scalar_json(const Scalar& s) const;
};

class StudyCache {
 public:
  // Per study, distinct responses and their bytes are bounded: past either, the least
  // recently used go (a response larger than the byte bound alone is answered, not kept).
  static constexpr size_t kMaxResponses = 256;
  static constexpr size_t kMaxResponseBytes = size_t{64} << 20;
  // A cached response nobody asked for in this long is dropped instead of refreshed.
  static constexpr std::chrono::seconds kKeepUnused{30};

  // What a response is made with: a store connection (the request's, or the change feed's
  // own when refreshing, so that requests never queue behind a refresh's queries) and
  // `with_view(f)`, which runs f on the study's view under its lock (store queries go
  // outside it).
  using ViewAccess = std::function<void(const std::function<void(StudyView&)>&)>;
  using Maker = std::function<std::string(store::Store& store, const ViewAccess& with_view)>;

  // running: requests making responses at once; waiting: requests waiting for a turn
  // (past them, or past longest_wait, kUnavailable).
  explicit StudyCache(store::Store& store, Turns::Limits making = {2, 2});

  // Runs f(view) under the study's lock, loading the study first if needed. kNotFound for
  // an unknown study. Loading 50,000 trials takes a second or two: Server warms the
  // studies up when it starts.
  void with_study(int64_t study_id, const std::function<void(StudyView&)>& f);

  // The response cached under `key`, made by `make` on the first request. When the study
  // changes, refresh() (the change feed's thread) makes it again, so requests never wait
  // for a recomputation: a response lags the store by a poll and a refresh at most.
  // `make` must own what it captures: it is kept for refreshing. kUnavailable when the
  // response is not cached and there is no turn to make it.
  std::shared_ptr<const std::string> response(int64_t study_id, const std::string& key,
                                              store::Store& store, Maker make);

  // Applies changed trials (from Store::trials_changed_since) to the loaded studies.
  void apply(const std::vector<store::TrialRecord>& changed);
  // The study's status changed outside its trials: its responses are out of date.
  void touch(int64_t study_id);
  // Makes again every out-of-date response asked for in the last kKeepUnused, drops the
  // others. Errors of a maker propagate (the response stays as it was).
  void refresh(store::Store& store);

 private:
  struct Response {
    std::shared_ptr<const std::string> body;
    uint64_t generation = 0;  // of the view it was made from
    std::chrono::steady_clock::time_point used;
    Maker make;
  };
  struct Entry {
    Mutex mu;
    std::unique_ptr<StudyView> view GUARDED_BY(mu);  // null until loaded
    Mutex responses_mu;                              // never held while making
    std::map<std::string, Response> responses GUARDED_BY(responses_mu);
    // First requests in progress: others wait for them.
    std::set<std::string> making GUARDED_BY(responses_mu);
    std::condition_variable made;
  };
  uint64_t generation(Entry& e) EXCLUDES(e.mu);
  std::string make(int64_t study_id, store::Store& store, const Maker& make);
  std::shared_ptr<Entry> entry(int64_t study_id) EXCLUDES(mu_);
  void load(int64_t study_id, Entry& e) REQUIRES(e.mu);
  // Keeps `body` under `key` within kMaxResponses and kMaxResponseBytes.
  static void keep(Entry& e, const std::string& key, Response r) REQUIRES(e.responses_mu);

  store::Store& store_;
  Turns making_;
  Mutex mu_;
  std::map<int64_t, std::shared_ptr<Entry>> entries_ GUARDED_BY(mu_);
};

// True for the statuses whose trials the cache keeps (they have metrics).
bool has_results(store::TrialStatus s);

}  // namespace layerlab::analysis
