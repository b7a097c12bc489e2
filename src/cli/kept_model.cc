#include "cli/kept_model.h"

namespace layerlab::cli {

std::optional<model::Model> find_kept_model(store::Store& store, int64_t trial_id,
                                            const std::string& where) {
  const std::optional<store::KeptWeights> w = store.find_weights(trial_id);
  if (!w) return std::nullopt;
  return model::from_safetensors(model::decode_safetensors(w->bytes, where), where);
}

}  // namespace layerlab::cli
