// layerlab report STUDY -o FILE [--format html|json] [--store URL]: the study's findings
// (metric and time against depth, effects, parameter importance, best configurations) as
// one self-contained HTML page or as JSON; `-o -` writes to stdout.
#include "report/report.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "common/error.h"

namespace layerlab::cli {
namespace {

// A file written whole or not at all: the bytes go to PATH.tmp-PID, renamed over PATH by
// commit(); an output that cannot be written fails before any work is done.
class OutputFile {
 public:
  explicit OutputFile(std::string path)
      : path_(std::move(path)), tmp_(path_ + ".tmp-" + std::to_string(::getpid())) {
    if (std::filesystem::is_directory(path_)) fail("is a directory");
    file_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!file_) fail(std::strerror(errno));
  }
  ~OutputFile() {
    if (!committed_) {
      std::error_code ec;
      std::filesystem::remove(tmp_, ec);
    }
  }
  void commit(const std::string& bytes) {
    file_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file_.close();
    if (!file_) fail(std::strerror(errno));
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) fail(ec.message());
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw invalid_argument("-o: cannot write '" + path_ + "': " + why);
  }
  std::string path_, tmp_;
  std::ofstream file_;
  bool committed_ = false;
};

}  // namespace

void add_report_command(CLI::App& app) {
  auto url = std::make_shared<std::string>();
  auto ref = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "report", "A study's findings (depth, time, effects, importance) as HTML or JSON");
  cmd->add_option("study", *ref, "study name or id")->required();
  add_store_option(cmd, *url);
  cmd->add_option("--format", *format,
                  "html (one self-contained file) or json; default: json for a .json file, "
                  "else html");
  cmd->add_option("-o,--output", *output, "file to write; - for stdout")->required();
  cmd->callback([url, ref, format, output] {
    const report::Format f =
        format->empty() ? report::format_for_path(*output) : report::parse_format(*format);
    std::unique_ptr<OutputFile> file;
    if (*output != "-") file = std::make_unique<OutputFile>(*output);
    auto store = open_existing_store(*url);
    const auto s = resolve_study(*store, *ref);
    const std::string text = report::make_report(*store, s, f);
    if (file)
      file->commit(text);
    else
      std::cout << text << std::flush;
  });
}

}  // namespace layerlab::cli
