// Datasets: every dataset a study can name, loaded into dense float matrices, plus the
// seeded split and the standardisation that trials use.
//
// A dataset is named by a *spec*: a name with optional URL-like query parameters,
// `NAME?key=value&key=value`. The first '?' starts the query; values are taken literally
// (no percent-decoding). An unknown name gets the registry's "did you mean" error; an
// unknown query key gets an error listing the keys that name accepts.
//
// Built in (compiled into the binary, scikit-learn's copies of the UCI data):
//   iris            150 x 4,   3 classes
//   wine            178 x 13,  3 classes
//   breast_cancer   569 x 30,  2 classes
//   digits          1797 x 64, 10 classes (8x8 images, pixel values 0..16)
//
// Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist):
//   fashion-mnist?part=train|test&subset=N
//     reads /usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz
//     (the directory can be overridden with the environment variable
//     LAYERLAB_FASHION_MNIST_DIR); 784 features (pixels 0..255, not scaled), 10 classes.
//     part defaults to train (60000 rows; test has 10000); subset=N keeps the first N rows.
//
// Synthetic generators (2 or more features, deterministic from `seed`, classes balanced
// exactly, rows in a seeded random order; `noise` is the standard deviation of Gaussian
// noise added to every coordinate, in units where the pattern spans about [-1, 1]):
//   spirals?n=1000&classes=3&turns=1&noise=0.05&seed=0     interleaved spiral arms
//   moons?n=1000&noise=0.1&seed=0                          two half circles (2 classes)
//   xor?n=1000&dims=2&noise=0.1&seed=0      class = parity of the positive coordinates
//   checkerboard?n=1000&cells=4&noise=0&seed=0     cells x cells board on [-1,1]^2, 2 classes
//
// Files (PATH is relative to the working directory; gzip-compressed files are detected by
// their magic bytes and decompressed, whatever their name):
//   csv:PATH?label=NAME&task=classification|regression&classes=N
//     header row required; comma separated; fields may be "quoted" ("" inside for a quote);
//     blank lines are skipped. label= names the label column (default: the last column);
//     for task=regression it may list several columns (label=a,b), which become float
//     targets. Every other column is a feature and must hold a finite number.
//   libsvm:PATH?task=classification|regression&classes=N&features=N
//     `LABEL INDEX:VALUE ...` per line, indices 1-based and ascending, absent ones are 0;
//     the feature count is the largest index (or features=N); features are named f1..fN
//     after their indices. Text after '#' is a comment.
//   idx:IMAGES,LABELS?classes=N
//     IDX files (as MNIST): unsigned-byte images of any shape, flattened to one row per
//     item; unsigned-byte labels, one dimension.
// A path ending in .csv or .csv.gz may be given without the csv: prefix, and one ending in
// .libsvm or .svm without libsvm:.
//
// Class labels (csv, libsvm, idx), one rule for every loader:
//   - with classes=N, every label must be an integer 0..N-1 and is used as the class id;
//   - otherwise the distinct labels, sorted (numerically when all are integers, such as
//     1/2/3 or -1/+1, else as strings), become the class ids 0..C-1.
//   class_names keeps the labels as written ("1", "setosa"...). A label that is a number
//   but not an integer is an error that suggests task=regression.
//
// Errors: every row is loaded or the load fails; nothing is dropped. Messages name the
// source and the 1-based line (item, for idx files), e.g.
//   csv:tests/data/ragged.csv: line 4: expected 5 columns, got 4
// and quote the file's text only as a short excerpt (common/text_safety.h: at most 60
// characters, control characters escaped), so no message carries a file's contents.
//
// Limits (DataLimits below): a dataset spec may come from someone else (a study POSTed to
// the server), so what one load reads and holds is bounded: a device such as /dev/zero, a
// pipe or a socket is refused (regular files only), and so are files, gzip streams, row and
// column counts beyond the limits, each with a message naming the limit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::data {

enum class Task { kClassification, kRegression };

struct Dataset {
  std::string name;  // the spec it was loaded from, e.g. "digits", "csv:/x.csv?label=y"
  Task task = Task::kClassification;
  int64_t rows = 0;
  int features = 0;
  int classes = 0;       // > 0 for classification; 0 for regression
  int targets = 1;       // 1 for classification (class id); number of target columns for regression
  std::vector<float> x;  // rows x features, row-major
  std::vector<float> y;  // rows x targets; class ids stored as exact floats 0..classes-1
  std::vector<std::string> feature_names;
  std::vector<std::string> class_names;  // may be empty
};

// What loading one dataset may read and hold. The defaults fit every built-in and Debian
// package dataset with room to spare (Fashion-MNIST's training images are 47 MB and 47M
// values decompressed).
struct DataLimits {
  // Bytes read from one file, as stored (a gzip file's compressed size).
  uint64_t max_file_bytes = uint64_t{256} << 20;
  // Bytes one gzip file may decompress to (a 2 MB gzip bomb inflates to 2 GB).
  uint64_t max_decompressed_bytes = uint64_t{256} << 20;
  // Data rows (items for idx files, n= for generators).
  int64_t max_rows = 10'000'000;
  // Columns of a CSV file, feature indices of a LIBSVM file, values per idx item.
  int64_t max_features = 100'000;
  // rows x features, the dense matrix's values (4 bytes each: 400 MB).
  int64_t max_values = 100'000'000;
};

struct Split {
  Dataset train;
  Dataset validation;
};

// Loads any dataset by spec (see above). Throws layerlab::Error: kInvalidArgument for a bad
// spec or malformed data, kNotFound for a missing file, kFailedPrecondition for a missing
// Debian data package.
// Throws kInvalidArgument naming the limit when the data exceeds `limits`.
Dataset load(std::string_view spec, const DataLimits& limits = {});

// The task a dataset spec names, known without loading it: the task= option of a loader that
// takes one (csv:, libsvm:), else classification (built-ins, generators, idx:); load() gives
// a dataset of this task. Throws kInvalidArgument for a malformed spec, an unknown name or
// a task= that is neither classification nor regression.
Task task_of(std::string_view spec);
// "classification" or "regression".
const char* task_name(Task task);

// Every registered name, sorted: built-ins, generators, and the prefixes "csv:", "idx:",
// "libsvm:".
std::vector<std::string> known_datasets();

struct DatasetInfo {
  std::string name;         // as in known_datasets()
  std::string description;  // one line, with the parameters it accepts
};
std::vector<DatasetInfo> describe_datasets();

// Row indices of a split, in the order the rows appear in the split's datasets.
struct SplitIndices {
  std::vector<int64_t> train;
  std::vector<int64_t> validation;
};

// Seeded split. Stratified per class for classification when `stratify` (otherwise, and for
// regression, plain random). Validation gets round(n_c * fraction) rows of each class c (of
// all rows when not stratified), except that every class with >= 2 rows keeps at least one
// training row. Rows come in a seeded random order. Same (data, fraction, seed) -> same split.
// validation_fraction must be in [0, 1).
SplitIndices split_indices(const Dataset& d, double validation_fraction, uint64_t seed,
                           bool stratify = true);
Split split(const Dataset& d, double validation_fraction, uint64_t seed, bool stratify = true);

// The rows `rows` of d, in that order (metadata copied).
Dataset take_rows(const Dataset& d, const std::vector<int64_t>& rows);

// Per-feature standardisation: x' = (x - mean) / scale.
struct Scaler {
  std::vector<float> mean;
  std::vector<float> scale;  // population std; 1 for a constant feature
};
Scaler fit_scaler(const Dataset& d);
void apply_scaler(const Scaler& s, Dataset& d);

// Standardise features: mean and population std fitted on s.train only, std 0 -> 1, applied
// to both train and validation. Returns the scaler applied (a saved model needs it).
Scaler standardize(Split& s);

}  // namespace layerlab::data
