// The built-in datasets: scikit-learn's copies of UCI data, compiled into the binary from
// data/builtin/*.csv (see scripts/export_datasets.py).
#include "common/error.h"
#include "data/loaders.h"
#include "embedded.h"

namespace layerlab::data {
namespace {

struct Builtin {
  const char* name;
  const char* description;
  std::vector<std::string> class_names;
};

const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> b = {
      {"iris",
       "Iris flowers (UCI): 150 rows, 4 features, 3 classes",
       {"setosa", "versicolor", "virginica"}},
      {"wine",
       "Wine cultivars (UCI): 178 rows, 13 features, 3 classes",
       {"class_0", "class_1", "class_2"}},
      {"breast_cancer",
       "Breast cancer Wisconsin diagnostic (UCI): 569 rows, 30 features, 2 classes",
       {"malignant", "benign"}},
      {"digits",
       "Handwritten digits 8x8 (UCI optdigits): 1797 rows, 64 features, 10 classes",
       {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}},
  };
  return b;
}

Dataset load_builtin(const Builtin& b) {
  std::string file = std::string("data/builtin/") + b.name + ".csv";
  auto bytes = embedded::find(embedded::data_files(), file);
  if (!bytes) throw internal_error("built-in dataset " + file + " is not embedded in the binary");
  CsvOptions options;
  options.labels.declared_classes = static_cast<int>(b.class_names.size());
  Dataset d = parse_csv(*bytes, b.name, options);
  d.class_names = b.class_names;
  return d;
}

}  // namespace

void register_builtin(LoaderRegistry& r) {
  for (const Builtin& b : builtins())
    r.add(b.name,
          {b.description, {}, [&b](const Spec&, const DataLimits&) { return load_builtin(b); }});
}

}  // namespace layerlab::data
