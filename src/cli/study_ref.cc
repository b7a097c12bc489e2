#include "cli/study_ref.h"

#include <algorithm>

#include "common/error.h"
#include "common/strings.h"

namespace layerlab::cli {

store::StudyRecord resolve_study(store::Store& store, const std::string& ref) {
  if (auto s = store.find_study(ref)) return *s;
  if (!ref.empty() && std::all_of(ref.begin(), ref.end(), ::isdigit)) {
    for (const auto& s : store.list_studies())
      if (std::to_string(s.id) == ref) return s;
  }
  std::vector<std::string> names;
  for (const auto& s : store.list_studies()) names.push_back(s.name);
  std::string msg = "no study '" + ref + "' in this store";
  const std::string hint = closest_match(ref, names);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  throw not_found(msg);
}

store::StudyRecord resolve_study(const std::string& store_url, const std::string& ref) {
  auto store = store::open_store(store_url);
  return resolve_study(*store, ref);
}

}  // namespace layerlab::cli
