// A statement parameter known only at run time (a filter's optional conditions), for
// query_with() on either database. Private to src/store/.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace layerlab::store {

using SqlValue = std::variant<std::monostate, int64_t, std::string>;  // monostate: NULL

}  // namespace layerlab::store
