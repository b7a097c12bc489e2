#include "model/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "support/temp_and_errors.h"

namespace layerlab::model {
namespace {

using layerlab::testing::TempDir;
using layerlab::testing::throws_error;
using nlohmann::json;

SafeTensors sample() {
  SafeTensors st;
  st.tensors["a.weight"] = {{2, 3}, {1.f, -2.f, 3.5f, 0.f, -0.f, 1e-30f}};
  st.tensors["a.bias"] = {{2}, {0.25f, -7.f}};
  st.tensors["empty"] = {{0, 4}, {}};
  st.tensors["scalar"] = {{}, {42.f}};
  st.metadata = {{"format", "test"}, {"json", R"({"k": [1, 2]})"}};
  return st;
}

// A file from a header (JSON text) and data bytes, the header length as given.
std::string file(const std::string& header, std::string data, uint64_t length) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + header + data;
}
std::string file(const std::string& header, std::string data) {
  return file(header, std::move(data), header.size());
}

// A header entry for one F32 tensor.
std::string entry(const std::string& name, const std::string& shape, uint64_t begin, uint64_t end) {
  return fmt::format(R"("{}":{{"dtype":"F32","shape":{},"data_offsets":[{},{}]}})", name, shape,
                     begin, end);
}

// A header object of entries.
std::string object(const std::vector<std::string>& entries) {
  return fmt::format("{{{}}}", fmt::join(entries, ","));
}

bool fails_with(const std::string& bytes, const std::string& part) {
  return throws_error([&] { decode_safetensors(bytes, "m.safetensors"); },
                      ErrorCode::kInvalidArgument, "m.safetensors: " + part);
}

TEST(SafeTensors, RoundTripsTensorsAndMetadataExactly) {
  const SafeTensors st = sample();
  const std::string bytes = encode_safetensors(st);
  const SafeTensors back = decode_safetensors(bytes, "mem");
  ASSERT_EQ(back.tensors.size(), 4u);
  for (const auto& [name, t] : st.tensors) {
    ASSERT_TRUE(back.tensors.count(name)) << name;
    EXPECT_EQ(back.tensors.at(name).shape, t.shape) << name;
    ASSERT_EQ(back.tensors.at(name).data.size(), t.data.size()) << name;
    for (size_t i = 0; i < t.data.size(); ++i)  // bit for bit, -0 included
      EXPECT_EQ(std::bit_cast<uint32_t>(back.tensors.at(name).data[i]),
                std::bit_cast<uint32_t>(t.data[i]))
          << name << "[" << i << "]";
  }
  EXPECT_EQ(back.metadata, st.metadata);
}

TEST(SafeTensors, WritesTheStandardLayout) {
  const std::string bytes = encode_safetensors(sample());
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);  // the data starts aligned
  const json header = json::parse(bytes.substr(8, n));
  // Tensors in name order, one after another from 0.
  EXPECT_EQ(header["a.bias"]["data_offsets"], json({0, 8}));
  EXPECT_EQ(header["a.weight"]["data_offsets"], json({8, 32}));
  EXPECT_EQ(header["a.weight"]["shape"], json({2, 3}));
  EXPECT_EQ(header["a.weight"]["dtype"], "F32");
  EXPECT_EQ(header["empty"]["data_offsets"], json({32, 32}));
  EXPECT_EQ(header["scalar"]["data_offsets"], json({32, 36}));
  EXPECT_EQ(header["__metadata__"]["format"], "test");
  EXPECT_EQ(bytes.size(), 8 + n + 36);
  float bias1 = 0;
  std::memcpy(&bias1, bytes.data() + 8 + n + 4, 4);
  EXPECT_EQ(bias1, -7.f);
}

TEST(SafeTensors, FilesRoundTripAndGetChecksShapes) {
  TempDir dir;
  const std::string path = dir.path("m.safetensors");
  write_safetensors(path, sample());
  const SafeTensors back = read_safetensors(path);
  EXPECT_EQ(back.get("a.bias", {2}, path).data, (std::vector<float>{0.25f, -7.f}));
  EXPECT_TRUE(throws_error([&] { back.get("a.bias", {3}, path); }, ErrorCode::kInvalidArgument,
                           "tensor 'a.bias' has shape [2], expected [3]"));
  EXPECT_TRUE(throws_error([&] { back.get("b", {1}, path); }, ErrorCode::kInvalidArgument,
                           "no tensor 'b' (expected shape [1])"));
}

TEST(SafeTensors, ReadingAMissingFileOrADirectoryFails) {
  TempDir dir;
  EXPECT_TRUE(throws_error([&] { read_safetensors(dir.path("none.safetensors")); },
                           ErrorCode::kNotFound, "none.safetensors: no such file"));
  EXPECT_TRUE(throws_error([&] { read_safetensors(dir.dir()); }, ErrorCode::kInvalidArgument,
                           "is a directory"));
}

TEST(SafeTensors, WritingWhereNoFileCanBeFails) {
  TempDir dir;
  EXPECT_TRUE(throws_error([&] { write_safetensors(dir.path("no/such/dir/m.st"), sample()); },
                           ErrorCode::kInvalidArgument, "cannot write"));
}

TEST(SafeTensors, EncodingChecksTensors) {
  SafeTensors st;
  st.tensors["w"] = {{2, 2}, {1.f, 2.f, 3.f}};
  EXPECT_TRUE(throws_error([&] { encode_safetensors(st); }, ErrorCode::kInvalidArgument,
                           "tensor 'w' has shape [2, 2] but 3 values"));
  SafeTensors named;
  named.tensors["__metadata__"] = {{1}, {1.f}};
  EXPECT_TRUE(throws_error([&] { encode_safetensors(named); }, ErrorCode::kInvalidArgument,
                           "'__metadata__' cannot name a tensor"));
}

TEST(SafeTensors, TooShortForTheHeaderLength) {
  EXPECT_TRUE(fails_with("abcde", "5 bytes, too short for a safetensors file"));
}

TEST(SafeTensors, HeaderLengthPastTheEnd) {
  EXPECT_TRUE(fails_with(file("{}", "", 1000),
                         "header length 1000 runs past the end of the file (10 bytes)"));
}

TEST(SafeTensors, HeaderLengthBeyondTheLimit) {
  EXPECT_TRUE(fails_with(file("{}", "", uint64_t{1} << 40),
                         "header length 1099511627776 exceeds the limit"));
}

TEST(SafeTensors, HeaderNotJson) {
  EXPECT_TRUE(fails_with(file("{\"a\":", ""), "header is not valid JSON"));
}

// Found by fuzzing (tests/fuzz/regressions/safetensors): a number out of range ended in
// std::terminate, and a deeply nested shape overflowed the stack printing its message.
TEST(SafeTensors, HeaderNumbersOutOfRangeAndDeepNestingAreBadInput) {
  EXPECT_TRUE(fails_with(file("{\"a\":1e400}", ""), "header is not valid JSON"));
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(fails_with(file(object({entry("w", deep, 0, 4)}), "abcd"),
                         "header is nested deeper than 64 levels"));
  const std::string bytes =
      file(object({entry("w", "[\"" + std::string(100000, 'x') + "\"]", 0, 4)}), "abcd");
  try {
    decode_safetensors(bytes, "m.safetensors");
    ADD_FAILURE() << "a shape of strings was accepted";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << "the message quotes an excerpt only";
  }
}

TEST(SafeTensors, HeaderNotAnObject) {
  EXPECT_TRUE(fails_with(file("[1,2]", ""), "header is not a JSON object"));
}

TEST(SafeTensors, EntryNotAnObject) {
  EXPECT_TRUE(fails_with(file("{\"w\":3}", ""),
                         "tensor 'w': expected an object with dtype, shape and data_offsets"));
}

TEST(SafeTensors, NoDtype) {
  EXPECT_TRUE(fails_with(file(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", "abcd"),
                         "tensor 'w': no dtype"));
}

TEST(SafeTensors, DtypeOtherThanF32) {
  EXPECT_TRUE(fails_with(file(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", "abcd"),
                         "tensor 'w': dtype F16 is not supported (layerlab reads F32 only)"));
}

TEST(SafeTensors, BadShape) {
  EXPECT_TRUE(fails_with(file(object({entry("w", "[-1]", 0, 4)}), "abcd"),
                         "tensor 'w': shape must be a list of non-negative integers, got [-1]"));
  EXPECT_TRUE(fails_with(file(object({entry("w", "\"2\"", 0, 4)}), "abcd"),
                         "tensor 'w': shape must be a list"));
}

TEST(SafeTensors, BadOffsets) {
  EXPECT_TRUE(fails_with(file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "abcd"),
                         "tensor 'w': data_offsets must be [begin, end], got [0]"));
  EXPECT_TRUE(fails_with(file(object({entry("w", "[0]", 4, 0)}), "abcd"),
                         "tensor 'w': data_offsets [4, 0] end before they begin"));
}

TEST(SafeTensors, OffsetsPastTheData) {
  EXPECT_TRUE(fails_with(file(object({entry("w", "[2]", 0, 8)}), "abcd"),
                         "tensor 'w': data_offsets [0, 8] run past the end of the data (4 bytes "
                         "after the header)"));
}

TEST(SafeTensors, ShapeTimesFourIsNotTheSpan) {
  EXPECT_TRUE(fails_with(file(object({entry("w", "[2,3]", 0, 20)}), std::string(20, 'x')),
                         "tensor 'w': shape [2, 3] takes 24 bytes as F32, but data_offsets [0, "
                         "20] span 20 bytes"));
}

TEST(SafeTensors, HugeShape) {
  EXPECT_TRUE(fails_with(file(object({entry("w", "[4611686018427387904, 4]", 0, 4)}), "abcd"),
                         "tensor 'w': shape [4611686018427387904, 4] is too large"));
}

TEST(SafeTensors, OverlappingTensors) {
  EXPECT_TRUE(fails_with(
      file(object({entry("a", "[2]", 0, 8), entry("b", "[2]", 4, 12)}), std::string(12, 'x')),
      "tensors 'a' [0, 8] and 'b' [4, 12] overlap"));
}

TEST(SafeTensors, BytesNoTensorOwns) {
  EXPECT_TRUE(fails_with(file(object({entry("a", "[1]", 4, 8)}), std::string(8, 'x')),
                         "bytes [0, 4) of the data belong to no tensor"));
  EXPECT_TRUE(fails_with(file(object({entry("a", "[1]", 0, 4)}), std::string(12, 'x')),
                         "bytes [4, 12) of the data belong to no tensor"));
}

TEST(SafeTensors, MetadataMustBeStrings) {
  EXPECT_TRUE(
      fails_with(file(R"({"__metadata__":{"k":3}})", ""), "__metadata__ 'k' is not a string: 3"));
  EXPECT_TRUE(
      fails_with(file(R"({"__metadata__":[]})", ""), "__metadata__ is not an object of strings"));
}

TEST(SafeTensors, ReadsPaddedHeadersAndEmptyFiles) {
  const SafeTensors st = decode_safetensors(file("{}      ", ""), "m");
  EXPECT_TRUE(st.tensors.empty());
  EXPECT_TRUE(st.metadata.empty());
}

}  // namespace
}  // namespace layerlab::model
