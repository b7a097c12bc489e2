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

// scheme://user:pass@host... -> scheme://user:***@host... (the last @ ends the password),
// and a postgres URL's password=... parameter too: URLs fit for messages and logs.
std::string hide_url_password(std::string_view url);

}  // namespace layerlab
