// layerlab: the command-line edge. Every exception thrown inside, not only layerlab::Error,
// becomes "layerlab CMD: error: ..." and an exit code: 2 bad input, 3 missing prerequisite,
// 1 anything else (out of memory included); nothing reaches std::terminate.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "cli/commands.h"
#include "cli/secrets.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"

namespace {

int exit_code(layerlab::ErrorCode code) {
  switch (code) {
    case layerlab::ErrorCode::kInvalidArgument:
    case layerlab::ErrorCode::kNotFound:
      return 2;
    case layerlab::ErrorCode::kFailedPrecondition:
      return 3;
    default:
      return 1;
  }
}

// A file the command was pointed at is missing or is not what it should be: bad input (2);
// other file-system failures (permissions, a full disk...) are 1.
int exit_code(const std::filesystem::filesystem_error& e) {
  const std::error_code c = e.code();
  if (c == std::errc::no_such_file_or_directory || c == std::errc::not_a_directory ||
      c == std::errc::is_a_directory || c == std::errc::filename_too_long)
    return 2;
  return 1;
}

// Test hook: LAYERLAB_TEST_CLI_THROW=bad_alloc|json|filesystem|runtime_error|error|other makes
// the command throw that once its arguments are parsed, so tests reach every catch below.
void maybe_throw_for_test() {
  const char* what_env = std::getenv("LAYERLAB_TEST_CLI_THROW");
  if (!what_env) return;
  const std::string_view what = what_env;
  const std::string where = "test hook LAYERLAB_TEST_CLI_THROW";
  if (what == "bad_alloc") throw std::bad_alloc();
  if (what == "json") throw nlohmann::json::parse_error::create(101, 1, where, nullptr);
  if (what == "filesystem")
    throw std::filesystem::filesystem_error(
        where, "/nonexistent/test-hook",
        std::make_error_code(std::errc::no_such_file_or_directory));
  if (what == "runtime_error") throw std::runtime_error(where);
  if (what == "error") throw layerlab::failed_precondition(where);
  if (what == "other") throw 42;  // not a std::exception at all
}

// What `layerlab` alone prints: every subcommand with its one-line description.
std::string command_list(const CLI::App& app) {
  const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  size_t width = 0;
  for (const CLI::App* s : subcommands) width = std::max(width, s->get_name().size());
  std::string out = app.get_description() + "\n\nusage: layerlab COMMAND [ARGS...]\n\ncommands:\n";
  for (const CLI::App* s : subcommands)
    out += "  " + s->get_name() + std::string(width - s->get_name().size() + 2, ' ') +
           s->get_description() + "\n";
  return out +
         "\n`layerlab COMMAND --help` shows a command's options; `layerlab --version` the "
         "version.\n";
}

// argv[1] when it should name a subcommand and names none; "" otherwise.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";  // options (--help, --version) are CLI11's
  const std::string word = argv[1];
  const auto found = app.get_subcommands([&](const CLI::App* s) { return s->check_name(word); });
  return found.empty() ? word : "";
}

std::string did_you_mean(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(s->get_name());
  const std::string hint = layerlab::closest_match(word, names);
  return hint.empty() ? "" : " (did you mean '" + hint + "'?)";
}

}  // namespace

int& layerlab::cli::command_exit_code() {
  static int code = 0;
  return code;
}

int main(int argc, char** argv) {
  CLI::App app{"layerlab: systematic experiments on neural-network design"};
  app.require_subcommand(1);
  app.set_version_flag("--version", LAYERLAB_VERSION);
  layerlab::cli::add_train_command(app);
  layerlab::cli::add_run_command(app);
  layerlab::cli::add_worker_command(app);
  layerlab::cli::add_studies_command(app);
  layerlab::cli::add_status_command(app);
  layerlab::cli::add_trials_command(app);
  layerlab::cli::add_export_command(app);
  layerlab::cli::add_report_command(app);
  layerlab::cli::add_cancel_command(app);
  layerlab::cli::add_serve_command(app);
  layerlab::cli::add_submit_command(app);
  layerlab::cli::add_rerun_command(app);
  layerlab::cli::add_best_command(app);
  layerlab::cli::add_predict_command(app);
  layerlab::cli::add_datasets_command(app);
  app.parse_complete_callback(maybe_throw_for_test);
  // "layerlab CMD": the subcommand that failed (known once the arguments are parsed).
  const auto command = [&app] {
    std::string c = "layerlab";
    for (const CLI::App* sub : app.get_subcommands()) c += " " + sub->get_name();
    return c;
  };
  // A newcomer's first try: the commands, one line each, and exit code 1 (as `git` alone:
  // nothing was done).
  if (argc < 2) {
    std::cout << command_list(app);
    return 1;
  }
  if (argc == 2 && std::string_view(argv[1]) == "help") {  // asked for: a success
    std::cout << command_list(app);
    return 0;
  }
  if (const std::string word = unknown_subcommand(app, argc, argv); !word.empty()) {
    std::cerr << "layerlab: error: '" << layerlab::excerpt(word) << "' is not a layerlab command"
              << did_you_mean(app, word) << "; `layerlab` alone lists the commands\n";
    return 2;
  }
  // An error's message fit for the terminal: control characters escaped, and no secret
  // of the arguments even where it quotes one.
  const auto said = [argc, argv](const char* what) {
    return layerlab::printable(layerlab::cli::mask_secret_arguments(what, argc, argv));
  };
  try {
    layerlab::cli::read_secrets_from_environment(app);
    layerlab::cli::warn_about_secrets_in_arguments(argc, argv, std::cerr);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors, --help and --version: CLI11's messages and codes, with no secret that
    // an error may quote from the arguments.
    std::ostringstream out, err;
    const int code = app.exit(e, out, err);
    std::cout << out.str();
    std::cerr << layerlab::cli::mask_secret_arguments(err.str(), argc, argv);
    return code;
  } catch (const layerlab::Error& e) {
    std::cerr << command() << ": error: " << said(e.what()) << "\n";
    return exit_code(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << command()
              << ": error: out of memory (std::bad_alloc): the command needed more memory than "
                 "the system could give; try a smaller input or free some memory\n";
    return 1;
  } catch (const nlohmann::json::exception& e) {
    // Malformed or unrepresentable JSON data (a file, a stored record, invalid UTF-8).
    std::cerr << command() << ": error: bad JSON data: " << said(e.what()) << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << command() << ": error: " << said(e.what()) << "\n";
    return exit_code(e);
  } catch (const std::exception& e) {
    // Anything else (a library's exception, a system error): a message, not an abort.
    std::cerr << command() << ": error: unexpected error: " << said(e.what()) << "\n";
    return 1;
  } catch (...) {
    std::cerr << command() << ": error: unexpected error: an exception of unknown type\n";
    return 1;
  }
  return layerlab::cli::command_exit_code();
}
