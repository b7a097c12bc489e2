// Registry<T>: parts named in a study file (activations, optimizers, losses, initialisers,
// datasets...) are looked up here by name, after xgboost's registries. An unknown name gets
// an error that lists the known ones and suggests the closest.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"

namespace layerlab {

template <typename T>
class Registry {
 public:
  // `kind` names what is registered, for messages: "activation", "optimizer"...
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  Registry& add(std::string name, T value) {
    entries_.emplace(std::move(name), std::move(value));
    return *this;
  }

  bool contains(std::string_view name) const {
    return entries_.find(std::string(name)) != entries_.end();
  }

  const T& get(std::string_view name) const {
    auto it = entries_.find(std::string(name));
    if (it == entries_.end()) throw invalid_argument(unknown_message(name));
    return it->second;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, value] : entries_) out.push_back(name);
    return out;
  }

  std::string unknown_message(std::string_view name) const {
    std::string msg = "unknown " + kind_ + " '" + excerpt(name) + "'";
    std::string hint = closest_match(name, names());
    if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
    msg += "; known: " + join(names(), ", ");
    return msg;
  }

 private:
  std::string kind_;
  std::map<std::string, T> entries_;
};

}  // namespace layerlab
