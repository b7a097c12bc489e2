// Resolving a study named on the command line (by name or by id) in a store.
#pragma once

#include <string>

#include "store/store.h"

namespace layerlab::cli {

// The study `ref` (a name, or a numeric id) in the store at url; NotFound naming both.
store::StudyRecord resolve_study(store::Store& store, const std::string& ref);
store::StudyRecord resolve_study(const std::string& store_url, const std::string& ref);

}  // namespace layerlab::cli
