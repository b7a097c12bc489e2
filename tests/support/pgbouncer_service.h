// A private PgBouncer in transaction pooling mode (scripts/services/pgbouncer.sh) in front of
// a PostgresService, for tests that run the PostgreSQL store behind a transaction pooler.
//
//   auto& pooler = layerlab::testing::PgBouncerService::instance();
//   std::string db = PostgresService::instance().fresh_database();
//   open_store(pooler.url_of(db));  // ...?pool_mode=transaction
//
// instance() is the process-wide pooler, in front of PostgresService::instance(), with ONE
// server connection per database: every store and worker of a test on that database takes
// turns on it, so anything left on a server connection between transactions (a named
// prepared statement, a session setting) meets another client. Where ctest's fixture started
// one beside the shared server (service_fixture.sh ... with-pgbouncer, in
// $LAYERLAB_TEST_POSTGRES_DIR/pgbouncer), that one, never stopped from here. Otherwise
// started on first use in a fresh temp directory on a free port; stopped at exit and removed
// by a watchdog process (which also stops it should the test process die without running
// its destructors). Needs the pgbouncer package (scripts/install-deps.sh test): without it
// the constructor throws and the tests fail, they are not skipped.
//
// Thread-safe after construction: its members only read.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "support/free_port.h"
#include "support/postgres_service.h"
#include "support/service_script.h"

namespace layerlab::testing {

class PgBouncerService {
 public:
  static PgBouncerService& instance() {
    static PgBouncerService service = [] {
      const char* dir = std::getenv("LAYERLAB_TEST_POSTGRES_DIR");
      const std::string shared = dir && *dir ? std::string(dir) + "/pgbouncer" : "";
      if (!shared.empty() && std::filesystem::exists(shared + "/port")) {
        PostgresService::instance();  // the server it fronts, checked
        return PgBouncerService(shared, Attach{});
      }
      return PgBouncerService(PostgresService::instance(), 1);
    }();
    return service;
  }

  PgBouncerService(const PostgresService& upstream, int pool_size)
      : owned_(true), dir_(fresh_service_dir("pgb")) {
    port_ = start_on_a_free_port(
        "pgbouncer.sh", dir_,
        [&](int port) {
          return run_command("POOL_SIZE=" + std::to_string(pool_size) + " bash " +
                             shell_quote(service_script("pgbouncer.sh")) + " start " +
                             shell_quote(dir_) + " " + std::to_string(port) + " " +
                             std::to_string(upstream.port()) + " 2>&1");
        },
        "PgBouncerService: PgBouncer", "install it with scripts/install-deps.sh test");
  }

  // Tells PgBouncer to exit and goes: it takes about a second to (its timer's tick), and
  // the watchdog waits for it and removes the directory.
  ~PgBouncerService() {
    if (!owned_) return;
    std::ifstream pid_file(dir_ + "/pgbouncer.pid");
    pid_t pid = 0;
    if (pid_file >> pid && pid > 0) ::kill(pid, SIGTERM);
  }
  PgBouncerService(const PgBouncerService&) = delete;
  PgBouncerService& operator=(const PgBouncerService&) = delete;

  // The store URL of database `db` through the pooler (role layerlab).
  std::string url_of(const std::string& db) const {
    return "postgresql://layerlab:layerlab@127.0.0.1:" + std::to_string(port_) + "/" + db +
           "?pool_mode=transaction";
  }

 private:
  struct Attach {};
  // The pooler running in dir (pgbouncer.sh's port and pid files).
  PgBouncerService(std::string dir, Attach)
      : owned_(false),
        dir_(std::move(dir)),
        port_(running_service_port(dir_ + "/port", dir_ + "/pgbouncer.pid")) {
    if (port_ == 0)
      throw std::runtime_error("PgBouncerService: no pooler running in " + dir_ +
                               " (LAYERLAB_TEST_POSTGRES_DIR/pgbouncer)");
  }

  bool owned_ = true;
  std::string dir_;
  int port_ = 0;
};

}  // namespace layerlab::testing
