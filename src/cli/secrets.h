// Secrets stay off command lines (argv is world-readable through ps and /proc): every
// command's --store, --broker and --token also come from LAYERLAB_STORE, LAYERLAB_BROKER and
// LAYERLAB_TOKEN when the flag is absent, local workers receive the URLs that way, and a
// URL with a password (or a token) given as a flag draws a one-line warning.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::cli {

inline constexpr const char* kStoreEnv = "LAYERLAB_STORE";
inline constexpr const char* kBrokerEnv = "LAYERLAB_BROKER";
inline constexpr const char* kTokenEnv = "LAYERLAB_TOKEN";

// The variable a secret-bearing flag ("--store", "--broker", "--token") is read from when
// absent; nullptr for other flags.
const char* secret_env_of(std::string_view flag);

// Gives every subcommand's --store, --broker and --token option its environment variable.
// Call after the subcommands are added, before parsing.
void read_secrets_from_environment(CLI::App& app);

// Writes one warning line to `out` per --store or --broker value with a password and per
// --token value among the arguments (`--flag VALUE` or `--flag=VALUE`). Returns how many.
int warn_about_secrets_in_arguments(int argc, const char* const* argv, std::ostream& out);

// `text` (a usage error as CLI11 words it, which may quote an argument) with the secrets of
// the arguments and of the three variables masked: a --token value becomes ***, and an
// argument holding a password shows as mask_secrets() writes it.
std::string mask_secret_arguments(std::string text, int argc, const char* const* argv);

}  // namespace layerlab::cli
