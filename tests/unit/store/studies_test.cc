// Studies: create, find, list, status, cancel, counts; workers.
#include "raw_sql.h"
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::PostgresService;
using testing::StoreTest;

TEST_P(StoreTest, CreateFindGetListStudies) {
  nlohmann::json spec = {{"name", "depth"}, {"datasets", {"iris", "wine"}}};
  int64_t a = store_->create_study("depth", spec);
  clock_.advance(std::chrono::milliseconds(5));
  int64_t b = store_->create_study("width", nullptr);
  EXPECT_NE(a, b);

  std::optional<StudyRecord> found = store_->find_study("depth");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, a);
  EXPECT_EQ(found->spec, spec);
  EXPECT_EQ(found->status, StudyStatus::kRunning);
  EXPECT_EQ(found->created_at, clock_.now() - std::chrono::milliseconds(5));
  EXPECT_FALSE(store_->find_study("nope"));
  EXPECT_EQ(store_->get_study(b).name, "width");
  EXPECT_TRUE(store_->get_study(b).spec.is_null());

  std::vector<StudyRecord> all = store_->list_studies();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "depth");
  EXPECT_EQ(all[1].name, "width");
  // Visible to another connection on the same file.
  EXPECT_EQ(reopen()->list_studies().size(), 2u);
}

// serve's coordinator and change feed list the running studies, or all without their specs:
// what is not asked for is not read (a study whose spec does not parse is still listed).
TEST_P(StoreTest, ListsTheStudiesOfOneStatusAndWithoutTheirSpecs) {
  const int64_t a = store_->create_study("a", {{"v", 1}});
  const int64_t b = store_->create_study("b", {{"v", 2}});
  const int64_t c = store_->create_study("c", {{"v", 3}});
  store_->set_study_status(b, StudyStatus::kFinished);
  const std::vector<StudyRecord> running = store_->list_studies({.status = StudyStatus::kRunning});
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].id, a);
  EXPECT_EQ(running[0].spec["v"], 1);
  EXPECT_EQ(running[1].id, c);
  EXPECT_EQ(running[1].status, StudyStatus::kRunning);
  const std::vector<StudyRecord> finished =
      store_->list_studies({.status = StudyStatus::kFinished});
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].name, "b");
  EXPECT_TRUE(store_->list_studies({.status = StudyStatus::kCancelled}).empty());

  const std::vector<StudyRecord> all = store_->list_studies();
  const std::vector<StudyRecord> bare = store_->list_studies({.specs = false});
  ASSERT_EQ(bare.size(), 3u);
  for (size_t i = 0; i < bare.size(); ++i) {
    EXPECT_EQ(bare[i].id, all[i].id);
    EXPECT_EQ(bare[i].name, all[i].name);
    EXPECT_EQ(bare[i].status, all[i].status);
    EXPECT_EQ(bare[i].created_at, all[i].created_at);
    EXPECT_TRUE(bare[i].spec.is_null()) << bare[i].name;
  }

  const char* break_b = "UPDATE studies SET spec = '{' WHERE name = 'b'";
  if (postgres())
    PostgresService::instance().exec(PostgresService::database_of(url()), break_b);
  else
    testing::sqlite_column(url().substr(7), break_b);
  EXPECT_STORE_ERROR(store_->list_studies(), ErrorCode::kFailedPrecondition,
                     "studies.spec holds invalid JSON");
  EXPECT_EQ(store_->list_studies({.specs = false}).size(), 3u);
  EXPECT_EQ(store_->list_studies({.status = StudyStatus::kRunning}).size(), 2u);
}

TEST_P(StoreTest, DuplicateStudyNameIsAClearErrorAndChangesNothing) {
  int64_t id = store_->create_study("dup", {{"v", 1}});
  EXPECT_STORE_ERROR(store_->create_study("dup", {{"v", 2}}), ErrorCode::kFailedPrecondition,
                     "a study named 'dup' already exists (id " + std::to_string(id) + ")");
  EXPECT_EQ(store_->get_study(id).spec["v"], 1);
  EXPECT_EQ(store_->list_studies().size(), 1u);
  EXPECT_STORE_ERROR(store_->create_study("", nullptr), ErrorCode::kInvalidArgument,
                     "create_study: the study name is empty");
}

TEST_P(StoreTest, MissingStudyIsNotFound) {
  EXPECT_STORE_ERROR(store_->get_study(42), ErrorCode::kNotFound, "get_study: no study with id 42");
  EXPECT_STORE_ERROR(store_->set_study_status(42, StudyStatus::kFinished), ErrorCode::kNotFound,
                     "no study with id 42");
  EXPECT_STORE_ERROR(store_->counts(42), ErrorCode::kNotFound, "no study");
  EXPECT_STORE_ERROR(store_->cancel_study(42), ErrorCode::kNotFound, "no study");
  EXPECT_STORE_ERROR(store_->add_trials(42, {{0, "iris", {}}}), ErrorCode::kNotFound, "no study");
  EXPECT_STORE_ERROR(store_->list_trials(42, {}), ErrorCode::kNotFound, "no study");
}

TEST_P(StoreTest, SetStudyStatus) {
  int64_t id = store_->create_study("s", nullptr);
  store_->set_study_status(id, StudyStatus::kFinished);
  EXPECT_EQ(store_->get_study(id).status, StudyStatus::kFinished);
}

TEST_P(StoreTest, CountsPerStatus) {
  int64_t id = study_with_trials("c", 5);
  auto c1 = store_->claim_next("w", {});
  auto c2 = store_->claim_next("w", {});
  ASSERT_TRUE(c1 && c2);
  store_->finish_trial(c1->trial_id, c1->attempt, TrialStatus::kPruned, nullptr, 0.5, "");
  StudyCounts c = store_->counts(id);
  EXPECT_EQ(c[TrialStatus::kQueued], 3);
  EXPECT_EQ(c[TrialStatus::kRunning], 1);
  EXPECT_EQ(c[TrialStatus::kPruned], 1);
  EXPECT_EQ(c[TrialStatus::kCompleted], 0);
  EXPECT_EQ(c.total(), 5);
  EXPECT_EQ(c.finished(), 1);
}

TEST_P(StoreTest, CancelStudyCancelsQueuedTrialsOnly) {
  int64_t id = study_with_trials("x", 4);
  auto running = store_->claim_next("w", {});
  ASSERT_TRUE(running);
  EXPECT_EQ(store_->cancel_study(id), 3);
  EXPECT_EQ(store_->get_study(id).status, StudyStatus::kCancelled);
  StudyCounts c = store_->counts(id);
  EXPECT_EQ(c[TrialStatus::kCancelled], 3);
  EXPECT_EQ(c[TrialStatus::kRunning], 1);
  EXPECT_FALSE(store_->claim_next("w", {}));
  // The running trial still reports normally.
  EXPECT_TRUE(store_->finish_trial(running->trial_id, running->attempt, TrialStatus::kCompleted,
                                   {{"val_accuracy", 0.9}}, 0.9, ""));
  EXPECT_STORE_ERROR(store_->add_trials(id, {{9, "iris", {}}}), ErrorCode::kFailedPrecondition,
                     "is cancelled");
}

// Only a running study can be cancelled, and a cancelled one stays so: the store refuses,
// changing nothing, in the same transaction as the update.
TEST_P(StoreTest, CancelRefusesAFinishedStudyAndChangesNothing) {
  const int64_t id = study_with_trials("done", 2);
  store_->set_study_status(id, StudyStatus::kFinished);
  EXPECT_STORE_ERROR(store_->cancel_study(id), ErrorCode::kFailedPrecondition,
                     "cancel_study: study 'done' is already finished");
  EXPECT_EQ(store_->get_study(id).status, StudyStatus::kFinished);
  EXPECT_EQ(store_->counts(id)[TrialStatus::kQueued], 2);
  EXPECT_EQ(store_->counts(id)[TrialStatus::kCancelled], 0);
}

TEST_P(StoreTest, ACancelledStudyStaysCancelled) {
  const int64_t id = study_with_trials("gone", 1);
  EXPECT_EQ(store_->cancel_study(id), 1);
  EXPECT_STORE_ERROR(store_->cancel_study(id), ErrorCode::kFailedPrecondition,
                     "study 'gone' is already cancelled");
  for (StudyStatus s : {StudyStatus::kFinished, StudyStatus::kRunning})
    EXPECT_STORE_ERROR(store_->set_study_status(id, s), ErrorCode::kFailedPrecondition,
                       "set_study_status: study 'gone' is already cancelled");
  EXPECT_EQ(store_->get_study(id).status, StudyStatus::kCancelled);
}

TEST_P(StoreTest, StatusNamesRoundTrip) {
  for (TrialStatus s : kAllTrialStatuses) EXPECT_EQ(parse_trial_status(to_string(s)), s);
  EXPECT_EQ(to_string(TrialStatus::kEarlyStopped), std::string("early_stopped"));
  EXPECT_STORE_ERROR(parse_trial_status("done"), ErrorCode::kInvalidArgument,
                     "unknown trial status 'done'; expected one of: queued, running");
  EXPECT_EQ(parse_study_status("cancelled"), StudyStatus::kCancelled);
  EXPECT_TRUE(is_finished(TrialStatus::kDiverged));
  EXPECT_FALSE(is_finished(TrialStatus::kRunning));
}

TEST_P(StoreTest, WorkersRegisterHeartbeatAndStop) {
  store_->register_worker({"host-a:17", "host-a", 17, "cpu"});
  store_->register_worker({"host-b:9", "host-b", 9, "cuda:0", 64});
  std::vector<WorkerRecord> w = store_->list_workers();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].info.id, "host-a:17");
  EXPECT_EQ(w[0].info.pid, 17);
  EXPECT_EQ(w[1].info.device, "cuda:0");
  EXPECT_EQ(w[1].info.pack, 64);
  EXPECT_EQ(w[0].info.pack, 1);
  EXPECT_EQ(w[0].memory_bytes, 0);
  EXPECT_EQ(w[0].status, WorkerStatus::kIdle);
  EXPECT_EQ(w[0].heartbeat_at, clock_.now());

  clock_.advance(std::chrono::seconds(3));
  store_->heartbeat_worker("host-a:17", 1234, int64_t{5} << 32);
  w = store_->list_workers();
  EXPECT_EQ(w[0].memory_bytes, int64_t{5} << 32);  // beyond 32 bits
  EXPECT_EQ(w[0].status, WorkerStatus::kBusy);
  EXPECT_EQ(w[0].current_trial, 1234);
  EXPECT_EQ(w[0].heartbeat_at - w[0].started_at, std::chrono::seconds(3));
  EXPECT_EQ(w[1].heartbeat_at, w[1].started_at);

  store_->heartbeat_worker("host-a:17", std::nullopt, 0);
  EXPECT_EQ(store_->list_workers()[0].status, WorkerStatus::kIdle);
  store_->stop_worker("host-a:17");
  EXPECT_EQ(store_->list_workers()[0].status, WorkerStatus::kStopped);
  // Registering again (a restarted worker with the same id) resets it.
  store_->register_worker({"host-a:17", "host-a", 18, "cpu"});
  EXPECT_EQ(store_->list_workers()[0].info.pid, 18);
  EXPECT_EQ(store_->list_workers()[0].status, WorkerStatus::kIdle);

  EXPECT_STORE_ERROR(store_->heartbeat_worker("ghost", std::nullopt, 0), ErrorCode::kNotFound,
                     "no worker 'ghost'");
  EXPECT_STORE_ERROR(store_->register_worker({"", "h", 1, "cpu"}), ErrorCode::kInvalidArgument,
                     "empty worker id");
}

TEST_P(StoreTest, StatsCountTransactions) {
  uint64_t before = store_->stats().transactions;
  store_->list_studies();
  store_->create_study("s", nullptr);
  EXPECT_EQ(store_->stats().transactions, before + 2);
  EXPECT_EQ(store_->stats().retries, 0u);
}

}  // namespace
}  // namespace layerlab::store
