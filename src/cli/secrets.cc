#include "cli/secrets.h"

#include "common/strings.h"

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
    const bool secret = flag == "--token" ? !value.empty() : hide_url_password(value) != value;
    if (!secret) continue;
    out << "layerlab: warning: " << flag << " "
        << (flag == "--token" ? "is a secret" : "has a password")
        << " on the command line, where other users of this machine can read it (ps); set " << env
        << " instead\n";
    ++warned;
  }
  return warned;
}

}  // namespace layerlab::cli
