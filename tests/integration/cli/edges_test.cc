// The command line as an edge: whatever a command throws (out of memory, a JSON or
// file-system exception, anything) becomes one "layerlab CMD: error: ..." line and an exit
// code, never std::terminate; and secrets stay off command lines: local workers get the
// store URL through their environment, logs hide its password, a password given as a flag
// draws a warning.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/run_command.h"
#include "integration/server/server_process.h"
#include "support/postgres_service.h"

namespace layerlab {
namespace {

using testing::read_file;
using testing::run_layerlab;
using testing::spawn_layerlab;

struct ThrowCase {
  std::string what;  // LAYERLAB_TEST_CLI_THROW
  int exit_code;
  std::string message;  // after "layerlab studies: error: "
};

void PrintTo(const ThrowCase& c, std::ostream* os) {
  *os << c.what;
}

class CommandThrows : public ::testing::TestWithParam<ThrowCase> {};

TEST_P(CommandThrows, AndGetsOneErrorLineAndAnExitCode) {
  const auto dir = testing::fresh_dir("cli-throws");
  const auto r = run_layerlab("studies --store sqlite:" + (dir / "s.db").string(),
                              "LAYERLAB_TEST_CLI_THROW=" + GetParam().what);
  EXPECT_EQ(r.exit_code, GetParam().exit_code) << r.err;
  EXPECT_EQ(r.err.rfind("layerlab studies: error: " + GetParam().message, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Exceptions, CommandThrows,
    ::testing::Values(
        ThrowCase{"bad_alloc", 1, "out of memory (std::bad_alloc): the command needed more memory"},
        ThrowCase{"json", 2, "bad JSON data: [json.exception.parse_error.101]"},
        ThrowCase{"filesystem", 2,
                  "filesystem error: test hook LAYERLAB_TEST_CLI_THROW: No such file or directory"},
        ThrowCase{"runtime_error", 1, "unexpected error: test hook LAYERLAB_TEST_CLI_THROW"},
        ThrowCase{"error", 3, "test hook LAYERLAB_TEST_CLI_THROW"},
        ThrowCase{"other", 1, "unexpected error: an exception of unknown type"}),
    [](const auto& p) { return p.param.what; });

// A real one: invalid UTF-8 in a study's name once aborted `run` (a JSON type_error
// reached std::terminate, exit 134). Whoever refuses it, it is one error line and exit 2.
TEST(CommandEdge, InvalidUtf8InAStudyNameIsAnErrorNotAnAbort) {
  const auto dir = testing::fresh_dir("cli-utf8");
  std::ofstream(dir / "study.yaml") << "name: \"bad\xff\xfename\"\ndatasets: [iris]\n"
                                    << "parameters:\n  epochs: {value: 1}\n";
  const auto r = run_layerlab("run " + (dir / "study.yaml").string() +
                              " --workers 1 --store sqlite:" + (dir / "s.db").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("layerlab run: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

// End to end: `run` with two worker processes, trial 5 throwing std::bad_alloc in its
// first epoch. It ends failed at its first attempt with the reason; the same workers train
// the rest; run exits 0.
// A worker's flags are checked before its store is opened, and the study it names is
// resolved on the connection its queue then uses; a study that is not there is named.
TEST(CommandEdge, AWorkersStudyIsCheckedBeforeItClaimsAnything) {
  const auto dir = testing::fresh_dir("cli-worker-study");
  const std::string db = (dir / "w.db").string();
  auto r = run_layerlab("worker --store sqlite:" + db + " --exit-when-done -q", "timeout 60");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("layerlab worker: error: --exit-when-done needs --study", 0), 0u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db)) << "the store was opened before the flags were checked";

  r = run_layerlab("worker --store sqlite:" + db + " --study nope --exit-when-done -q",
                   "timeout 60");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no study 'nope' in this store"), std::string::npos) << r.err;
}

// `--study -` (how `run` starts its workers before the study is stored): the study's name
// or id is the first line of standard input, read once the store is open; what is wrong
// with that line is said, naming the option.
TEST(CommandEdge, AWorkerGivenStudyDashReadsItFromStandardInput) {
  const auto dir = testing::fresh_dir("cli-worker-stdin");
  std::ofstream(dir / "study.yaml") << "name: piped\ndatasets: [iris]\nparameters:\n"
                                    << "  hidden_layers: {values: [1, 2]}\n"
                                    << "  epochs: {value: 2}\n";
  const std::string store = "sqlite:" + (dir / "s.db").string();
  ASSERT_EQ(run_layerlab("run " + (dir / "study.yaml").string() + " --workers 1 --store " + store)
                .exit_code,
            0);
  const std::string worker = "worker --store " + store + " --study - --exit-when-done -q";
  // The finished study, by name and by id: the worker resolves it and has nothing to do.
  auto r = run_layerlab(worker, "printf 'piped\\n' | timeout 60");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_layerlab(worker, "printf '1' | timeout 60");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_layerlab(worker, "printf 'pipe\\n' | timeout 60");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no study 'pipe' in this store (did you mean 'piped'?)"), std::string::npos)
      << r.err;
  r = run_layerlab(worker + " </dev/null", "timeout 60");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--study -: standard input ended before naming a study"), std::string::npos)
      << r.err;
  r = run_layerlab(worker, "printf '\\n' | timeout 60");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--study -: the first line of standard input is empty"), std::string::npos)
      << r.err;
  r = run_layerlab(worker, "head -c 100000 /dev/zero | tr '\\0' x | timeout 60");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--study -: the first line of standard input is longer than 254 "
                       "characters"),
            std::string::npos)
      << r.err;
  EXPECT_LT(r.err.size(), 400u) << "the line is not echoed";
}

// Ctrl-C while a worker waits for its study (`run` starts its workers first): it ends at
// once, quietly, as a worker stopped with a trial in hand does.
TEST(CommandEdge, AWorkerInterruptedWhileWaitingForItsStudyEndsQuietly) {
  const auto dir = testing::fresh_dir("cli-worker-wait");
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], STDIN_FILENO);
    ::close(in[0]);
    ::close(in[1]);
    const std::string cmd = std::string("exec ") + LAYERLAB_BINARY +
                            " worker --store sqlite:" + (dir / "s.db").string() +
                            " --study - --exit-when-done -q 2>" + (dir / "err").string();
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  const ::layerlab::testing::KillOnExit guard(pid);
  // Until it blocks reading its standard input (/proc/PID/syscall: read, fd 0), for up to 30 s.
  bool reading = false;
  for (int i = 0; i < 600 && !reading; ++i) {
    reading = read_file("/proc/" + std::to_string(pid) + "/syscall").rfind("0 0x0 ", 0) == 0;
    if (!reading) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(reading) << read_file(dir / "err");
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(in[1]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(read_file(dir / "err"), "");
}

TEST(CommandEdge, ATrialThatRunsOutOfMemoryFailsAloneAndTheStudyCompletes) {
  const auto dir = testing::fresh_dir("cli-oom-trial");
  std::ofstream(dir / "study.yaml") << "name: oom\ndatasets: [iris]\nseeds: [0, 1]\n"
                                    << "parameters:\n  hidden_layers: {values: [1, 2, 3, 4]}\n"
                                    << "  units: {value: 8}\n  epochs: {value: 3}\n";
  const std::string store = "sqlite:" + (dir / "s.db").string();
  const auto r =
      run_layerlab("run " + (dir / "study.yaml").string() + " --workers 2 --store " + store,
                   "LAYERLAB_TEST_THROW=after_epoch:5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = run_layerlab("export oom --format json --store " + store);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const nlohmann::json trials = nlohmann::json::parse(e.out)["trials"];
  ASSERT_EQ(trials.size(), 8u);
  for (const auto& t : trials) {
    if (t["number"] == 5) {
      EXPECT_EQ(t["status"], "failed");
      EXPECT_EQ(t["attempts"], 1) << t;
      EXPECT_EQ(t["error"].get<std::string>().rfind("out of memory: ", 0), 0u) << t["error"];
      EXPECT_EQ(t["attempt_log"][0]["outcome"], "failed") << t;
    } else {
      EXPECT_EQ(t["status"], "completed") << t["number"] << ": " << t["error"];
    }
  }
}

// ---- secrets

// The pids of the processes whose parent is `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(e.path() / "stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
      out.push_back(std::stoi(name));
  }
  return out;
}

// A process's argv, NULs shown as spaces.
std::string cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

std::string environ_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(s.begin(), s.end(), '\0', '\n');
  return s;
}

// The `n` children of `parent`, waited for (bounded); fewer if they never came.
// The children of `parent` that run `layerlab worker`, once there are n (for up to 30 s): a
// child seen between its fork and its exec still has its parent's command line.
std::vector<pid_t> wait_workers(pid_t parent, size_t n) {
  std::vector<pid_t> workers;
  for (int i = 0; i < 600 && workers.size() < n; ++i) {
    workers.clear();
    for (pid_t kid : children_of(parent))
      if (cmdline(kid).find(" worker ") != std::string::npos) workers.push_back(kid);
    if (workers.size() < n) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return workers;
}

int stop(pid_t pid) {
  ::kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 600; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

constexpr const char* kPassword = "Sec-7qx-Pw";

// A private PostgreSQL server whose role `layerlab` has the password kPassword (so that
// the password is a string found nowhere else), and its URL.
struct SecretStore {
  testing::PostgresService pg;
  std::string url;
  SecretStore() {
    pg.exec("layerlab", std::string("ALTER ROLE layerlab PASSWORD '") + kPassword + "'");
    url = "postgresql://layerlab:" + std::string(kPassword) +
          "@127.0.0.1:" + std::to_string(pg.port()) + "/layerlab";
  }
};

// `serve --workers 2` with a password in its --store URL: the warning, then no password
// in the workers' argv or in the log, and the workers (given the URL in LAYERLAB_STORE)
// train a submitted study.
TEST(Secrets, ServeWorkersGetTheStoreUrlThroughTheEnvironmentAndLogsHideThePassword) {
  SecretStore store;
  const auto dir = testing::fresh_dir("secrets-serve");
  const pid_t serve =
      spawn_layerlab("serve --store '" + store.url + "' --bind 127.0.0.1:0 --workers 2", dir);
  const ::layerlab::testing::KillOnExit serve_guard(serve);
  const int port = testing::announced_port(dir);
  ASSERT_GT(port, 0) << read_file(dir / "bg.err");
  const std::vector<pid_t> workers = wait_workers(serve, 2);
  ASSERT_EQ(workers.size(), 2u);
  for (pid_t w : workers) {
    const std::string argv = cmdline(w);
    EXPECT_NE(argv.find(" worker "), std::string::npos) << argv;
    EXPECT_EQ(argv.find(kPassword), std::string::npos) << argv;
    EXPECT_EQ(argv.find("--store"), std::string::npos) << argv;
    EXPECT_NE(environ_of(w).find("LAYERLAB_STORE=" + store.url + "\n"), std::string::npos);
  }

  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(std::chrono::seconds(30));
  auto created = c.Post("/api/v1/studies", R"(name: secret
datasets: [iris]
parameters:
  hidden_layers: {values: [1, 2]}
  epochs: {value: 2}
)",
                        "application/yaml");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  std::string status;
  for (int i = 0; i < 1200 && status != "finished"; ++i) {
    auto r = c.Get("/api/v1/studies/1");
    if (r && r->status == 200) status = nlohmann::json::parse(r->body)["status"];
    if (status != "finished") std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, "finished") << "the workers trained the study";
  EXPECT_EQ(stop(serve), 0);

  const std::string log = read_file(dir / "bg.err");
  EXPECT_EQ(log.find(kPassword), std::string::npos) << log;
  EXPECT_NE(log.find("(store postgresql://layerlab:***@127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("layerlab: warning: --store has a password on the command line, where "
                     "other users of this machine can read it (ps); set LAYERLAB_STORE instead"),
            std::string::npos)
      << log;
}

// `run --workers 2`, given the URL in LAYERLAB_STORE: no warning, and neither run's argv
// nor its workers' carry the password. The workers are held before training (the test
// hook) while their command lines are read, so they cannot finish first.
TEST(Secrets, RunTakesTheStoreFromTheEnvironmentAndKeepsItOffEveryCommandLine) {
  SecretStore store;
  const auto dir = testing::fresh_dir("secrets-run");
  std::ofstream(dir / "study.yaml") << "name: secret-run\ndatasets: [iris]\nparameters:\n"
                                    << "  hidden_layers: {values: [1, 2, 3]}\n"
                                    << "  epochs: {value: 2}\n";
  const auto hold = dir / "hold";
  std::ofstream(hold) << "held\n";
  const pid_t run = spawn_layerlab("run " + (dir / "study.yaml").string() + " --workers 2", dir,
                                   "LAYERLAB_STORE='" + store.url +
                                       "' LAYERLAB_TEST_HOLD=before_training:* "
                                       "LAYERLAB_TEST_HOLD_FILE=" +
                                       hold.string());
  const ::layerlab::testing::KillOnExit run_guard(run);
  const std::vector<pid_t> workers = wait_workers(run, 2);
  EXPECT_EQ(workers.size(), 2u) << read_file(dir / "bg.err");
  EXPECT_EQ(cmdline(run).find(kPassword), std::string::npos);
  for (pid_t w : workers) {
    EXPECT_NE(cmdline(w).find(" worker "), std::string::npos) << cmdline(w);
    EXPECT_EQ(cmdline(w).find(kPassword), std::string::npos) << cmdline(w);
  }
  std::filesystem::remove(hold);
  int status = 0;
  ::waitpid(run, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(dir / "bg.err");
  EXPECT_EQ(read_file(dir / "bg.err").find("warning"), std::string::npos);
  // The workers trained every trial, on the store named by the environment.
  const auto r = run_layerlab("status secret-run --json", "LAYERLAB_STORE='" + store.url + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["counts"]["completed"], 3) << r.out;
}

// The warning names the flag and the variable, for each secret given as a flag.
TEST(Secrets, AFlagWithAPasswordOrATokenDrawsAWarning) {
  const auto dir = testing::fresh_dir("secrets-warn");
  // A store that cannot be reached: the command fails after the warning.
  auto r = run_layerlab("studies --store postgresql://u:hunter2@127.0.0.1:1/x");
  EXPECT_NE(r.err.find("layerlab: warning: --store has a password on the command line"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
  r = run_layerlab("submit " + (dir / "none.yaml").string() +
                   " --token=t0k --server http://127.0.0.1:1");
  EXPECT_NE(r.err.find("layerlab: warning: --token is a secret on the command line, where other "
                       "users of this machine can read it (ps); set LAYERLAB_TOKEN instead"),
            std::string::npos)
      << r.err;
  r = run_layerlab("studies --store sqlite:" + (dir / "s.db").string());
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << "no password, no warning: " << r.err;
}

// The guard the tests put on what they spawn: a child still running when a test returns
// early (a failed ASSERT) is killed and reaped, not left behind.
TEST(TestSupport, KillOnExitStopsAChildThatIsStillRunning) {
  const auto dir = testing::fresh_dir("kill-on-exit");
  pid_t pid = 0;
  {
    pid = spawn_layerlab("serve --store sqlite:" + (dir / "s.db").string() + " --bind 127.0.0.1:0",
                         dir);
    const testing::KillOnExit guard(pid);
    ASSERT_GT(testing::announced_port(dir), 0) << read_file(dir / "bg.err");
  }
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1) << "still running";
  EXPECT_EQ(errno, ESRCH) << "not reaped";
}

}  // namespace
}  // namespace layerlab
