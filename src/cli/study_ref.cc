#include "cli/study_ref.h"

#include <algorithm>

#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"

namespace layerlab::cli {

std::string unknown_study_message(const std::string& ref, const std::vector<std::string>& names) {
  std::string msg = "no study '" + excerpt(ref) + "' in this store";
  if (names.empty())
    return msg +
           ": it has no studies yet (`layerlab run STUDY.yaml` or `layerlab submit` adds one)";
  const std::string hint = closest_match(ref, names);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  const size_t shown = std::min(names.size(), kStudiesListed);
  msg += names.size() == 1 ? "; its study: " : "; its studies: ";
  msg +=
      join(std::vector<std::string>(names.begin(), names.begin() + static_cast<long>(shown)), ", ");
  if (names.size() > shown)
    msg += " ... and " + std::to_string(names.size() - shown) + " more (`layerlab studies`)";
  return msg;
}

store::StudyRecord resolve_study(store::Store& store, const std::string& ref) {
  if (auto s = store.find_study(ref)) return *s;
  const std::vector<store::StudyRecord> studies = store.list_studies();
  if (!ref.empty() && std::all_of(ref.begin(), ref.end(), ::isdigit)) {
    for (const auto& s : studies)
      if (std::to_string(s.id) == ref) return s;
  }
  std::vector<std::string> names;
  for (const auto& s : studies) names.push_back(s.name);
  throw not_found(unknown_study_message(ref, names));
}

}  // namespace layerlab::cli
