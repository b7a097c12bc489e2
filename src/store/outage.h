// What the connections of one process to one database share about its being away.
#pragma once

#include <atomic>

namespace layerlab::store {

// Once a call has failed to reach the database, calls that begin while that is known (on
// this connection or another sharing the Outage) make a single try instead of waiting for
// it, until a call reaches it again. The call that found it away keeps waiting and retrying
// as usual, so a restart is still ridden out by one call. For servers: during an outage a
// request gets its 503 at once, not after the retries of every request ahead of it.
// PostgreSQL only (an SQLite file is never away).
struct Outage {
  std::atomic<bool> known{false};
};

}  // namespace layerlab::store
