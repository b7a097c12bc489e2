// idx:IMAGES,LABELS and fashion-mnist: IDX files (the MNIST format), plain or gzipped.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "common/error.h"
#include "data/file_io.h"
#include "data/labels.h"
#include "data/loaders.h"
#include "data/text.h"

namespace layerlab::data {
namespace {

constexpr unsigned char kUnsignedByte = 0x08;

struct IdxHeader {
  std::vector<int64_t> dims;
  int64_t items = 0;      // dims[0]
  int64_t item_size = 1;  // product of the other dims
  size_t data_offset = 0;
};

uint32_t read_be32(std::string_view b, size_t at) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])); };
  return (u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3);
}

std::string hex_bytes(std::string_view b, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "0x";
  for (size_t i = 0; i < n && i < b.size(); ++i) {
    auto c = static_cast<unsigned char>(b[i]);
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// Checks the magic (00 00 TYPE NDIMS), the dimensions and that the data is all there.
IdxHeader parse_header(std::string_view b, const std::string& source) {
  if (b.size() < 4 || b[0] != 0 || b[1] != 0 || b[3] == 0)
    throw invalid_argument(source + ": bad magic " + hex_bytes(b, 4) +
                           ", not an IDX file (expected 0x0000 then type and dimension bytes)");
  auto type = static_cast<unsigned char>(b[2]);
  if (type != kUnsignedByte)
    throw invalid_argument(source + ": element type " + hex_bytes(b.substr(2), 1) +
                           " not supported (only unsigned byte, 0x08)");
  IdxHeader h;
  size_t ndims = static_cast<unsigned char>(b[3]);
  h.data_offset = 4 + 4 * ndims;
  if (b.size() < h.data_offset)
    throw invalid_argument(
        fmt::format("{}: truncated header ({} dimensions need {} bytes, the file has {})", source,
                    ndims, h.data_offset, b.size()));
  for (size_t i = 0; i < ndims; ++i) {
    h.dims.push_back(read_be32(b, 4 + 4 * i));
    if (i > 0) {
      h.item_size *= h.dims.back();
      if (h.item_size > (int64_t{1} << 31))
        throw invalid_argument(source + ": items of more than 2^31 values are not supported");
    }
  }
  h.items = h.dims[0];
  if (h.item_size == 0) throw invalid_argument(source + ": a dimension is 0, items have no values");
  int64_t expected = h.items * h.item_size;
  int64_t have = static_cast<int64_t>(b.size() - h.data_offset);
  if (have < expected)
    throw invalid_argument(fmt::format(
        "{}: truncated: the header says {} items of {} bytes ({} bytes) but the file has {} "
        "bytes of data",
        source, h.items, h.item_size, expected, have));
  if (have > expected)
    throw invalid_argument(fmt::format("{}: {} unexpected bytes after the {} items", source,
                                       have - expected, h.items));
  return h;
}

// The value of FASHION_MNIST_DIR, or the Debian package's directory.
std::string fashion_mnist_dir() {
  const char* env = std::getenv("LAYERLAB_FASHION_MNIST_DIR");
  return env && *env ? env : "/usr/share/datasets/fashion-mnist";
}

Dataset load_fashion_mnist(const Spec& spec, const DataLimits& limits) {
  std::string part = spec.get_choice("part", "train", {"train", "test"});
  int64_t subset = spec.get_int("subset", -1, 1, int64_t{1} << 31);
  std::string dir = fashion_mnist_dir();
  std::string stem = dir + "/" + (part == "train" ? "train" : "t10k");
  std::string images = stem + "-images-idx3-ubyte.gz";
  std::string labels = stem + "-labels-idx1-ubyte.gz";
  for (const std::string& f : {images, labels}) {
    if (!std::filesystem::exists(f))
      throw failed_precondition(
          "fashion-mnist: " + f +
          " not found; install Debian's dataset-fashion-mnist package (apt-get install "
          "dataset-fashion-mnist) or point LAYERLAB_FASHION_MNIST_DIR at a directory with the "
          "IDX files");
  }
  Dataset d = parse_idx(read_data_file(images, "fashion-mnist:" + images, limits),
                        "fashion-mnist:" + images,
                        read_data_file(labels, "fashion-mnist:" + labels, limits),
                        "fashion-mnist:" + labels, 10, subset, limits);
  if (subset > 0 && d.rows < subset)
    spec.fail(fmt::format("subset={} but part={} has only {} rows", subset, part, d.rows));
  d.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return d;
}

}  // namespace

Dataset parse_idx(std::string_view images, const std::string& images_source,
                  std::string_view labels, const std::string& labels_source, int declared_classes,
                  int64_t max_rows, const DataLimits& limits) {
  IdxHeader ih = parse_header(images, images_source);
  IdxHeader lh = parse_header(labels, labels_source);
  if (lh.dims.size() != 1)
    throw invalid_argument(
        fmt::format("{}: labels must have one dimension, got {}", labels_source, lh.dims.size()));
  if (ih.items != lh.items)
    throw invalid_argument(fmt::format("{} has {} images but {} has {} labels", images_source,
                                       ih.items, labels_source, lh.items));
  int64_t rows = max_rows >= 0 ? std::min(ih.items, max_rows) : ih.items;
  if (rows == 0) throw invalid_argument(images_source + ": no items");
  check_shape(rows, ih.item_size, limits, images_source);
  Dataset d;
  d.rows = rows;
  d.features = static_cast<int>(ih.item_size);
  d.x.resize(static_cast<size_t>(rows * ih.item_size));
  const auto* px = reinterpret_cast<const unsigned char*>(images.data() + ih.data_offset);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = static_cast<float>(px[i]);
  ClassLabels cl(declared_classes, /*numbers_only=*/true);
  for (int64_t i = 0; i < rows; ++i) {
    auto v = static_cast<unsigned char>(labels[lh.data_offset + static_cast<size_t>(i)]);
    cl.add_integer(v, {labels_source, i + 1, "item"});
  }
  ClassLabels::Result r = cl.finish(labels_source);
  d.y = std::move(r.y);
  d.classes = r.classes;
  d.class_names = std::move(r.names);
  default_feature_names(d);
  return d;
}

void register_idx(LoaderRegistry& r) {
  r.add("idx:", {"idx:IMAGES,LABELS - IDX image and label files (unsigned bytes, plain or "
                 "gzipped), images flattened; ?classes=N",
                 {"classes"},
                 [](const Spec& spec, const DataLimits& limits) {
                   size_t comma = spec.target().find(',');
                   if (comma == std::string::npos ||
                       spec.target().find(',', comma + 1) != std::string::npos || comma == 0 ||
                       comma + 1 == spec.target().size())
                     spec.fail("expected idx:IMAGES,LABELS (two paths, one comma)");
                   std::string images = spec.target().substr(0, comma);
                   std::string labels = spec.target().substr(comma + 1);
                   int classes = label_options(spec).declared_classes;
                   std::string is = "idx:" + images, ls = "idx:" + labels;
                   return parse_idx(read_data_file(images, is, limits), is,
                                    read_data_file(labels, ls, limits), ls, classes, -1, limits);
                 }});
  r.add("fashion-mnist",
        {"Fashion-MNIST from Debian's dataset-fashion-mnist package: 28x28 images (784 "
         "features, 0..255), 10 classes; ?part=train|test (60000|10000 rows), ?subset=N",
         {"part", "subset"},
         load_fashion_mnist});
}

}  // namespace layerlab::data
