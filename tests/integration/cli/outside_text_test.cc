// What the CLI prints that it did not write itself: no password or token from its
// arguments in any message (usage errors included), names from files and servers with
// their control characters escaped, and a server's answer read only up to a bound.
#include <gtest/gtest.h>

#include <fstream>

#include "integration/run_command.h"
#include "support/canned_http.h"

namespace layerlab {
namespace {

using testing::CommandResult;
using testing::run_layerlab;

constexpr const char* kSecret = "s3cr";

void expect_no_secret(const CommandResult& r) {
  EXPECT_EQ(r.out.find(kSecret), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find(kSecret), std::string::npos) << r.err;
}

// No terminal escape, no forged line: ESC, BEL and CR never reach the terminal raw.
void expect_no_control_characters(const std::string& text) {
  for (const char c : {'\x1b', '\x07', '\r'})
    EXPECT_EQ(text.find(c), std::string::npos) << "raw byte " << int(c) << " in: " << text;
}

TEST(OutsideText, AStoreUrlWhereNoneIsExpectedIsShownMasked) {
  const CommandResult r = run_layerlab("submit x --store 'postgresql://u:s3cr#t@127.0.0.1:1/db'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("postgresql://u:***@127.0.0.1:1/db"), std::string::npos) << r.err;
  expect_no_secret(r);
}

TEST(OutsideText, ATokenWhereNoneIsExpectedIsShownMasked) {
  const auto dir = testing::fresh_dir("token-extra");
  const CommandResult r =
      run_layerlab("studies --store sqlite:" + (dir / "s.db").string() + " --token s3cr#tok");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("***"), std::string::npos) << r.err;
  expect_no_secret(r);
}

// libpq's own message for a URL it cannot read quotes the bad piece, here the password.
TEST(OutsideText, AStoreUrlLibpqCannotReadIsRefusedWithoutItsPassword) {
  const CommandResult r = run_layerlab("studies --store 'postgresql://u:s3cr%zz@127.0.0.1:1/db'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("libpq cannot read"), std::string::npos) << r.err;
  expect_no_secret(r);
}

TEST(OutsideText, ABrokerUrlThatCannotBeParsedIsShownMasked) {
  const auto dir = testing::fresh_dir("bad-broker");
  const CommandResult r = run_layerlab("worker --store sqlite:" + (dir / "s.db").string() +
                                       " --broker 'amqp://u:s3cr#t@h:notaport/v'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("amqp://u:***@h:notaport/v"), std::string::npos) << r.err;
  expect_no_secret(r);
}

// A data file's name is the user's, but may come from anywhere (an archive, a download).
TEST(OutsideText, ADatasetNameIsPrintedEscaped) {
  const auto dir = testing::fresh_dir("escaped-name");
  const std::string name = "d\x1b]0;owned\x07\r\nforged.csv";
  std::ofstream(dir / name) << "f0,f1,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n";
  const CommandResult r = run_layerlab("datasets info 'csv:" + (dir / name).string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("d\\x1b]0;owned\\x07\\r\\nforged.csv"), std::string::npos) << r.out;
  expect_no_control_characters(r.out + r.err);
}

TEST(OutsideText, AStudyNameFromTheServerIsPrintedEscaped) {
  const auto dir = testing::fresh_dir("escaped-answer");
  std::ofstream(dir / "s.yaml") << "name: s\n";
  const std::string answer = R"({"name": "n\u001b]0;owned\u0007\r\nforged", "id": 1, "total": 2})";
  testing::CannedHttpServer server("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n",
                                   answer, answer.size());
  const CommandResult r =
      run_layerlab("submit " + (dir / "s.yaml").string() + " --server " + server.url());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("n\\x1b]0;owned\\x07\\r\\nforged"), std::string::npos) << r.out;
  expect_no_control_characters(r.out + r.err);
}

// 300 MB of error body: submit reads its bound, says so, and closes the connection.
TEST(OutsideText, SubmitStopsReadingAHugeAnswer) {
  const auto dir = testing::fresh_dir("huge-answer");
  std::ofstream(dir / "s.yaml") << "name: s\n";
  constexpr size_t kHuge = size_t{300} << 20;
  testing::CannedHttpServer server("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n",
                                   "\x1b]0;owned\x07", kHuge);
  const CommandResult r =
      run_layerlab("submit " + (dir / "s.yaml").string() + " --server " + server.url());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the rest was not read"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  expect_no_control_characters(r.err);
  EXPECT_LT(server.body_sent(), kHuge) << "submit read the whole answer";
}

}  // namespace
}  // namespace layerlab
