// PostgreSQL only: a server that restarts or stays away, credentials, missing databases, and
// change numbers while writers on several connections race. (Everything about the store's
// contract runs on both backends: see backends.cc.)
#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "store/pg_db.h"
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using ::layerlab::testing::free_port;
using std::chrono::milliseconds;
using testing::PostgresService;

std::string hidden(const std::string& url) {
  return parse_store_url(url).text;
}

TEST(Postgres, TheNextCallAfterAServerRestartSucceeds) {
  PostgresService server;  // private: restarting the shared one would disturb other tests
  ManualClock clock;
  StoreOptions o;
  o.clock = &clock;
  auto store = open_store(server.fresh_database_url(), o);
  const int64_t study = store->create_study("s", nullptr);
  store->add_trials(study, {{0, "iris", {}}, {1, "iris", {}}});
  const Claim c = *store->claim_next("w", {});

  server.restart();  // cuts the store's connection between two calls
  EXPECT_TRUE(store->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, {{"ok", true}},
                                  0.5, "", {{1, 0.1, 0.2, 0.5, 0.01, nullptr}}));
  EXPECT_GE(store->stats().retries, 1u);
  EXPECT_EQ(store->get_trial(c.trial_id).status, TrialStatus::kCompleted);
  EXPECT_EQ(store->list_epochs(c.trial_id).size(), 1u);

  server.restart();  // a read reconnects too
  EXPECT_EQ(store->counts(study)[TrialStatus::kCompleted], 1);

  // A call made while the server is down waits for it to come back.
  server.stop();
  std::thread starter([&] {
    std::this_thread::sleep_for(milliseconds(700));
    server.start();
  });
  std::optional<Claim> next = store->claim_next("w", {});
  starter.join();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 1);
  EXPECT_EQ(next->attempt, 1);
  EXPECT_EQ(store->list_attempts(next->trial_id).size(), 1u);  // claimed once
  EXPECT_EQ(store->trials_changed_since(0, 100).size(), 2u);
}

// Through PgBouncer in transaction mode (one server connection for the database), a second
// store without ?pool_mode=transaction meets the first one's prepared statements on the
// shared connection: an error that says what to add, and nothing written. With it, both
// stores work on the one connection.
TEST(Postgres, BehindATransactionPoolerWithoutPoolModeTheErrorSaysWhatToAdd) {
  auto& pg = PostgresService::instance();
  const std::string pooled = testing::PgBouncerService::instance().url_of(pg.fresh_database());
  const std::string unmarked = pooled.substr(0, pooled.find('?'));
  auto first = open_store(unmarked);
  const int64_t study = first->create_study("s", nullptr);
  EXPECT_STORE_ERROR(open_store(unmarked), ErrorCode::kInternal,
                     "; is this a transaction pooler (such as PgBouncer with pool_mode = "
                     "transaction)? then add ?pool_mode=transaction to the store URL");
  first.reset();

  auto a = open_store(pooled);
  auto b = open_store(pooled);
  a->add_trials(study, {{0, "iris", {}}, {1, "iris", {}}});
  const std::optional<Claim> ca = a->claim_next("a", {});
  const std::optional<Claim> cb = b->claim_next("b", {});
  ASSERT_TRUE(ca && cb);
  EXPECT_NE(ca->trial_id, cb->trial_id);
  EXPECT_TRUE(
      b->finish_trial(cb->trial_id, cb->attempt, TrialStatus::kCompleted, nullptr, 0.5, "", {}));
  EXPECT_EQ(a->counts(study)[TrialStatus::kCompleted], 1);
  EXPECT_EQ(a->counts(study)[TrialStatus::kRunning], 1);
  pg.drop_database(PostgresService::database_of(pooled));
}

TEST(Postgres, AServerThatStaysAwayIsUnavailableNamingTheCall) {
  PostgresService server;
  StoreOptions o;
  o.busy_timeout = milliseconds(200);
  o.max_retries = 2;
  const std::string url = server.fresh_database_url();
  auto store = open_store(url, o);
  store->create_study("s", nullptr);
  server.stop();
  EXPECT_STORE_ERROR(store->list_studies(), ErrorCode::kUnavailable,
                     hidden(url) + ": list_studies: ");
  EXPECT_STORE_ERROR(store->create_study("t", nullptr), ErrorCode::kUnavailable,
                     "(gave up after 3 tries over ");
  server.start();
  EXPECT_EQ(store->list_studies().size(), 1u);
  EXPECT_GT(store->create_study("t", nullptr), 0);
}

// A process told to stop (StoreOptions::stop) does not wait for a server that is away: a
// call retrying when the flag is set ends at its next look, later calls are tried once, and
// once the server is back the store works again.
TEST(Postgres, OnceStoppingAServerThatIsAwayIsNotWaitedFor) {
  PostgresService server;
  std::atomic<bool> stop{false};
  StoreOptions o;
  o.stop = &stop;
  const std::string url = server.fresh_database_url();
  auto store = open_store(url, o);
  store->create_study("s", nullptr);
  // The error a call ends with: "" if none.
  auto error_of = [](const std::function<void()>& call) -> std::string {
    try {
      call();
    } catch (const Error& e) {
      return std::string(error_code_name(e.code())) + " " + e.what();
    }
    return "";
  };
  server.stop();
  std::string first;
  std::thread caller([&] { first = error_of([&] { store->list_studies(); }); });
  while (store->stats().retries == 0) std::this_thread::sleep_for(milliseconds(5));
  stop = true;  // it is retrying: without the flag it would give up after 7 tries
  caller.join();
  EXPECT_NE(first.find(hidden(url) + ": list_studies: "), std::string::npos) << first;
  EXPECT_TRUE(first.ends_with(" (not retried: stopping)")) << first;

  const uint64_t retries = store->stats().retries;
  const std::string second = error_of([&] { store->create_study("t", nullptr); });
  EXPECT_TRUE(second.starts_with(std::string(error_code_name(ErrorCode::kUnavailable)) + " "))
      << second;
  EXPECT_TRUE(second.ends_with(" (not retried: stopping)")) << second;
  EXPECT_EQ(store->stats().retries, retries) << "tried once";

  server.start();
  EXPECT_EQ(store->list_studies().size(), 1u);
}

// Connections sharing an Outage (a server's): once one call has failed to reach the
// database, calls on the others are tried once; the call that found it away still waits
// for it and rides out the restart, and once a call reaches it the others wait again.
TEST(Postgres, WhileOneCallWaitsForAServerThatIsAwayTheOthersAreTriedOnce) {
  PostgresService server;
  StoreOptions o;
  o.outage = std::make_shared<Outage>();
  const std::string url = server.fresh_database_url();
  auto waiting = open_store(url, o);
  auto other = open_store(url, o);
  waiting->create_study("s", nullptr);
  EXPECT_FALSE(o.outage->known);

  server.stop();
  std::string waited;
  std::thread caller([&] {
    try {
      waited = std::to_string(waiting->list_studies().size());
    } catch (const Error& e) {
      waited = e.what();
    }
  });
  while (!o.outage->known) std::this_thread::sleep_for(milliseconds(5));
  const uint64_t retries = other->stats().retries;
  EXPECT_STORE_ERROR(other->list_studies(), ErrorCode::kUnavailable,
                     "(not retried: found away by an earlier call)");
  EXPECT_EQ(other->stats().retries, retries) << "tried once";

  server.start();
  caller.join();
  EXPECT_EQ(waited, "1") << "the first call rode out the restart";
  EXPECT_FALSE(o.outage->known);
  EXPECT_EQ(other->list_studies().size(), 1u);
}

// A connection that does not wait (a server's request connection): a call that finds the
// server away connects again once and fails at once; after a restart, its lost connection
// is made again within the same call.
TEST(Postgres, AConnectionThatDoesNotWaitFailsAtOnceAndReconnectsAfterARestart) {
  PostgresService server;
  StoreOptions o;
  o.wait_when_away = false;
  auto store = open_store(server.fresh_database_url(), o);
  store->create_study("s", nullptr);

  server.stop();
  const uint64_t retries = store->stats().retries;
  EXPECT_STORE_ERROR(store->list_studies(), ErrorCode::kUnavailable,
                     "(not retried: this connection does not wait for a database that is away)");
  EXPECT_EQ(store->stats().retries, retries + 1) << "one connection again, no more";

  server.start();
  EXPECT_EQ(store->list_studies().size(), 1u);
  server.stop();
  server.start();
  EXPECT_EQ(store->list_studies().size(), 1u) << "the connection the restart ended is made again";
}

TEST(Postgres, AnUnreachableServerIsUnavailableAndTheMessageHidesThePassword) {
  const std::string url =
      "postgresql://layerlab:s3cret@127.0.0.1:" + std::to_string(free_port()) + "/layerlab";
  StoreOptions o;
  o.busy_timeout = milliseconds(300);
  try {
    open_store(url, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable) << msg;
    EXPECT_NE(msg.find(hidden(url) + ": open: "), std::string::npos) << msg;
    EXPECT_NE(msg.find("Connection refused"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("s3cret"), std::string::npos) << msg;
  }
}

TEST(Postgres, AWrongPasswordOrAMissingDatabaseIsAClearError) {
  PostgresService& pg = PostgresService::instance();
  const std::string wrong =
      "postgresql://layerlab:wrong@127.0.0.1:" + std::to_string(pg.port()) + "/layerlab";
  try {
    open_store(wrong);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << msg;
    EXPECT_NE(msg.find(hidden(wrong) + ": open: "), std::string::npos) << msg;
    EXPECT_NE(msg.find("password authentication failed"), std::string::npos) << msg;
    EXPECT_EQ(msg.find(":wrong@"), std::string::npos) << msg;
  }
  EXPECT_STORE_ERROR(open_store(pg.url_of("no_such_db")), ErrorCode::kNotFound,
                     "database \"no_such_db\" does not exist");

  // A database without a store, with create_if_missing off (SQLite: a missing file).
  const std::string db = pg.fresh_database();
  StoreOptions o;
  o.create_if_missing = false;
  EXPECT_STORE_ERROR(open_store(pg.url_of(db), o), ErrorCode::kNotFound,
                     hidden(pg.url_of(db)) + ": the database holds no layerlab store");
  EXPECT_EQ(pg.column(db, "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'"),
            std::vector<int64_t>{0});  // nothing was created
  open_store(pg.url_of(db));
  EXPECT_NO_THROW(open_store(pg.url_of(db), o));
  pg.drop_database(db);
}

// A store lives in the connection's current schema (the first of its search_path): one
// opened with search_path "other, public" is a new store in "other", though "public" holds
// one whose tables the unqualified names would otherwise reach.
TEST(Postgres, StoresInTwoSchemasOfOneDatabaseAreApart) {
  PostgresService& pg = PostgresService::instance();
  const std::string db = pg.fresh_database();
  open_store(pg.url_of(db))->create_study("in-public", nlohmann::json::object());
  pg.exec(db, "CREATE SCHEMA other");
  const std::string other = pg.url_of(db) + "?options=-csearch_path%3Dother,public";
  {
    auto store = open_store(other);
    EXPECT_TRUE(store->list_studies().empty());
    store->create_study("in-other", nlohmann::json::object());
  }
  const auto names = [](Store& s) {
    std::vector<std::string> out;
    for (const StudyRecord& r : s.list_studies()) out.push_back(r.name);
    return out;
  };
  EXPECT_EQ(names(*open_store(other)), std::vector<std::string>{"in-other"});
  EXPECT_EQ(names(*open_store(pg.url_of(db))), std::vector<std::string>{"in-public"});
  EXPECT_EQ(pg.column(db, "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'schema_version'"),
            std::vector<int64_t>{2});
  pg.drop_database(db);
}

// Writers take no store-wide lock, so they commit in any order; a follower polling
// trials_changed_since while they race still gets every trial's latest change: numbers only
// grow, and no change is numbered below a number already handed out.
TEST(Postgres, AFollowerMissesNoChangeWhileWritersRace) {
  PostgresService& pg = PostgresService::instance();
  const std::string db = pg.fresh_database();
  const std::string url = pg.url_of(db);
  ManualClock clock;
  StoreOptions o;
  o.clock = &clock;
  const int64_t study = open_store(url, o)->create_study("s", nullptr);
  constexpr int kTrials = 160;
  std::atomic<bool> done{false};
  std::map<int64_t, int64_t> seen;  // trial -> the latest change number the follower got
  int64_t polls_with_changes = 0;
  std::atomic<bool> followed{false};  // the follower has had changes while writers wait
  auto follow = [&](Store& follower, int64_t& cursor) {
    std::vector<TrialRecord> changed = follower.trials_changed_since(cursor, 1000);
    for (const TrialRecord& t : changed) {
      EXPECT_GT(t.seq, cursor) << "a number at or below one already handed out";
      cursor = std::max(cursor, t.seq);
      seen[t.id] = std::max(seen[t.id], t.seq);
    }
    polls_with_changes += changed.empty() ? 0 : 1;
    if (!changed.empty()) followed = true;
  };
  std::thread follower_thread([&] {
    auto follower = open_store(url, o);
    int64_t cursor = 0;
    while (!done) follow(*follower, cursor);
    follow(*follower, cursor);  // what the writers committed last
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&, w] {
      try {
        auto store = open_store(url, o);
        // Each writer adds a third of the trials in small batches, then works the queue.
        for (int n = w; n < kTrials; n += 3 * 4) {
          std::vector<NewTrial> add;
          for (int k = n; k < std::min(kTrials, n + 3 * 4); k += 3) add.push_back({k, "iris", {}});
          store->add_trials(study, add);
        }
        // Claims and finishes start once the follower has seen some changes, so it follows
        // while they are written however fast this machine writes.
        for (int i = 0; i < 60'000 && !followed; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::mt19937 rng(static_cast<unsigned>(w));
        std::string worker = "w";
        worker += std::to_string(w);
        while (true) {
          std::vector<Claim> claims =
              store->claim_batch(worker, {study}, 1 + static_cast<int>(rng() % 3));
          if (claims.empty()) break;
          std::vector<TrialFinish> finishes;
          for (const Claim& c : claims)
            finishes.push_back(
                {c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 1.0, "", {}});
          store->finish_trials(finishes);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : writers) t.join();
  done = true;
  follower_thread.join();
  EXPECT_GT(polls_with_changes, 1);  // it followed while they wrote, not only at the end
  auto store = open_store(url, o);
  EXPECT_EQ(store->counts(study)[TrialStatus::kCompleted], kTrials);
  // Every trial's last change (its finish) reached the follower.
  std::vector<int64_t> last = pg.column(db,
                                        "SELECT MAX(seq) FROM trial_changes GROUP BY trial_id "
                                        "ORDER BY trial_id");
  std::vector<int64_t> got;
  for (const auto& [trial, seq] : seen) got.push_back(seq);
  EXPECT_EQ(got, last);
  EXPECT_EQ(pg.column(db, "SELECT COUNT(*) FROM trial_changes WHERE seq IS NULL"),
            std::vector<int64_t>{0});
  pg.drop_database(db);
}

// A serialization failure (40001) or a deadlock (40P01) rolls the transaction back; the
// store runs it again after a jittered pause, and gives up with kAborted (retry the call) after its
// retries. A trigger raises the error while a (non-transactional) sequence allows it.
class InjectedFailure : public ::testing::TestWithParam<const char*> {};

TEST_P(InjectedFailure, IsRetriedThenGivenUpOnWithTheCall) {
  PostgresService& pg = PostgresService::instance();
  const std::string db = pg.fresh_database();
  const std::string url = pg.url_of(db);
  ManualClock clock;
  StoreOptions o;
  o.clock = &clock;
  o.max_retries = 3;
  auto store = open_store(url, o);
  const int64_t study = store->create_study("s", nullptr);
  store->add_trials(study, {{0, "iris", {}}, {1, "iris", {}}});
  const std::optional<Claim> first = store->claim_next("w", {study});
  const std::optional<Claim> second = store->claim_next("w", {study});
  ASSERT_TRUE(first && second);
  // Fails the next `failures` updates of a trial's status to a finished one.
  auto inject = [&](int failures) {
    pg.exec(db,
            "DROP TRIGGER IF EXISTS inject ON trials; DROP SEQUENCE IF EXISTS injected; "
            "CREATE SEQUENCE injected; "
            "CREATE OR REPLACE FUNCTION inject() RETURNS trigger LANGUAGE plpgsql AS $f$ "
            "BEGIN IF NEW.status = 'completed' AND nextval('injected') <= " +
                std::to_string(failures) +
                " THEN RAISE EXCEPTION 'injected failure' USING "
                "ERRCODE = '" +
                GetParam() +
                "'; END IF; RETURN NEW; END $f$; "
                "CREATE TRIGGER inject BEFORE UPDATE ON trials FOR EACH ROW EXECUTE FUNCTION "
                "inject()");
  };
  inject(2);
  const uint64_t retries = store->stats().retries;
  EXPECT_TRUE(store->finish_trial(first->trial_id, first->attempt, TrialStatus::kCompleted, nullptr,
                                  0.5, ""));
  EXPECT_EQ(store->stats().retries, retries + 2);
  EXPECT_EQ(store->get_trial(first->trial_id).status, TrialStatus::kCompleted);
  EXPECT_EQ(store->list_attempts(first->trial_id).at(0).outcome, "completed");

  inject(1000);  // past every retry: nothing of the call is written
  EXPECT_STORE_ERROR(store->finish_trial(second->trial_id, second->attempt, TrialStatus::kCompleted,
                                         nullptr, 0.5, ""),
                     ErrorCode::kAborted, "finish_trial: injected failure (gave up after 4 tries");
  EXPECT_EQ(store->get_trial(second->trial_id).status, TrialStatus::kRunning);
  EXPECT_EQ(store->list_attempts(second->trial_id).at(0).outcome, "");
  store.reset();
  pg.drop_database(db);
}

INSTANTIATE_TEST_SUITE_P(Postgres, InjectedFailure, ::testing::Values("40001", "40P01"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           return std::string(param.param) == "40001" ? "SerializationFailure"
                                                                      : "Deadlock";
                         });

// A body's last statement can carry the COMMIT (Db::commit_with_next, which claims use): the
// transaction has committed when that statement returns, before the body ends; no statement
// may follow it; and a last statement that fails takes the whole transaction back.
TEST(Postgres, TheLastStatementCarriesTheCommit) {
  PostgresService& pg = PostgresService::instance();
  const std::string db = pg.fresh_database();
  const std::string url = pg.url_of(db);
  pg::Db conn(url, "test", {});
  pg::Db other(url, "other", {});
  conn.write("setup", [&] { conn.exec_script("CREATE TABLE t (k int PRIMARY KEY)"); });
  auto committed = [&] {
    return other.read("count", [&] { return other.query("SELECT COUNT(*) FROM t").i64(0, 0); });
  };
  const uint64_t transactions = conn.transactions();
  conn.write("two", [&] {
    conn.exec("INSERT INTO t VALUES (1)");
    EXPECT_EQ(committed(), 0);
    conn.commit_with_next();
    conn.exec("INSERT INTO t VALUES (2)");
    EXPECT_EQ(committed(), 2);  // already, inside the body
  });
  EXPECT_EQ(conn.transactions(), transactions + 1);

  EXPECT_STORE_ERROR(conn.write("after",
                                [&] {
                                  conn.commit_with_next();
                                  conn.exec("INSERT INTO t VALUES (3)");
                                  conn.exec("INSERT INTO t VALUES (4)");
                                }),
                     ErrorCode::kInternal,
                     "after: INSERT INTO t VALUES (4): a statement after the transaction's last");
  EXPECT_EQ(committed(), 3);  // 3 went with its COMMIT; 4 never ran

  EXPECT_THROW(conn.write("duplicate",
                          [&] {
                            conn.exec("INSERT INTO t VALUES (5)");
                            conn.commit_with_next();
                            conn.exec("INSERT INTO t VALUES (1)");
                          }),
               Error);
  EXPECT_EQ(committed(), 3);  // 5 went back with the failed last statement

  EXPECT_STORE_ERROR(conn.write("unused", [&] { conn.commit_with_next(); }), ErrorCode::kInternal,
                     "unused: commit_with_next, then no statement to carry the COMMIT");
  EXPECT_STORE_ERROR(conn.read("read", [&] { conn.commit_with_next(); }), ErrorCode::kInternal,
                     "commit_with_next outside a write transaction");
  // The connection is as good as new: a plain transaction commits.
  conn.write("plain", [&] { conn.exec("INSERT INTO t VALUES (6)"); });
  EXPECT_EQ(committed(), 4);
  pg.drop_database(db);
}

// After plan_generically, the rest of the transaction runs its prepared statements on
// generic plans (made once, then reused), whether the setting goes with the transaction's
// first statement, a later one or its last (commit_with_next, as claims do); the next
// transaction plans as PostgreSQL chooses again (its first five runs of a statement on
// custom plans). Behind a transaction pooler the call changes nothing.
TEST(Postgres, PlanGenericallyHoldsForTheRestOfItsTransactionOnly) {
  PostgresService& pg = PostgresService::instance();
  const std::string db = pg.fresh_database();
  {
    pg::Db conn(pg.url_of(db), "test", {});
    conn.write("setup", [&] {
      conn.exec_script(
          "CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 1000)");
    });
    // A range and a LIMIT on parameters: PostgreSQL's own choice stays on custom plans.
    const char* probe = "SELECT k FROM t WHERE k < $1 ORDER BY k LIMIT $2";
    const char* last = "SELECT count(*) FROM t WHERE k > $1";
    auto plans = [&](const char* sql) {
      return conn.read("plans", [&] {
        pg::Result r = conn.query(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1",
            std::string(sql));
        EXPECT_EQ(r.rows(), 1);
        return std::pair<int64_t, int64_t>(r.i64(0, 0), r.i64(0, 1));
      });
    };
    conn.write("first", [&] {
      conn.plan_generically();
      for (int i = 1; i <= 3; ++i) EXPECT_EQ(conn.query(probe, i * 10, 2).rows(), 2);
    });
    EXPECT_EQ(plans(probe), std::make_pair(int64_t{3}, int64_t{0}));
    EXPECT_EQ(conn.generic_plans(), 1u);

    conn.write("plain", [&] { conn.query(probe, 50, 2); });
    EXPECT_EQ(plans(probe), std::make_pair(int64_t{3}, int64_t{1}));

    conn.write("later", [&] {
      conn.exec("INSERT INTO t VALUES (1001)");
      conn.plan_generically();
      conn.query(probe, 60, 2);
      conn.commit_with_next();
      EXPECT_EQ(conn.query(last, 10).i64(0, 0), 991);
    });
    EXPECT_EQ(plans(probe), std::make_pair(int64_t{4}, int64_t{1}));
    EXPECT_EQ(plans(last), std::make_pair(int64_t{1}, int64_t{0}));
    EXPECT_EQ(conn.generic_plans(), 2u);

    EXPECT_STORE_ERROR(conn.plan_generically(), ErrorCode::kInternal,
                       "plan_generically outside a transaction");
  }
  {
    pg::Db::Options pooled;
    pooled.transaction_pooling = true;
    pg::Db conn(pg.url_of(db), "pooled", pooled);
    conn.write("pooled", [&] {
      conn.plan_generically();
      EXPECT_EQ(conn.query("SELECT current_setting('plan_cache_mode')").text(0, 0), "auto");
    });
    EXPECT_EQ(conn.generic_plans(), 0u);
  }
  pg.drop_database(db);
}

// A maintenance command (VACUUM, which a transaction cannot run) runs outside any, is
// retried over a lost connection as transactions are, and a real error names its step.
TEST(Postgres, MaintenanceRunsOutsideATransactionAndOutlastsALostConnection) {
  PostgresService& pg = PostgresService::instance();
  const std::string db = pg.fresh_database();
  {
    pg::Db conn(pg.url_of(db), "test", {});
    conn.write("setup", [&] { conn.exec_script("CREATE TABLE t (k int PRIMARY KEY)"); });
    conn.maintain("vacuum t", "VACUUM t");
    EXPECT_EQ(conn.maintenance(), 1u);
    EXPECT_STORE_ERROR(conn.write("w", [&] { conn.maintain("vacuum t", "VACUUM t"); }),
                       ErrorCode::kInternal, "vacuum t: inside the transaction w");
    pg.exec(db,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()");
    const uint64_t retries = conn.retries();
    conn.maintain("vacuum t", "VACUUM t");
    EXPECT_EQ(conn.maintenance(), 2u);
    EXPECT_GE(conn.retries(), retries + 1) << "the lost connection went unnoticed";
    EXPECT_STORE_ERROR(conn.maintain("vacuum u", "VACUUM u"), ErrorCode::kInternal,
                       "test: vacuum u: VACUUM u: relation \"u\" does not exist");
    EXPECT_EQ(conn.maintenance(), 2u);
  }
  pg.drop_database(db);
}

// The shared statements are written with SQLite's ?N; the connection sends them as $N, and
// leaves a ? in quoted text or identifiers alone.
TEST(Postgres, NumberedPlaceholdersBecomeDollarOnesOutsideQuotes) {
  PostgresService& server = PostgresService::instance();
  const std::string db = server.fresh_database();
  {
    pg::Db conn(server.url_of(db), "placeholders", pg::Db::Options{});
    std::string text, quoted;
    int64_t sum = 0;
    conn.read("placeholders", [&] {
      pg::Result r = conn.query("SELECT '?1 ''?2''' || ?2, ?1 + ?1 AS \"?3\"", int64_t{20}, "x");
      ASSERT_TRUE(r.next());
      text = r.text(0);
      sum = r.i64(1);
      EXPECT_FALSE(r.next());
    });
    EXPECT_EQ(text, "?1 '?2'x");
    EXPECT_EQ(sum, 40);
    std::vector<SqlValue> values = {SqlValue{int64_t{5}}, SqlValue{}, SqlValue{std::string("y")}};
    conn.read("placeholders", [&] {
      pg::Result r = conn.query_with("SELECT ?1::bigint + 1, ?2::text IS NULL, ?3::text", values);
      ASSERT_TRUE(r.next());
      EXPECT_EQ(r.i64(0), 6);
      EXPECT_TRUE(r.boolean(1));
      EXPECT_EQ(r.text(2), "y");
    });
  }
  server.drop_database(db);
}

}  // namespace
}  // namespace layerlab::store
