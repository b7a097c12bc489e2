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
// SQL from the helpers goes through libpq (tests/CMakeLists.txt links it into every test):
// in-process, since a psql process and its password handshake cost a test about as much CPU
// as the test itself. Databases are created and dropped over one connection per process;
// exec() and column() open a connection of their own each time, so no session state (a
// transaction left open, a lock) outlives the call, as with a psql process.
//
// Thread-safe: every member may be called from any thread.
#pragma once

#include <libpq-fe.h>
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
  // Found by its files, not by `postgres.sh status` (a shell, runuser and pg_ctl in every
  // test process): the port postgres.sh recorded and the live postmaster's pid file.
  static std::unique_ptr<PostgresService> attach(const std::string& dir) {
    std::unique_ptr<PostgresService> s(new PostgresService(dir, Attach{}));
    s->port_ = running_service_port(std::filesystem::path(dir) / "port",
                                    std::filesystem::path(dir) / "data" / "postmaster.pid");
    if (s->port_ == 0)
      throw std::runtime_error("PostgresService: no server running in " + dir +
                               " (LAYERLAB_TEST_POSTGRES_DIR): no port file or no live "
                               "postmaster.pid there");
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
    admin("CREATE DATABASE " + name + " TEMPLATE template0");
    return name;
  }
  std::string fresh_database_url() { return url_of(fresh_database()); }

  // Drops a database, closing its connections first.
  void drop_database(const std::string& db) {
    admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
  }

  // Runs SQL (one or more statements, no results) on database db as layerlab, on a
  // connection of its own; throws std::runtime_error with the server's message when it fails.
  void exec(const std::string& db, const std::string& sql) { once(db, sql); }
  // The first column of a query's rows (its last statement's) as integers.
  std::vector<int64_t> column(const std::string& db, const std::string& sql) {
    std::vector<int64_t> out;
    for (const std::string& v : once(db, sql)) out.push_back(std::stoll(v));
    return out;
  }

  // Fast shutdown and start again on the same port (connections are cut; the data stays).
  void restart() { checked("restart"); }
  void stop() { checked("stop"); }
  void start() { checked("start"); }

 private:
  struct Attach {};
  PostgresService(std::string dir, Attach) : owned_(false), dir_(std::move(dir)) {}

  using Connection = std::unique_ptr<PGconn, decltype(&PQfinish)>;

  Connection connect(const std::string& db) const {
    Connection c(PQconnectdb(url_of(db).c_str()), &PQfinish);
    if (PQstatus(c.get()) != CONNECTION_OK)
      throw std::runtime_error("PostgresService: cannot connect to " + db + ": " +
                               PQerrorMessage(c.get()));
    return c;
  }

  // Runs sql on c; the first column of the last statement's rows (NULLs left out), or throws
  // naming db and the statement.
  static std::vector<std::string> run(PGconn* c, const std::string& db, const std::string& sql) {
    PGresult* r = PQexec(c, sql.c_str());
    const ExecStatusType status = PQresultStatus(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const std::string why = PQerrorMessage(c);
      PQclear(r);
      throw std::runtime_error("PostgresService: on " + db + ": " + sql + ": " + why);
    }
    std::vector<std::string> out;
    for (int i = 0; i < PQntuples(r); ++i)
      if (PQnfields(r) > 0 && !PQgetisnull(r, i, 0)) out.emplace_back(PQgetvalue(r, i, 0));
    PQclear(r);
    return out;
  }

  std::vector<std::string> once(const std::string& db, const std::string& sql) const {
    return run(connect(db).get(), db, sql);
  }

  // CREATE and DROP DATABASE over this process's connection to the database layerlab, made
  // again once should the server have restarted since.
  void admin(const std::string& sql) {
    std::lock_guard lock(admin_mu_);
    if (!admin_) admin_ = connect("layerlab");
    try {
      run(admin_.get(), "layerlab", sql);
    } catch (const std::runtime_error&) {
      if (PQstatus(admin_.get()) == CONNECTION_OK) throw;  // the statement failed, not the link
      admin_ = connect("layerlab");
      run(admin_.get(), "layerlab", sql);
    }
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
  std::mutex admin_mu_;
  Connection admin_{nullptr, &PQfinish};  // see admin()
};

}  // namespace layerlab::testing
