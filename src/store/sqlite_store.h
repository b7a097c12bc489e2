// The SQLite implementation of Store. Private to src/store/; callers use open_store().
#pragma once

#include <memory>

#include "store/store.h"

namespace layerlab::store {

std::unique_ptr<Store> open_sqlite_store(const StoreUrl& url, const StoreOptions& options);

}  // namespace layerlab::store
