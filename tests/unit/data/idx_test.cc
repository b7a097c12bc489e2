// idx: and fashion-mnist, with IDX fixtures written here (plain and gzipped with zlib).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>

#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::TempDir;

// An IDX file of unsigned bytes with these dimensions; `data` is written as is (it may be
// shorter or longer than the dimensions say).
std::string idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string b = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) b += static_cast<char>((d >> shift) & 0xff);
  b.append(data.begin(), data.end());
  return b;
}

std::string gzip(const std::string& raw) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, raw.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// 5 images of 2x3 pixels: image i has pixels 10*i + p; labels 3,1,4,1,5.
std::vector<uint8_t> pixels(int n, int size) {
  std::vector<uint8_t> p;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < size; ++j) p.push_back(static_cast<uint8_t>(10 * i + j));
  return p;
}
const std::vector<uint8_t> kLabels = {3, 1, 4, 1, 5};

void expect_fixture_dataset(const Dataset& d) {
  EXPECT_EQ(d.rows, 5);
  EXPECT_EQ(d.features, 6);
  EXPECT_EQ(d.x[0], 0);
  EXPECT_EQ(d.x[6 * 4 + 5], 45);
  EXPECT_EQ(d.classes, 4);  // labels 1, 3, 4, 5
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"1", "3", "4", "5"}));
  EXPECT_EQ(d.y, (std::vector<float>{1, 0, 2, 0, 3}));
}

TEST(Idx, PlainAndGzipped) {
  TempDir dir;
  std::string images = idx_bytes({5, 2, 3}, pixels(5, 6));
  std::string labels = idx_bytes({5}, kLabels);
  std::string ip = dir.write("images.idx", images), lp = dir.write("labels.idx", labels);
  expect_fixture_dataset(load("idx:" + ip + "," + lp));
  // gzip detected by magic, whatever the name; one plain and one gzipped works too.
  std::string igz = dir.write("images.bin", gzip(images));
  std::string lgz = dir.write("labels.gz", gzip(labels));
  expect_fixture_dataset(load("idx:" + igz + "," + lgz));
  expect_fixture_dataset(load("idx:" + igz + "," + lp));
}

TEST(Idx, DeclaredClassesKeepIds) {
  TempDir dir;
  std::string ip = dir.write("i", idx_bytes({5, 6}, pixels(5, 6)));
  std::string lp = dir.write("l", idx_bytes({5}, kLabels));
  Dataset d = load("idx:" + ip + "," + lp + "?classes=10");
  EXPECT_EQ(d.classes, 10);
  EXPECT_EQ(d.y, (std::vector<float>{3, 1, 4, 1, 5}));
  EXPECT_LOAD_ERROR("idx:" + ip + "," + lp + "?classes=5", ErrorCode::kInvalidArgument,
                    "idx:" + lp + ": item 5: label 5 out of range 0..4 (classes=5)");
}

TEST(IdxErrors, BadMagic) {
  TempDir dir;
  std::string ip = dir.write("i", "P5\n28 28\n255\n");
  std::string lp = dir.write("l", idx_bytes({5}, kLabels));
  EXPECT_LOAD_ERROR("idx:" + ip + "," + lp, ErrorCode::kInvalidArgument,
                    "idx:" + ip + ": bad magic 0x50350a32, not an IDX file");
  std::string fp = dir.write("f", std::string{0, 0, 0x0d, 1, 0, 0, 0, 0});
  EXPECT_LOAD_ERROR("idx:" + fp + "," + lp, ErrorCode::kInvalidArgument,
                    "element type 0x0d not supported");
}

TEST(IdxErrors, Truncated) {
  TempDir dir;
  std::string ip = dir.write("i", idx_bytes({5, 2, 3}, pixels(4, 6)));  // 24 of 30 bytes
  std::string lp = dir.write("l", idx_bytes({5}, kLabels));
  EXPECT_LOAD_ERROR("idx:" + ip + "," + lp, ErrorCode::kInvalidArgument,
                    "idx:" + ip +
                        ": truncated: the header says 5 items of 6 bytes (30 bytes) but the "
                        "file has 24 bytes of data");
  std::string hp = dir.write("h", std::string{0, 0, 8, 3, 0, 0});
  EXPECT_LOAD_ERROR("idx:" + hp + "," + lp, ErrorCode::kInvalidArgument,
                    "truncated header (3 dimensions need 16 bytes, the file has 6)");
  std::string good = dir.write("g", idx_bytes({5, 2, 3}, pixels(5, 6)));
  std::string xp = dir.write("x", idx_bytes({5}, {3, 1, 4, 1, 5, 9}));
  EXPECT_LOAD_ERROR("idx:" + good + "," + xp, ErrorCode::kInvalidArgument,
                    "1 unexpected bytes after the 5 items");
}

TEST(IdxErrors, CountMismatch) {
  TempDir dir;
  std::string ip = dir.write("i", idx_bytes({5, 6}, pixels(5, 6)));
  std::string lp = dir.write("l", idx_bytes({4}, {1, 2, 3, 4}));
  EXPECT_LOAD_ERROR("idx:" + ip + "," + lp, ErrorCode::kInvalidArgument,
                    "idx:" + ip + " has 5 images but idx:" + lp + " has 4 labels");
  std::string l2 = dir.write("l2", idx_bytes({5, 1}, kLabels));
  EXPECT_LOAD_ERROR("idx:" + ip + "," + l2, ErrorCode::kInvalidArgument,
                    "labels must have one dimension, got 2");
}

TEST(IdxErrors, CorruptGzipAndMissingFile) {
  TempDir dir;
  std::string good = gzip(idx_bytes({5, 6}, pixels(5, 6)));
  std::string bad = good;
  for (size_t i = 12; i < bad.size() - 8; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  std::string ip = dir.write("i.gz", bad);
  std::string lp = dir.write("l", idx_bytes({5}, kLabels));
  EXPECT_LOAD_ERROR("idx:" + ip + "," + lp, ErrorCode::kInvalidArgument,
                    "idx:" + ip + ": corrupt gzip data");
  std::string cut = dir.write("cut.gz", good.substr(0, good.size() / 2));
  EXPECT_LOAD_ERROR("idx:" + cut + "," + lp, ErrorCode::kInvalidArgument, "the data ends early");
  EXPECT_LOAD_ERROR("idx:" + dir.path("none") + "," + lp, ErrorCode::kNotFound,
                    "file not found: " + dir.path("none"));
}

// Sets LAYERLAB_FASHION_MNIST_DIR for the scope of one test.
class FashionDir {
 public:
  explicit FashionDir(const std::string& dir) {
    if (const char* old = std::getenv(kVar)) old_ = old, had_ = true;
    setenv(kVar, dir.c_str(), 1);
  }
  ~FashionDir() {
    if (had_)
      setenv(kVar, old_.c_str(), 1);
    else
      unsetenv(kVar);
  }

 private:
  static constexpr const char* kVar = "LAYERLAB_FASHION_MNIST_DIR";
  std::string old_;
  bool had_ = false;
};

TEST(FashionMnist, MissingPackageNamesIt) {
  TempDir dir;
  FashionDir env(dir.path("absent"));
  EXPECT_LOAD_ERROR("fashion-mnist", ErrorCode::kFailedPrecondition,
                    "apt-get install dataset-fashion-mnist");
  EXPECT_LOAD_ERROR("fashion-mnist?part=test", ErrorCode::kFailedPrecondition,
                    dir.path("absent") + "/t10k-images-idx3-ubyte.gz not found");
}

TEST(FashionMnist, SmallFixture) {
  TempDir dir;
  FashionDir env(dir.dir());
  dir.write("train-images-idx3-ubyte.gz", gzip(idx_bytes({5, 28, 28}, pixels(5, 784))));
  dir.write("train-labels-idx1-ubyte.gz", gzip(idx_bytes({5}, {9, 0, 0, 3, 2})));
  Dataset d = load("fashion-mnist?subset=3");
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.features, 784);
  EXPECT_EQ(d.classes, 10);
  EXPECT_EQ(d.class_names[9], "Ankle boot");
  EXPECT_EQ(d.y, (std::vector<float>{9, 0, 0}));
  EXPECT_EQ(d.x[784 + 2], 12);
  EXPECT_EQ(load("fashion-mnist").rows, 5);
  EXPECT_LOAD_ERROR("fashion-mnist?subset=6", ErrorCode::kInvalidArgument,
                    "subset=6 but part=train has only 5 rows");

  dir.write("t10k-images-idx3-ubyte.gz", gzip(idx_bytes({2, 28, 28}, pixels(2, 784))));
  dir.write("t10k-labels-idx1-ubyte.gz", gzip(idx_bytes({2}, {1, 12})));
  EXPECT_LOAD_ERROR("fashion-mnist?part=test", ErrorCode::kInvalidArgument,
                    "t10k-labels-idx1-ubyte.gz: item 2: label 12 out of range 0..9 (classes=10)");
}

TEST(FashionMnist, DebianPackageWhenInstalled) {
  if (std::getenv("LAYERLAB_FASHION_MNIST_DIR") ||
      !std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset d = load("fashion-mnist?subset=1000");
  EXPECT_EQ(d.rows, 1000);
  EXPECT_EQ(d.features, 784);
  EXPECT_EQ(d.classes, 10);
  EXPECT_EQ(d.x.size(), 1000u * 784);
  std::vector<int64_t> n = testing::class_counts(d);
  for (int64_t c : n) EXPECT_GT(c, 50);  // roughly balanced
  float hi = 0;
  for (float v : d.x) hi = std::max(hi, v);
  EXPECT_EQ(hi, 255.0f);
  Dataset t = load("fashion-mnist?part=test");
  EXPECT_EQ(t.rows, 10000);
}

}  // namespace
}  // namespace layerlab::data
