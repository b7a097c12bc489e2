// The PostgreSQL implementation of Store. Private to src/store/; callers use open_store().
#pragma once

#include <memory>

#include "store/store.h"

namespace layerlab::store {

// url.path is the libpq connection URL (password included), url.text the same with the
// password hidden. Connecting retries a server that is away for up to busy_timeout, then
// is kUnavailable; a wrong password is kInvalidArgument, a missing database kNotFound.
std::unique_ptr<Store> open_postgres_store(const StoreUrl& url, const StoreOptions& options);

}  // namespace layerlab::store
