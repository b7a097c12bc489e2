#include "cli/study_ref.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

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
  // An id is looked up by its key: listing every study to find it cost each worker of a
  // `run` (which names its study by id) a quarter of a second in a store of 5,000 studies.
  // Only canonical digits ("7", not "07") name an id.
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), id);
  if (ec == std::errc() && end == ref.data() + ref.size() && std::to_string(id) == ref) {
    try {
      return store.get_study(id);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotFound) throw;
    }
  }
  const std::vector<store::StudyRecord> studies = store.list_studies({.specs = false});
  std::vector<std::string> names;
  for (const auto& s : studies) names.push_back(s.name);
  throw not_found(unknown_study_message(ref, names));
}

}  // namespace layerlab::cli
