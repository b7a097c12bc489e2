#include "analysis/study_cache.h"

#include <algorithm>

#include "common/error.h"
#include "store/trial_pages.h"
#include "study/leaderboard.h"

namespace layerlab::analysis {

bool analysed(const CachedTrial& t) {
  return study::ranks(t.status) && std::isfinite(t.value);
}

namespace {

using nlohmann::json;

int32_t intern(std::vector<std::string>& table, const std::string& s) {
  auto it = std::find(table.begin(), table.end(), s);
  if (it != table.end()) return static_cast<int32_t>(it - table.begin());
  table.push_back(s);
  return static_cast<int32_t>(table.size() - 1);
}

// Metric values are few per trial and the names repeat: intern them on the study.
double number_of(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
  return std::nan("");
}

CachedTrial reduce(StudyView& v, const store::TrialRecord& t) {
  CachedTrial c;
  c.id = t.id;
  c.number = t.number;
  c.seq = t.seq;
  c.dataset = intern(v.datasets, t.dataset);
  c.status = t.status;
  if (t.value) c.value = *t.value;
  c.params.resize(v.param_names.size());
  for (size_t i = 0; i < v.param_names.size(); ++i) {
    auto p = t.params.find(v.param_names[i]);
    if (p == t.params.end()) continue;
    if (p->is_string())
      c.params[i].string = intern(v.strings, p->get<std::string>());
    else
      c.params[i].number = number_of(*p);
  }
  if (t.result.is_object()) {
    c.seconds = number_of(t.result.value("seconds", json()));
    c.epochs_run = number_of(t.result.value("epochs_run", json()));
    c.parameter_count = number_of(t.result.value("parameter_count", json()));
    auto m = t.result.find("metrics");
    if (m != t.result.end() && m->is_object()) {
      for (auto it = m->begin(); it != m->end(); ++it) {
        const size_t k = static_cast<size_t>(intern(v.metric_names, it.key()));
        if (c.metrics.size() <= k) c.metrics.resize(k + 1, std::nan(""));
        c.metrics[k] = number_of(it.value());
      }
    }
  }
  return c;
}

void changed(StudyView& v) {
  ++v.generation;
}

// Any change of the study's trials invalidates its cached responses (counts, pages); only
// finished ones with results are kept.
void upsert(StudyView& v, const store::TrialRecord& t) {
  changed(v);
  auto it = v.index.find(t.id);
  if (it != v.index.end() && v.trials[it->second].seq >= t.seq) return;  // not newer
  // Finished trials stay finished, so a trial without results is one not finished yet.
  if (!has_results(t.status)) return;
  if (it != v.index.end()) {
    v.trials[it->second] = reduce(v, t);
  } else {
    v.index[t.id] = v.trials.size();
    v.trials.push_back(reduce(v, t));
  }
}

}  // namespace

bool has_results(store::TrialStatus s) {
  return s == store::TrialStatus::kCompleted || s == store::TrialStatus::kEarlyStopped ||
         s == store::TrialStatus::kPruned;
}

int StudyView::param_index(const std::string& name) const {
  auto it = std::find(param_names.begin(), param_names.end(), name);
  return it == param_names.end() ? -1 : static_cast<int>(it - param_names.begin());
}

int StudyView::metric_index(const std::string& name) const {
  auto it = std::find(metric_names.begin(), metric_names.end(), name);
  return it == metric_names.end() ? -1 : static_cast<int>(it - metric_names.begin());
}

json StudyView::scalar_json(const Scalar& s) const {
  if (s.string >= 0) return strings[static_cast<size_t>(s.string)];
  // Parameters like hidden_layers are integers: print them as such.
  if (std::abs(s.number) < 9e15 && s.number == std::trunc(s.number))
    return static_cast<int64_t>(s.number);
  return number_or_null(s.number);
}

StudyCache::StudyCache(store::Store& store, Turns::Limits making)
    : store_(store), making_(making) {}

std::shared_ptr<StudyCache::Entry> StudyCache::entry(int64_t study_id) {
  MutexLock lock(mu_);
  auto& e = entries_[study_id];
  if (!e) e = std::make_shared<Entry>();
  return e;
}

void StudyCache::load(int64_t study_id, Entry& e) {
  const store::StudyRecord record = store_.get_study(study_id);  // kNotFound
  auto v = std::make_unique<StudyView>();
  v->id = study_id;
  v->spec = study::StudySpec::from_json(record.spec);
  v->total = v->spec.total_trials();
  for (const auto& [name, domain] : v->spec.parameters) v->param_names.push_back(name);
  v->param_names.push_back("seed");
  v->datasets = v->spec.datasets;
  store::TrialFilter f;
  f.statuses = {store::TrialStatus::kCompleted, store::TrialStatus::kEarlyStopped,
                store::TrialStatus::kPruned};
  // A page at a time: the records of a whole large study would take hundreds of MB for a
  // moment, the view a few.
  store::for_each_trial(store_, study_id, f, [&](const store::TrialRecord& t) {
    upsert(*v, t);
    return true;
  });
  e.view = std::move(v);
}

void StudyCache::with_study(int64_t study_id, const std::function<void(StudyView&)>& f) {
  std::shared_ptr<Entry> e = entry(study_id);
  MutexLock lock(e->mu);
  if (!e->view) {
    try {
      load(study_id, *e);
    } catch (const Error&) {
      MutexLock entries_lock(mu_);
      entries_.erase(study_id);  // an unknown study must not stay as an empty entry
      throw;
    }
  }
  f(*e->view);
}

uint64_t StudyCache::generation(Entry& e) {
  MutexLock lock(e.mu);
  return e.view ? e.view->generation : 0;
}

std::string StudyCache::make(int64_t study_id, store::Store& store, const Maker& maker) {
  return maker(store, [&](const std::function<void(StudyView&)>& f) { with_study(study_id, f); });
}

std::shared_ptr<const std::string> StudyCache::response(int64_t study_id, const std::string& key,
                                                        store::Store& store, Maker maker) {
  std::shared_ptr<Entry> e = entry(study_id);
  {
    MutexLock lock(e->responses_mu);
    auto it = e->responses.find(key);
    if (it != e->responses.end()) {
      it->second.used = std::chrono::steady_clock::now();
      return it->second.body;
    }
  }
  // Waiting for another request's making of the same key takes a turn too.
  if (!making_.take())
    throw unavailable("the server is computing " + std::to_string(making_.limits().running) +
                      " study views already and more are waiting; try again shortly");
  const Turns::Turn turn(making_);
  {
    MutexLock lock(e->responses_mu);
    // Concurrent first requests for one key wait for the one making it.
    e->made.wait(lock.native(), [&]() REQUIRES(e->responses_mu) { return !e->making.count(key); });
    auto it = e->responses.find(key);
    if (it != e->responses.end()) {
      it->second.used = std::chrono::steady_clock::now();
      return it->second.body;
    }
    e->making.insert(key);
  }
  // First request for this key: make it here (loading the study if needed).
  auto done = [&]() REQUIRES(e->responses_mu) {
    e->making.erase(key);
    e->made.notify_all();
  };
  std::shared_ptr<const std::string> body;
  try {
    const uint64_t at = generation(*e);
    body = std::make_shared<const std::string>(make(study_id, store, maker));
    MutexLock lock(e->responses_mu);
    keep(*e, key, Response{body, at, std::chrono::steady_clock::now(), std::move(maker)});
    done();
  } catch (...) {  // not handled here: release the waiters (they try again), then rethrow
    MutexLock lock(e->responses_mu);
    done();
    throw;
  }
  return body;
}

void StudyCache::keep(Entry& e, const std::string& key, Response r) {
  if (r.body->size() > kMaxResponseBytes) return;
  size_t bytes = r.body->size();
  for (const auto& [k, kept] : e.responses) bytes += kept.body->size();
  // Full: the least recently used go, so a client cycling through distinct keys (pages,
  // limits) cannot flush the responses everyone else is reading, nor grow the heap.
  while (!e.responses.empty() &&
         (e.responses.size() >= kMaxResponses || bytes > kMaxResponseBytes)) {
    const auto oldest = std::min_element(
        e.responses.begin(), e.responses.end(),
        [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
    bytes -= oldest->second.body->size();
    e.responses.erase(oldest);
  }
  e.responses[key] = std::move(r);
}

void StudyCache::refresh(store::Store& store) {
  std::vector<std::pair<int64_t, std::shared_ptr<Entry>>> entries;
  {
    MutexLock lock(mu_);
    entries.assign(entries_.begin(), entries_.end());
  }
  const auto now = std::chrono::steady_clock::now();
  for (auto& [study_id, e] : entries) {
    const uint64_t current = generation(*e);
    std::vector<std::pair<std::string, Maker>> stale;
    {
      MutexLock lock(e->responses_mu);
      std::erase_if(e->responses,
                    [&](const auto& kv) { return now - kv.second.used > kKeepUnused; });
      for (const auto& [key, r] : e->responses)
        if (r.generation != current) stale.emplace_back(key, r.make);
    }
    for (const auto& [key, maker] : stale) {
      auto body = std::make_shared<const std::string>(make(study_id, store, maker));
      MutexLock lock(e->responses_mu);
      auto it = e->responses.find(key);
      if (it == e->responses.end()) continue;
      it->second.body = std::move(body);
      it->second.generation = current;
    }
  }
}

void StudyCache::apply(const std::vector<store::TrialRecord>& changed) {
  std::map<int64_t, std::vector<const store::TrialRecord*>> by_study;
  for (const store::TrialRecord& t : changed) by_study[t.study_id].push_back(&t);
  for (const auto& [study_id, trials] : by_study) {
    std::shared_ptr<Entry> e;
    {
      MutexLock lock(mu_);
      auto it = entries_.find(study_id);
      if (it == entries_.end()) continue;  // not loaded: it will load the current state
      e = it->second;
    }
    MutexLock lock(e->mu);
    if (!e->view) continue;
    for (const store::TrialRecord* t : trials) upsert(*e->view, *t);
  }
}

void StudyCache::touch(int64_t study_id) {
  std::shared_ptr<Entry> e;
  {
    MutexLock lock(mu_);
    auto it = entries_.find(study_id);
    if (it == entries_.end()) return;
    e = it->second;
  }
  MutexLock lock(e->mu);
  if (e->view) changed(*e->view);
}

}  // namespace layerlab::analysis
