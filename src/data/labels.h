// Class labels -> class ids, the one rule every loader follows (see dataset.h): with a
// declared class count N the labels must be integers 0..N-1 and are the ids; otherwise the
// distinct labels, sorted (numerically when all are integers, else as strings), become 0..C-1.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"
#include "data/text.h"

namespace layerlab::data {

class ClassLabels {
 public:
  // declared_classes: N > 0 to require 0..N-1, 0 to infer. numbers_only: reject labels that
  // are not numbers (libsvm).
  ClassLabels(int declared_classes, bool numbers_only)
      : declared_(declared_classes), numbers_only_(numbers_only) {}

  // The label of the next row, as written in the file.
  void add(std::string_view token, const Location& where);
  void add_integer(int64_t value, const Location& where);

  int64_t rows() const { return static_cast<int64_t>(ids_.size()); }

  // Class ids per row (as floats), the class count and the class names.
  struct Result {
    std::vector<float> y;
    int classes = 0;
    std::vector<std::string> names;
  };
  // Throws (naming `source`) when there are more than kMaxClasses distinct labels.
  Result finish(const std::string& source) const;
  // finish(), stored into d's y, classes and class_names.
  void finish_into(Dataset& d, const std::string& source) const;
  static constexpr int64_t kMaxClasses = 65536;

 private:
  int declared_;
  bool numbers_only_;
  // Provisional ids per row: >= 0 into ints_, < 0 (~id) into strings_; final ids if declared.
  std::vector<int64_t> ids_;
  std::map<int64_t, int64_t> ints_;  // value -> provisional id
  std::map<std::string, int64_t, std::less<>> strings_;
};

}  // namespace layerlab::data
