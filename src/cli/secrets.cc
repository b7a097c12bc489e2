#include "cli/secrets.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "common/secret_text.h"

namespace layerlab::cli {

const char* secret_env_of(std::string_view flag) {
  if (flag == "--store") return kStoreEnv;
  if (flag == "--broker") return kBrokerEnv;
  if (flag == "--token") return kTokenEnv;
  return nullptr;
}

void read_secrets_from_environment(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    for (const char* flag : {"--store", "--broker", "--token"})
      if (CLI::Option* o = sub->get_option_no_throw(flag)) o->envname(secret_env_of(flag));
}

int warn_about_secrets_in_arguments(int argc, const char* const* argv, std::ostream& out) {
  int warned = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string_view flag = arg.substr(0, eq);
    const char* env = secret_env_of(flag);
    if (env == nullptr) continue;
    std::string_view value;
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      continue;  // a flag without its value: CLI11 reports that
    }
    const bool secret = flag == "--token" ? !value.empty() : mask_secrets(value) != value;
    if (!secret) continue;
    out << "layerlab: warning: " << flag << " "
        << (flag == "--token" ? "is a secret" : "has a password")
        << " on the command line, where other users of this machine can read it (ps); set " << env
        << " instead\n";
    ++warned;
  }
  return warned;
}

std::string mask_secret_arguments(std::string text, int argc, const char* const* argv) {
  std::vector<std::pair<std::string, std::string>> hidden;  // as written, as shown
  const auto hide = [&hidden](std::string_view value, bool token) {
    std::string shown = token ? "***" : mask_secrets(value);
    if (!value.empty() && shown != value) hidden.emplace_back(value, std::move(shown));
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    const bool token = arg.substr(0, eq) == "--token";
    if (arg.starts_with("--") && eq != std::string_view::npos)
      hide(arg.substr(eq + 1), token);
    else if (token && i + 1 < argc)
      hide(argv[i + 1], true);
    hide(arg, false);
  }
  for (const char* name : {kStoreEnv, kBrokerEnv, kTokenEnv})
    if (const char* value = std::getenv(name)) hide(value, name == kTokenEnv);
  // The longest first, so that a value inside another is not masked half.
  std::sort(hidden.begin(), hidden.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [written, shown] : hidden)
    for (size_t at = text.find(written); at != std::string::npos;
         at = text.find(written, at + shown.size()))
      text.replace(at, written.size(), shown);
  return text;
}

}  // namespace layerlab::cli
