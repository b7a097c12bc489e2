#include "cli/server_flags.h"

namespace layerlab::cli {

void add_server_flags(CLI::App& cmd, server::ServerOptions& o) {
  const char* limits = "Server limits";
  cmd.add_option("--token", o.token,
                 "bearer token required by mutating requests (needed beyond loopback); also "
                 "$LAYERLAB_TOKEN, which keeps it off the command line");
  cmd.add_option("--data-dir", o.data_dir,
                 "directory that file datasets (csv:, libsvm:, idx:) of studies created over "
                 "HTTP must be inside; without it such studies are refused");
  cmd.add_option("--allow-host", o.allowed_hosts,
                 "host name browsers may reach this server by (repeatable); a loopback server "
                 "answers only loopback names otherwise");
  cmd.add_option("--allow-origin", o.allowed_origins,
                 "origin (scheme://host[:port]) of another site allowed to POST (repeatable)");
  cmd.add_option("--max-trials-per-study", o.max_trials_per_study,
                 "trials a study created over HTTP may have")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-body", o.max_body, "largest request body in bytes, also when chunked")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--http-threads", o.threads, "network threads that also handle requests")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-connections", o.max_connections, "open connections, all clients")
      ->check(CLI::Range(16u, 1u << 20))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-connections-per-client", o.max_connections_per_client,
                 "open connections from one address")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--idle-timeout", o.idle_timeout_seconds,
                 "seconds after which a silent connection is closed")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-streams", o.max_streams, "event stream clients, all together")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-streams-per-client", o.max_streams_per_client,
                 "event stream clients from one address")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-model-downloads", o.max_model_downloads,
                 "kept models being sent at once, all clients (each held in memory until sent)")
      ->check(CLI::Range(size_t{1}, size_t{1024}))
      ->capture_default_str()
      ->group(limits);
  cmd.add_option("--max-model-downloads-per-client", o.max_model_downloads_per_client,
                 "kept models being sent at once to one address")
      ->check(CLI::Range(size_t{1}, size_t{1024}))
      ->capture_default_str()
      ->group(limits);
}

}  // namespace layerlab::cli
