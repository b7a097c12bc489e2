// The --store option every store-reading command takes.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <memory>
#include <string>

#include "store/store.h"

namespace layerlab::cli {

inline void add_store_option(CLI::App* cmd, std::string& url) {
  url = store::kDefaultStoreUrl;
  cmd->add_option("--store", url, "store URL (sqlite:PATH or postgresql://...)")
      ->capture_default_str();
}

// Opens an existing store for reading: a missing SQLite file is an error, not a new store.
inline std::unique_ptr<store::Store> open_existing_store(const std::string& url) {
  store::StoreOptions o;
  o.create_if_missing = false;
  return store::open_store(url, o);
}

// Opens the store of a long-running command (run, worker, serve): once `stop` is set
// (SIGINT, SIGTERM), a PostgreSQL server that is away is no longer waited for.
inline std::unique_ptr<store::Store> open_stoppable_store(const std::string& url,
                                                          const std::atomic<bool>& stop) {
  store::StoreOptions o;
  o.stop = &stop;
  return store::open_store(url, o);
}

}  // namespace layerlab::cli
