// RoutePattern: literal segments, "{}" for one segment, a last "{*}" for the rest; matched
// in one pass, so a path of any length costs its length (issue 52: a regex over request data
// recursed once per character and overflowed the stack).
#include "server/route_pattern.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace layerlab::server {
namespace {

using Captures = std::vector<std::string>;

Captures captures_of(const RoutePattern& p, const std::string& path) {
  Captures c;
  EXPECT_TRUE(p.match(path, c)) << p.text() << " should match " << path;
  return c;
}

bool matches(const RoutePattern& p, const std::string& path) {
  Captures c;
  return p.match(path, c);
}

TEST(RoutePattern, LiteralPathsMatchExactly) {
  const RoutePattern p("/api/v1/studies");
  EXPECT_EQ(captures_of(p, "/api/v1/studies"), Captures{"/api/v1/studies"});
  for (const char* other : {"/api/v1/studies/", "/api/v1/studie", "/api/v1/studiess", "/api/v1",
                            "api/v1/studies", "", "/api/v1/studies/1", "//api/v1/studies"})
    EXPECT_FALSE(matches(p, other)) << other;
  const RoutePattern root("/");
  EXPECT_EQ(captures_of(root, "/"), Captures{"/"});
  EXPECT_FALSE(matches(root, "//"));
  EXPECT_FALSE(matches(root, "/x"));
}

TEST(RoutePattern, SegmentsCaptureOneNonEmptySegmentEach) {
  const RoutePattern p("/api/v1/studies/{}/trials");
  EXPECT_EQ(captures_of(p, "/api/v1/studies/12/trials"),
            (Captures{"/api/v1/studies/12/trials", "12"}));
  EXPECT_EQ(captures_of(p, "/api/v1/studies/my-study.v2/trials")[1], "my-study.v2");
  for (const char* other :
       {"/api/v1/studies//trials", "/api/v1/studies/1/2/trials", "/api/v1/studies/1/trials/",
        "/api/v1/studies/1", "/api/v1/studies/1/t"})
    EXPECT_FALSE(matches(p, other)) << other;
  const RoutePattern two("/a/{}/b/{}");
  EXPECT_EQ(captures_of(two, "/a/x/b/y"), (Captures{"/a/x/b/y", "x", "y"}));
  EXPECT_FALSE(matches(two, "/a/x/b/"));
}

TEST(RoutePattern, RestTakesOneOrMoreNonEmptySegments) {
  const RoutePattern p("/js/{*}");
  EXPECT_EQ(captures_of(p, "/js/app.js")[1], "app.js");
  EXPECT_EQ(captures_of(p, "/js/pages/study.js")[1], "pages/study.js");
  for (const char* other : {"/js", "/js/", "/js//app.js", "/js/pages/", "/css/app.js", "/jsx/a"})
    EXPECT_FALSE(matches(p, other)) << other;
}

TEST(RoutePattern, LongPathsAreMatchedWithoutRecursion) {
  const std::string segment(1 << 20, 'a');
  const RoutePattern one("/api/v1/trials/{}");
  EXPECT_EQ(captures_of(one, "/api/v1/trials/" + segment)[1].size(), segment.size());
  std::string many = "/js";
  for (int i = 0; i < 100'000; ++i) many += "/a.b";
  EXPECT_TRUE(matches(RoutePattern("/js/{*}"), many));
}

TEST(RoutePattern, MalformedPatternsAreRefused) {
  EXPECT_THROW(RoutePattern("api"), Error);
  EXPECT_THROW(RoutePattern("/{*}/x"), Error);
}

TEST(RoutePattern, PlainFileNames) {
  for (const char* ok : {"app.js", "a", "study-page_2.min.js", "A9"})
    EXPECT_TRUE(is_plain_file_name(ok)) << ok;
  for (const char* bad : {"", ".", "..", ".hidden", "a..b", "a.", "a/b", "a%2e", "a b", "\xc3\xa9"})
    EXPECT_FALSE(is_plain_file_name(bad)) << bad;
  EXPECT_TRUE(is_plain_file_name(std::string(1 << 20, 'a') + ".js"));
}

}  // namespace
}  // namespace layerlab::server
