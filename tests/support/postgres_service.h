// A private PostgreSQL server for tests (scripts/services/postgres.sh), and a fresh database
// per test on it.
//
//   auto& pg = layerlab::testing::PostgresService::instance();
//   std::string url = pg.fresh_database_url();  // a new, empty database t_<pid>_<n>_<salt>
//   ... open_store(url) ...
//   pg.drop_database(pg.database_of(url));      // optional; the server goes away at exit
//   pg.restart();                               // fast stop + start, same port and data
//
// instance() is the process-wide server: the one running in $LAYERLAB_TEST_POSTGRES_DIR when
// that is set (tests/unit/store/CMakeLists.txt starts one per ctest run that way, so the
// test processes share it), else a private one started on first use in a fresh temp
// directory on a free port, stopped and removed at exit (and by a watchdog process, should
// the test process die without running its destructors).
//
// A test that stops or restarts the server (fault tests) may do it to instance() in a test
// binary of its own; where other tests share the server (LAYERLAB_TEST_POSTGRES_DIR, or
// threads of one process) it constructs its own PostgresService, which starts another
// private server (about a second) and owns it.
//
// The servers run with POSTGRES_FAST=1 (no fsync: a machine crash may lose their data,
// which is fine for tests). When the PostgreSQL server binaries are missing the
// constructor throws, saying to run scripts/install-deps.sh test: the tests fail, they are
// not skipped.
//
// SQL from the helpers goes through psql (the server package's), so this header needs no
// library: a test links against nothing for it (LAYERLAB_SOURCE_DIR locates the script).
//
// Thread-safe: every member may be called from any thread.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/free_port.h"
#include "support/service_script.h"

#ifndef LAYERLAB_SOURCE_DIR
#error "LAYERLAB_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace layerlab::testing {

class PostgresService {
 public:
  // The process-wide server (see above).
  static PostgresService& instance() {
    static std::unique_ptr<PostgresService> service = [] {
      const char* dir = std::getenv("LAYERLAB_TEST_POSTGRES_DIR");
      if (dir && *dir) return attach(dir);
      return std::make_unique<PostgresService>();
    }();
    return *service;
  }

  // Starts a private server in a fresh temp directory on a free port; it is stopped and
  // its directory removed when this object goes away.
  PostgresService() : owned_(true), dir_(fresh_service_dir("pg")) {
    port_ = start_on_a_free_port(
        "postgres.sh", dir_, [&](int port) { return script("start", std::to_string(port)); },
        "PostgresService: a PostgreSQL server",
        "the PostgreSQL server is needed by these tests; install it with scripts/install-deps.sh "
        "test");
  }

  // A server already running in dir (started with postgres.sh); never stopped from here.
  static std::unique_ptr<PostgresService> attach(const std::string& dir) {
    std::unique_ptr<PostgresService> s(new PostgresService(dir, Attach{}));
    auto [rc, out] = s->script("status");
    if (rc != 0)
      throw std::runtime_error("PostgresService: no server running in " + dir +
                               " (LAYERLAB_TEST_POSTGRES_DIR): " + out);
    // The URL is the last line: postgresql://layerlab:layerlab@127.0.0.1:PORT/layerlab
    size_t colon = out.rfind(':');
    size_t slash = out.rfind('/');
    if (colon == std::string::npos || slash == std::string::npos || slash < colon)
      throw std::runtime_error("PostgresService: unexpected status output: " + out);
    s->port_ = std::stoi(out.substr(colon + 1, slash - colon - 1));
    return s;
  }

  ~PostgresService() {
    if (!owned_) return;
    script("stop");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  PostgresService(const PostgresService&) = delete;
  PostgresService& operator=(const PostgresService&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

  // The URL of database `db` for the role layerlab (password layerlab).
  std::string url_of(const std::string& db) const {
    return "postgresql://layerlab:layerlab@127.0.0.1:" + std::to_string(port_) + "/" + db;
  }
  // The database a url_of() URL (or a PgBouncerService one) names.
  static std::string database_of(const std::string& url) {
    const std::string path = url.substr(0, url.find('?'));
    return path.substr(path.rfind('/') + 1);
  }
  // The database postgres.sh creates (owned by layerlab); fresh databases are created from it.
  std::string admin_url() const { return url_of("layerlab"); }

  // Creates an empty database (t_<pid>_<n>_<random>, owned by layerlab) and returns its name.
  std::string fresh_database() {
    static std::atomic<int> counter{0};
    static const unsigned salt = std::random_device{}();
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", salt);
    std::string name =
        "t_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + suffix;
    // template0: nobody connects to it, so databases can be created from it in parallel.
    exec("layerlab", "CREATE DATABASE " + name + " TEMPLATE template0");
    return name;
  }
  std::string fresh_database_url() { return url_of(fresh_database()); }

  // Drops a database, closing its connections first.
  void drop_database(const std::string& db) {
    exec("layerlab", "DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
  }

  // Runs SQL (one or more statements, no results) on database db as layerlab; throws
  // std::runtime_error with psql's message when it fails.
  void exec(const std::string& db, const std::string& sql) { psql(db, sql); }
  // The first column of a query's rows as integers.
  std::vector<int64_t> column(const std::string& db, const std::string& sql) {
    std::vector<int64_t> out;
    std::string rows = psql(db, sql);
    size_t at = 0;
    while (at < rows.size()) {
      size_t nl = rows.find('\n', at);
      if (nl == std::string::npos) nl = rows.size();
      if (nl > at) out.push_back(std::stoll(rows.substr(at, nl - at)));
      at = nl + 1;
    }
    return out;
  }

  // Fast shutdown and start again on the same port (connections are cut; the data stays).
  void restart() { checked("restart"); }
  void stop() { checked("stop"); }
  void start() { checked("start"); }

 private:
  struct Attach {};
  PostgresService(std::string dir, Attach) : owned_(false), dir_(std::move(dir)) {}

  // The PostgreSQL client: $PG_BIN/psql, the newest /usr/lib/postgresql/*/bin/psql, or psql.
  static std::string psql_binary() {
    if (const char* bin = std::getenv("PG_BIN"); bin && *bin) return std::string(bin) + "/psql";
    std::string best;
    int best_version = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      if (!std::filesystem::exists(e.path() / "bin" / "psql", ec)) continue;
      if (std::stoi(name) > best_version) {
        best_version = std::stoi(name);
        best = (e.path() / "bin" / "psql").string();
      }
    }
    return best.empty() ? "psql" : best;
  }

  // Runs sql on db with psql (unaligned, tuples only); its output, or throws.
  std::string psql(const std::string& db, const std::string& sql) {
    const std::string cmd = shell_quote(psql_binary()) + " -X -q -A -t -v ON_ERROR_STOP=1 " +
                            shell_quote(url_of(db)) + " -c " + shell_quote(sql) + " 2>&1";
    auto [rc, out] = run_command(cmd);
    if (rc != 0)
      throw std::runtime_error("PostgresService: psql on " + db + ": " + sql + ": " + out);
    return out;
  }

  // Runs postgres.sh `command` on dir_; the exit status and the output (stdout and stderr).
  std::pair<int, std::string> script(const std::string& command, const std::string& arg = "") {
    std::lock_guard lock(mu_);
    std::string cmd = "POSTGRES_FAST=1 bash " + shell_quote(service_script("postgres.sh")) + " " +
                      command + " " + shell_quote(dir_) + (arg.empty() ? "" : " " + arg) + " 2>&1";
    return run_command(cmd);
  }

  void checked(const std::string& command) {
    auto [rc, out] = script(command, command == "start" ? std::to_string(port_) : "");
    if (rc != 0)
      throw std::runtime_error("PostgresService: postgres.sh " + command + " " + dir_ +
                               " failed:\n" + out);
  }

  bool owned_;
  std::string dir_;
  int port_ = 0;
  std::mutex mu_;
};

}  // namespace layerlab::testing
