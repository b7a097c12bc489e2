// A model kept in the store by a study's keep_weights (store::KeptWeights), read back for
// `predict --trial` and `best --save`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model.h"
#include "store/store.h"

namespace layerlab::cli {

// The model kept for the trial, or nullopt when none is. `where` names it in errors (a
// kept file that does not decode is InvalidArgument naming it).
std::optional<model::Model> find_kept_model(store::Store& store, int64_t trial_id,
                                            const std::string& where);

}  // namespace layerlab::cli
