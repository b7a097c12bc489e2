// Resolving a study named on the command line (by name or by id) in a store.
#pragma once

#include <string>
#include <vector>

#include "store/store.h"

namespace layerlab::cli {

// The studies an unknown study's message names; the others are counted.
inline constexpr size_t kStudiesListed = 20;

// The study `ref` (a name, or a numeric id) in the store. NotFound otherwise, with a "did
// you mean" for a close name and the store's studies (the first kStudiesListed, by id), or
// that the store has none.
store::StudyRecord resolve_study(store::Store& store, const std::string& ref);

// The message of that NotFound, given the store's study names by id.
std::string unknown_study_message(const std::string& ref, const std::vector<std::string>& names);

}  // namespace layerlab::cli
