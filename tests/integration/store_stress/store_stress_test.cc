// Many worker processes on one SQLite file (the "database is locked" problem of other
// tools): 8 forked processes claim, report an epoch and finish 2,000 trials while a
// dashboard-like process reads; then every trial must be completed exactly once, with no
// lock error anywhere. And workers killed with SIGKILL at chosen points lose only their
// running attempt.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "../../unit/store/store_test_util.h"
#include "queue/trial_queue.h"

namespace layerlab::store {
namespace {

using std::chrono::milliseconds;
using testing::TempDir;

constexpr int kWorkers = 8;
constexpr int kTrials = 2000;

// Runs body in a forked child and returns its pid; the child exits with body's status and
// never returns into the test.
template <typename F>
pid_t spawn(F body) {
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  int status = 1;
  try {
    status = body();
  } catch (...) {
    status = 2;
  }
  std::fflush(nullptr);
  ::_exit(status);
}

// Waits for a child up to `limit`; kills it past that. The exit status, or -1.
int wait_child(pid_t pid, std::chrono::steady_clock::time_point limit) {
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > limit) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int64_t count(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    n = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

// One worker process: claim, "train" a few microseconds, append an epoch, finish, until
// nothing is queued. Writes "ok claimed busy_waits retries" and the trial ids it finished
// (or "error MESSAGE") to report.
int stress_worker(const std::string& url, int64_t study, int index, const std::string& report) {
  std::ofstream out(report);
  try {
    auto store = open_store(url);
    std::string id = "stress-" + std::to_string(index) + "-" + std::to_string(::getpid());
    std::mt19937 rng(static_cast<unsigned>(index));
    std::uniform_int_distribution<int> work_us(0, 200);
    std::vector<int64_t> done;
    while (std::optional<Claim> c = store->claim_next(id, {study, std::chrono::minutes(1), 3})) {
      std::this_thread::sleep_for(std::chrono::microseconds(work_us(rng)));
      double v = static_cast<double>(c->number % 97) / 97.0;
      if (!store->append_epochs(c->trial_id, c->attempt, {{0, 1.0 - v, 1.0 - v, v, 1e-4, nullptr}}))
        throw std::runtime_error("append_epochs refused trial " + std::to_string(c->trial_id));
      if (!store->finish_trial(c->trial_id, c->attempt, TrialStatus::kCompleted,
                               {{"val_accuracy", v}}, v, ""))
        throw std::runtime_error("finish_trial refused trial " + std::to_string(c->trial_id));
      done.push_back(c->trial_id);
    }
    Store::Stats s = store->stats();
    out << "ok " << done.size() << " " << s.busy_waits << " " << s.retries << "\n";
    for (int64_t t : done) out << t << "\n";
    return 0;
  } catch (const std::exception& e) {
    out << "error " << e.what() << "\n";
    return 1;
  }
}

// The dashboard: reads counts and the leaderboard until every trial is finished.
int stress_reader(const std::string& url, int64_t study, const std::string& report) {
  std::ofstream out(report);
  try {
    auto store = open_store(url);
    int64_t reads = 0;
    auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < limit) {
      StudyCounts c = store->counts(study);
      store->list_trials(study, {.statuses = {TrialStatus::kCompleted},
                                 .sort = TrialSort::kValue,
                                 .descending = true,
                                 .limit = 20});
      reads += 2;
      if (c.finished() == kTrials) break;
      std::this_thread::sleep_for(milliseconds(2));
    }
    out << "ok " << reads << " " << store->stats().busy_waits << " " << store->stats().retries
        << "\n";
    return 0;
  } catch (const std::exception& e) {
    out << "error " << e.what() << "\n";
    return 1;
  }
}

TEST(StoreStress, EightProcessesOnOneFileCompleteEveryTrialExactlyOnce) {
  TempDir dir;
  std::string path = dir.path("stress.db");
  std::string url = "sqlite:" + path;
  int64_t study = 0;
  {
    auto store = open_store(url);
    study = store->create_study("stress", {{"metric", "val_accuracy"}});
    std::vector<NewTrial> trials;
    for (int i = 0; i < kTrials; ++i) trials.push_back({i, "xor", {{"seed", i}}});
    store->add_trials(study, trials);
  }  // no connection crosses fork()

  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  auto start_together = [&] {
    ::close(gate[1]);
    char c;
    while (::read(gate[0], &c, 1) > 0) {
    }
  };
  std::vector<pid_t> pids;
  for (int i = 0; i < kWorkers; ++i) {
    std::string report = dir.path("worker-" + std::to_string(i) + ".txt");
    pids.push_back(spawn([&, i, report] {
      start_together();
      return stress_worker(url, study, i, report);
    }));
  }
  std::string reader_report = dir.path("reader.txt");
  pids.push_back(spawn([&] {
    start_together();
    return stress_reader(url, study, reader_report);
  }));
  auto t0 = std::chrono::steady_clock::now();
  ::close(gate[1]);
  ::close(gate[0]);
  auto limit = t0 + std::chrono::seconds(180);
  std::vector<int> codes;
  for (pid_t pid : pids) codes.push_back(wait_child(pid, limit));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Reports: no errors, and which trials each worker finished.
  std::multiset<int64_t> finished;
  uint64_t busy_waits = 0, retries = 0;
  std::ostringstream per_worker;
  for (int i = 0; i < kWorkers; ++i) {
    EXPECT_EQ(codes[static_cast<size_t>(i)], 0) << "worker " << i;
    std::ifstream in(dir.path("worker-" + std::to_string(i) + ".txt"));
    std::string word;
    in >> word;
    if (word != "ok") {
      std::string rest;
      std::getline(in, rest);
      ADD_FAILURE() << "worker " << i << ": " << word << rest;
      continue;
    }
    size_t n = 0;
    uint64_t b = 0, r = 0;
    in >> n >> b >> r;
    busy_waits += b;
    retries += r;
    per_worker << " " << n;
    int64_t id;
    while (in >> id) finished.insert(id);
  }
  EXPECT_EQ(codes.back(), 0) << "reader";
  std::string reader_line;
  std::getline(std::ifstream(reader_report) >> std::ws, reader_line);
  EXPECT_EQ(reader_line.substr(0, 3), "ok ") << "reader: " << reader_line;

  std::printf(
      "[ stress   ] %d worker processes + 1 reader, %d trials (claim + epoch + finish), %.2f s, "
      "%.0f trials/s; finished per worker:%s; lock waits absorbed %llu, transaction retries "
      "%llu, errors 0 expected; reader (reads busy_waits retries): %s\n",
      kWorkers, kTrials, seconds, kTrials / seconds, per_worker.str().c_str(),
      static_cast<unsigned long long>(busy_waits), static_cast<unsigned long long>(retries),
      reader_line.c_str());

  // Every trial completed exactly once: none lost, none claimed twice.
  EXPECT_EQ(finished.size(), static_cast<size_t>(kTrials));
  EXPECT_EQ(std::set<int64_t>(finished.begin(), finished.end()).size(), finished.size());
  auto store = open_store(url);
  StudyCounts c = store->counts(study);
  EXPECT_EQ(c[TrialStatus::kCompleted], kTrials);
  EXPECT_EQ(c.total(), kTrials);
  for (const TrialRecord& t : store->list_trials(study, {})) {
    ASSERT_EQ(t.attempts, 1) << "trial " << t.number;
    ASSERT_EQ(t.status, TrialStatus::kCompleted) << "trial " << t.number;
    ASSERT_TRUE(finished.count(t.id)) << "trial " << t.number;
  }
  EXPECT_EQ(count(path, "SELECT COUNT(*) FROM attempts"), kTrials);
  EXPECT_EQ(count(path, "SELECT COUNT(*) FROM attempts WHERE outcome = 'completed'"), kTrials);
  EXPECT_EQ(count(path, "SELECT COUNT(*) FROM epochs"), kTrials);
}

// A worker process (store queue, 300 ms lease renewed by its LeaseKeeper) takes the one
// trial, writes "claimed" to `ready`, optionally commits the result, then waits to be
// killed.
int doomed_worker(const std::string& url, bool commit_first, int ready) {
  auto store = open_store(url);
  queue::StoreQueueOptions o;
  o.lease = milliseconds(300);
  auto q = queue::make_store_queue(*store, "doomed", o);
  std::optional<queue::Delivery> d = q->receive(std::chrono::seconds(10));
  if (!d) return 3;
  store->append_epochs(d->trial_id, d->attempt, {{0, 1.0, 1.0, 0.5, 0.1, nullptr}});
  if (commit_first && !store->finish_trial(d->trial_id, d->attempt, TrialStatus::kCompleted,
                                           {{"acc", 0.5}}, 0.5, ""))
    return 4;
  if (::write(ready, "x", 1) != 1) return 5;
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // "training", or before ack
}

void kill_at(bool commit_first) {
  TempDir dir;
  std::string url = "sqlite:" + dir.path("kill.db");
  int64_t trial = 0;
  {
    auto store = open_store(url);
    int64_t study = store->create_study("kill", nullptr);
    trial = store->add_trials(study, {{0, "iris", {}}})[0];
  }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = spawn([&] { return doomed_worker(url, commit_first, ready[1]); });
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the worker did not get the trial";
  ::close(ready[0]);
  // Past a few renewals, then SIGKILL: no hand-back, no clean-up.
  std::this_thread::sleep_for(milliseconds(400));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);

  auto store = open_store(url);
  ClaimOptions claim{0, milliseconds(300), 3};
  std::optional<Claim> retry;
  // A lost attempt comes back after its lease (300 ms); a committed trial must not come
  // back, even well past it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(commit_first ? 1 : 10);
  while (!retry && std::chrono::steady_clock::now() < deadline) {
    retry = store->claim_next("survivor", claim);
    if (!retry) std::this_thread::sleep_for(milliseconds(50));
  }
  TrialRecord t = store->get_trial(trial);
  if (commit_first) {
    EXPECT_FALSE(retry) << "a finished trial was redone";
    EXPECT_EQ(t.status, TrialStatus::kCompleted);
    EXPECT_EQ(t.attempts, 1);
    EXPECT_EQ(t.value, 0.5);
  } else {
    ASSERT_TRUE(retry) << "the killed worker's trial never came back";
    EXPECT_EQ(retry->trial_id, trial);
    EXPECT_EQ(retry->attempt, 2);
    EXPECT_TRUE(store->finish_trial(trial, 2, TrialStatus::kCompleted, nullptr, 0.7, ""));
    std::vector<AttemptRecord> attempts = store->list_attempts(trial);
    ASSERT_EQ(attempts.size(), 2u);
    EXPECT_EQ(attempts[0].worker_id, "doomed");
    EXPECT_EQ(attempts[0].outcome, "lost");
    EXPECT_EQ(store->list_epochs(trial, 1).size(), 1u);  // the lost attempt's curve is kept
    EXPECT_EQ(store->get_trial(trial).lost, 1);
  }
}

TEST(WorkerKilled, WhileTrainingTheTrialIsRetriedAsAttemptTwo) {
  kill_at(false);
}
TEST(WorkerKilled, AfterCommittingBeforeAckNothingIsRedone) {
  kill_at(true);
}

}  // namespace
}  // namespace layerlab::store
