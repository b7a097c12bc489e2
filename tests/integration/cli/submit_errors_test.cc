// `layerlab submit` against a real `layerlab serve`: the server's refusals become one line,
// "layerlab submit: error: MESSAGE (HTTP STATUS CODE)", never the raw error object, with
// an exit code that fits (2 bad input, 3 a token or name problem, 1 the server's trouble).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <thread>

#include "integration/run_command.h"
#include "integration/server/server_process.h"
#include "support/free_port.h"
#include "support/postgres_service.h"

namespace layerlab {
namespace {

using testing::CommandResult;
using testing::run_layerlab;

constexpr const char* kStudy = R"(name: submitted
datasets: [iris]
parameters:
  hidden_layers: {values: [1, 2]}
  epochs: {value: 1}
)";

struct Files {
  std::filesystem::path dir;
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

CommandResult submit(const std::string& file, const std::string& server,
                     const std::string& extra = "") {
  return run_layerlab("submit " + file + " --server " + server + " " + extra);
}

// One line, starting as it must and ending with "(HTTP ...)", without the JSON object.
void expect_one_line(const CommandResult& r, const std::string& start, const std::string& end) {
  EXPECT_EQ(r.err.rfind("layerlab submit: error: " + start, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  ASSERT_GE(r.err.size(), end.size() + 1);
  EXPECT_EQ(r.err.substr(r.err.size() - end.size() - 1), end + "\n") << r.err;
  EXPECT_EQ(r.err.find("{\"error\""), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\"code\""), std::string::npos) << r.err;
}

TEST(SubmitCommand, AnInvalidStudyFileIsBadInputNamedByItsFileAndLine) {
  const Files f{testing::fresh_dir("submit-400")};
  testing::ServerProcess server("sqlite:" + (f.dir / "s.db").string(), f.dir / "serve");
  const std::string file = f.write("bad.yaml",
                                   "name: x\ndatasets: [iris]\nparameters:\n"
                                   "  hiden_layers: {value: 2}\n");
  const auto r = submit(file, server.base());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_line(r, "", "(HTTP 400 invalid_argument)");
  EXPECT_NE(r.err.find("hidden_layers"), std::string::npos) << "the server's message: " << r.err;
  EXPECT_NE(r.err.find(file + ":4:3"), std::string::npos) << "the file and line: " << r.err;
  EXPECT_EQ(r.err.find("<request body>"), std::string::npos) << r.err;
}

TEST(SubmitCommand, AStudyOverTheBodyLimitIsBadInput) {
  const Files f{testing::fresh_dir("submit-413")};
  testing::ServerProcess server("sqlite:" + (f.dir / "s.db").string(), f.dir / "serve");
  const std::string file = f.write("huge.yaml", "# " + std::string(3 << 20, 'x') + "\n" + kStudy);
  const auto r = submit(file, server.base());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_line(r, "", "(HTTP 413 payload_too_large)");
}

TEST(SubmitCommand, AMissingOrWrongTokenAndADuplicateNameExitThree) {
  const Files f{testing::fresh_dir("submit-401")};
  testing::ServerProcess server("sqlite:" + (f.dir / "s.db").string(), f.dir / "serve",
                                "--token s3cret");
  const std::string file = f.write("study.yaml", kStudy);
  auto r = submit(file, server.base());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  expect_one_line(r, "", "(HTTP 401 unauthenticated)");
  r = run_layerlab("submit " + file + " --server " + server.base(), "LAYERLAB_TOKEN=guess");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  expect_one_line(r, "", "(HTTP 401 unauthenticated)");

  r = run_layerlab("submit " + file + " --server " + server.base(), "LAYERLAB_TOKEN=s3cret");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("submitted study 'submitted' (id 1, 2 trials)"), std::string::npos) << r.out;
  r = run_layerlab("submit " + file + " --server " + server.base(), "LAYERLAB_TOKEN=s3cret");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  expect_one_line(r, "", "(HTTP 409 failed_precondition)");
  EXPECT_NE(r.err.find("submitted"), std::string::npos) << r.err;
}

// The server's store is away: 503, the server's trouble (exit 1), worth retrying.
TEST(SubmitCommand, AServerWhoseStoreIsAwayExitsOne) {
  testing::PostgresService pg;  // private: this test stops it
  const Files f{testing::fresh_dir("submit-503")};
  testing::ServerProcess server(pg.url_of(pg.fresh_database()), f.dir / "serve");
  pg.stop();
  const auto r = submit(f.write("study.yaml", kStudy), server.base());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line(r, "", "(HTTP 503 unavailable)");
}

// What a proxy in front of the server might answer: not the API's error object. Quoted,
// shortened, on one line.
TEST(SubmitCommand, AnAnswerThatIsNotTheApisIsQuotedOnOneLine) {
  httplib::Server proxy;
  proxy.Post("/api/v1/studies", [](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("<html>\n<h1>Bad Gateway</h1>\n" + std::string(5000, '.') + "</html>",
                    "text/html");
  });
  const int port = proxy.bind_to_any_port("127.0.0.1");
  std::thread serving(
      [&] { proxy.listen_after_bind(); });  // bound: connections wait in the backlog
  const Files f{testing::fresh_dir("submit-502")};
  const auto r = submit(f.write("study.yaml", kStudy), "http://127.0.0.1:" + std::to_string(port));
  proxy.stop();
  serving.join();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line(r, "the server answered: <html>\\n<h1>Bad Gateway</h1>", "(HTTP 502)");
  EXPECT_LT(r.err.size(), 500u) << "shortened";
}

TEST(SubmitCommand, NoServerThereExitsOne) {
  const Files f{testing::fresh_dir("submit-refused")};
  const auto r = submit(f.write("study.yaml", kStudy),
                        "http://127.0.0.1:" + std::to_string(testing::free_port()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("is `layerlab serve` running there?"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace layerlab
