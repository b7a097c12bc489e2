// A statement parameter known only at run time (a filter's optional conditions), for
// query_with() on either database. Private to src/store/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace layerlab::store {

using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;  // monostate: NULL

// Bytes bound as a BLOB (SQLite) or BYTEA (PostgreSQL), not as text: a kept model's weights.
// The view must outlive the statement's run.
struct Blob {
  std::string_view bytes;
};

}  // namespace layerlab::store
