// --pack: a number or `auto`, and auto resolved per device: trial by trial on the CPU (packs
// are slower there, docs/benchmarks.md), packs on CUDA.
#include "worker/pack.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"

namespace layerlab::worker {
namespace {

TEST(PackSetting, ParsesAutoAndWholeNumbers) {
  EXPECT_TRUE(parse_pack("auto").is_auto());
  EXPECT_EQ(parse_pack("1"), PackSetting{1});
  EXPECT_EQ(parse_pack("8"), PackSetting{8});
  EXPECT_EQ(parse_pack("65536"), PackSetting{kMaxPack});
  EXPECT_FALSE(parse_pack("64").is_auto());
  EXPECT_TRUE(PackSetting{}.is_auto()) << "auto is the default";
}

TEST(PackSetting, ReadsBackWhatItWrites) {
  for (const char* text : {"auto", "1", "64", "65536"})
    EXPECT_EQ(to_string(parse_pack(text)), text);
}

class BadPack : public ::testing::TestWithParam<std::string> {};

TEST_P(BadPack, IsRefusedNamingTheOptionAndWhatItAccepts) {
  try {
    parse_pack(GetParam());
    FAIL() << "'" << GetParam() << "' was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "--pack: expected a whole number from 1 to 65536 or 'auto', "
              "got '" +
                  GetParam() + "'");
  }
}

INSTANTIATE_TEST_SUITE_P(Values, BadPack,
                         ::testing::Values("0", "-3", "abc", "autox", "99999999999", "65537", "",
                                           " 8", "8 ", "+8", "1.5", "AUTO", "0x10"),
                         [](const auto& p) { return "case" + std::to_string(p.index); });

TEST(ResolvePack, AutoTrainsTrialByTrialOnTheCpu) {
  const ResolvedPack p = resolve_pack(PackSetting{}, "cpu");
  EXPECT_EQ(p.size, 1);
  EXPECT_TRUE(p.automatic);
  EXPECT_EQ(describe(p), "pack 1 (auto: cpu)");
}

TEST(ResolvePack, AutoPacksOnCuda) {
  for (const char* device : {"cuda", "cuda:0", "cuda:3"}) {
    const ResolvedPack p = resolve_pack(PackSetting{}, device);
    EXPECT_EQ(p.size, 64) << device;
    EXPECT_TRUE(p.automatic) << device;
    EXPECT_EQ(describe(p), "pack 64 (auto: " + std::string(device) + ")");
  }
}

TEST(ResolvePack, AnUnknownDeviceGetsTheCpusPackAndIsLeftToTheBackendToRefuse) {
  EXPECT_EQ(resolve_pack(PackSetting{}, "tpu").size, 1);
  EXPECT_EQ(resolve_pack(PackSetting{}, "cudax").size, 1);
}

TEST(ResolvePack, AGivenNumberIsKeptOnEveryDevice) {
  for (const char* device : {"cpu", "cuda", "cuda:1"}) {
    for (int size : {1, 8, 64, 512}) {
      const ResolvedPack p = resolve_pack(PackSetting{size}, device);
      EXPECT_EQ(p.size, size) << device;
      EXPECT_FALSE(p.automatic) << device;
      EXPECT_EQ(describe(p), "pack " + std::to_string(size));
    }
  }
}

}  // namespace
}  // namespace layerlab::worker
