// Datasets under hostile input (issue 13): DataLimits (bytes read, gzip bombs, rows,
// columns, values), devices and pipes, messages that quote only a short sanitised excerpt,
// and data::confine_to_directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <string>

#include "common/text_safety.h"
#include "data/confine.h"
#include "data/file_io.h"
#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::TempDir;
using testing::throws_error;
namespace fs = std::filesystem;

// `n` zero bytes as gzip (deflated in 1 MiB pieces, so the test never holds n bytes).
std::string gzip_of_zeros(size_t n) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  const std::string zeros(1 << 20, '0');
  std::string out;
  char buf[1 << 16];
  size_t left = n;
  int flush = Z_NO_FLUSH;
  do {
    const size_t piece = std::min(left, zeros.size());
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    zs.avail_in = static_cast<uInt>(piece);
    left -= piece;
    flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof buf;
      deflate(&zs, flush);
      out.append(buf, sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0);
  } while (flush != Z_FINISH);
  deflateEnd(&zs);
  return out;
}

TEST(DataLimits, DevicesArePlainlyRefused) {
  EXPECT_LOAD_ERROR("csv:/dev/zero", ErrorCode::kInvalidArgument,
                    "csv:/dev/zero: /dev/zero is not a regular file");
  EXPECT_LOAD_ERROR("libsvm:/dev/urandom", ErrorCode::kInvalidArgument, "not a regular file");
  TempDir dir;
  const std::string fifo = dir.path("fifo.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opening a pipe with no writer would block forever: it is refused before.
  EXPECT_LOAD_ERROR("csv:" + fifo, ErrorCode::kInvalidArgument, "not a regular file");
}

TEST(DataLimits, FileBytes) {
  TempDir dir;
  std::string rows = "a,b\n";
  for (int i = 0; i < 300; ++i) rows += "1,0\n";
  const std::string p = dir.write("big.csv", rows);
  DataLimits l;
  l.max_file_bytes = 1000;
  EXPECT_TRUE(throws_error([&] { load("csv:" + p, l); }, ErrorCode::kInvalidArgument,
                           "has more than 1000 bytes (the limit on a data file, "
                           "DataLimits::max_file_bytes)"));
  EXPECT_NO_THROW(load("csv:" + p));
}

TEST(DataLimits, GzipBombIsStoppedAtTheLimit) {
  TempDir dir;
  // 300 MB of zeros in about 300 KB: beyond the default 256 MiB.
  const std::string gz = gzip_of_zeros(size_t{300} << 20);
  EXPECT_LT(gz.size(), size_t{1} << 20);
  const std::string bomb = dir.write("bomb.csv.gz", gz);
  EXPECT_LOAD_ERROR("csv:" + bomb, ErrorCode::kInvalidArgument,
                    "the gzip data decompresses to more than 268435456 bytes (the limit, "
                    "DataLimits::max_decompressed_bytes)");
  // The limit is a field.
  const std::string small = dir.write("small.csv.gz", gzip_of_zeros(5000));
  DataLimits l;
  l.max_decompressed_bytes = 4999;
  EXPECT_TRUE(throws_error([&] { read_data_file(small, "csv:small", l); },
                           ErrorCode::kInvalidArgument, "more than 4999 bytes"));
  l.max_decompressed_bytes = 5000;
  EXPECT_EQ(read_data_file(small, "csv:small", l).size(), 5000u);
}

TEST(DataLimits, RowsColumnsAndValues) {
  TempDir dir;
  const std::string p = dir.write("t.csv", "a,b,c,label\n1,2,3,0\n4,5,6,1\n7,8,9,0\n");
  DataLimits l;
  l.max_rows = 2;
  EXPECT_TRUE(throws_error([&] { load("csv:" + p, l); }, ErrorCode::kInvalidArgument,
                           "line 4: more than 2 data rows (DataLimits::max_rows)"));
  l = {};
  l.max_features = 2;
  EXPECT_TRUE(throws_error([&] { load("csv:" + p, l); }, ErrorCode::kInvalidArgument,
                           "line 1: 4 columns; at most 2 (DataLimits::max_features)"));
  l = {};
  l.max_values = 7;
  EXPECT_TRUE(throws_error([&] { load("csv:" + p, l); }, ErrorCode::kInvalidArgument,
                           "line 4: more than 7 values (DataLimits::max_values)"));
  const std::string svm = dir.write("t.libsvm", "0 1:1 200:2\n1 3:1\n");
  l = {};
  l.max_features = 100;
  EXPECT_TRUE(throws_error([&] { load("libsvm:" + svm, l); }, ErrorCode::kInvalidArgument,
                           "feature index 200 is too large (at most 100"));
  l = {};
  l.max_rows = 500;
  EXPECT_TRUE(throws_error([&] { load("spirals?n=1000", l); }, ErrorCode::kInvalidArgument,
                           "n: must be between 3 and 500"));
  l.max_rows = 100;  // built-ins are held to the limits too
  EXPECT_TRUE(
      throws_error([&] { load("iris", l); }, ErrorCode::kInvalidArgument, "DataLimits::max_rows"));
}

TEST(DataMessages, QuoteOnlyAShortEscapedExcerpt) {
  TempDir dir;
  // A 1 MB field and a terminal escape sequence where numbers belong.
  const std::string big = dir.write("big.csv", "a,label\n" + std::string(1 << 20, 'x') + ",0\n");
  try {
    load("csv:" + big);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_LT(m.size(), 400u);
    EXPECT_NE(m.find("line 2: column 'a': expected a number, got '" + std::string(60, 'x') +
                     "... (1048576 bytes)'"),
              std::string::npos)
        << m;
  }
  const std::string esc = dir.write("esc.csv", "a,label\n\x1b[31mred\x07,0\n");
  EXPECT_LOAD_ERROR("csv:" + esc, ErrorCode::kInvalidArgument, "got '\\x1b[31mred\\x07'");
  // The header is not echoed whole either (it is the file's first line).
  const std::string header =
      dir.write("h.csv", "root:$6$" + std::string(500, 'S') + ":19000:0:99999:7:::\n1\n");
  try {
    load("csv:" + header + "?label=zzz");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find(std::string(100, 'S')), std::string::npos) << e.what();
  }
  const std::string label = dir.write("l.libsvm", std::string(5000, 'q') + " 1:1\n");
  try {
    load("libsvm:" + label);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
  }
}

TEST(TextSafety, Excerpt) {
  EXPECT_EQ(excerpt("plain"), "plain");
  EXPECT_EQ(excerpt("a\nb\tc\x01"), "a\\nb\\tc\\x01");
  EXPECT_EQ(excerpt("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 kept
  EXPECT_EQ(excerpt("caf\xe9"), "caf\\xe9");         // not UTF-8: escaped
  EXPECT_EQ(excerpt(std::string(100, 'a'), 10), std::string(10, 'a') + "... (100 bytes)");
  EXPECT_EQ(excerpt("\xc2\x9b"), "\\u009b");  // a C1 control character
}

TEST(TextSafety, Utf8AndPositions) {
  EXPECT_EQ(find_invalid_utf8("ok \xe2\x82\xac"), std::string::npos);
  EXPECT_EQ(find_invalid_utf8("ab\xff"), 2u);
  EXPECT_EQ(find_invalid_utf8("\xc0\xaf"), 0u);           // overlong '/'
  EXPECT_EQ(find_invalid_utf8("\xed\xa0\x80"), 0u);       // a surrogate
  EXPECT_EQ(find_invalid_utf8("x\xf4\x90\x80\x80"), 1u);  // beyond U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xe2\x82"), 0u);           // cut short
  const TextPosition p = position_of("ab\ncd\nef", 7);
  EXPECT_EQ(p.line, 3);
  EXPECT_EQ(p.column, 2);
}

class Confine : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(dir_.dir()) / "data";
    fs::create_directories(root_ / "sub");
    std::ofstream(root_ / "sub" / "x.csv") << "a,label\n1,0\n2,1\n";
    std::ofstream(fs::path(dir_.dir()) / "secret.csv") << "a,label\n1,0\n";
    fs::create_symlink(fs::path(dir_.dir()) / "secret.csv", root_ / "out.csv");
    fs::create_directory_symlink(dir_.dir(), root_ / "up");
    fs::create_symlink(root_ / "sub" / "x.csv", root_ / "in.csv");
    canonical_root_ = fs::canonical(root_).string();
  }
  TempDir dir_;
  fs::path root_;
  std::string canonical_root_;
};

TEST_F(Confine, FilesInsideResolveToAbsolutePaths) {
  EXPECT_EQ(confine_to_directory("csv:sub/x.csv?label=a&task=regression", root_),
            "csv:" + canonical_root_ + "/sub/x.csv?label=a&task=regression");
  EXPECT_EQ(confine_to_directory("sub/x.csv", root_), "csv:" + canonical_root_ + "/sub/x.csv");
  EXPECT_EQ(confine_to_directory("csv:" + root_.string() + "/sub/./x.csv", root_),
            "csv:" + canonical_root_ + "/sub/x.csv");
  // A link that stays inside resolves to its target.
  EXPECT_EQ(confine_to_directory("csv:in.csv", root_), "csv:" + canonical_root_ + "/sub/x.csv");
  EXPECT_EQ(confine_to_directory("idx:sub/a,sub/b?classes=3", root_),
            "idx:" + canonical_root_ + "/sub/a," + canonical_root_ + "/sub/b?classes=3");
  // A file that does not exist yet stays inside: the loader reports it missing.
  EXPECT_EQ(confine_to_directory("libsvm:new.svm", root_),
            "libsvm:" + canonical_root_ + "/new.svm");
  // The result loads.
  EXPECT_EQ(load(confine_to_directory("csv:sub/x.csv", root_)).rows, 2);
}

TEST_F(Confine, EveryWayOutIsRefused) {
  for (const std::string spec :
       {"csv:/etc/shadow?label=zzz", "csv:../../etc/passwd", "csv:../secret.csv", "csv:out.csv",
        "csv:up/secret.csv", "csv:sub/../../secret.csv", "csv:nope/../../secret.csv",
        "csv:nope/../up/secret.csv", "/etc/passwd.csv", "libsvm:/etc/passwd",
        "idx:sub/x.csv,/etc/passwd", "idx:/etc/passwd,sub/x.csv"})
    EXPECT_TRUE(throws_error([&] { confine_to_directory(spec, root_); },
                             ErrorCode::kInvalidArgument, "is outside the server's data directory"))
        << spec;
}

TEST_F(Confine, OtherDatasetsPassUnchanged) {
  for (const std::string spec : {"iris", "spirals?n=100&seed=3", "fashion-mnist?part=test"})
    EXPECT_EQ(confine_to_directory(spec, root_), spec);
  EXPECT_EQ(confine_to_directory("iris", ""), "iris");
}

TEST_F(Confine, NoDataDirectoryMeansNoFiles) {
  EXPECT_TRUE(throws_error([&] { confine_to_directory("csv:sub/x.csv", ""); },
                           ErrorCode::kInvalidArgument, "`layerlab serve --data-dir DIR`"));
  EXPECT_TRUE(throws_error([&] { confine_to_directory("csv:x.csv", root_ / "missing"); },
                           ErrorCode::kFailedPrecondition, "does not exist"));
  EXPECT_TRUE(throws_error([&] { confine_to_directory("idx:only-one", root_); },
                           ErrorCode::kInvalidArgument, "two paths, one comma"));
  EXPECT_TRUE(throws_error([&] { confine_to_directory("csv:", root_); },
                           ErrorCode::kInvalidArgument, "expected csv:PATH"));
}

}  // namespace
}  // namespace layerlab::data
