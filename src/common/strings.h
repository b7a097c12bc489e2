// Small string helpers shared by the modules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace layerlab {

std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Edit distance between a and b, counting a swap of neighbouring letters as one edit.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace layerlab
