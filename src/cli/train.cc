// layerlab train: trains one trial from flags or a JSON file and prints its curve.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "common/text_safety.h"
#include "study/trial.h"

namespace layerlab::cli {
namespace {

using nlohmann::json;

struct TrainFlags {
  std::string trial_file;
  std::map<std::string, std::string> values;  // parameter name -> flag text
  std::vector<std::string> switches;          // boolean parameters given as flags
  bool json_output = false;
  bool quiet = false;
  int threads = 1;
  std::string device = "cpu";
};

std::string flag_name(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return "--" + f;
}

// Converts flag text to the JSON type of the parameter's default value, so the typed
// checks (and messages) of TrialSpec::from_json apply to flags as to files.
json typed_value(const std::string& key, const std::string& text, const json& like) {
  try {
    if (like.is_array()) {
      json list = json::array();
      std::stringstream ss(text);
      for (std::string part; std::getline(ss, part, ',');) list.push_back(json::parse(part));
      return list;
    }
    if (like.is_string()) return text;
    return json::parse(text);
  } catch (const json::parse_error&) {
    throw invalid_argument(flag_name(key) + ": cannot read '" + text + "'");
  }
}

json read_trial_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw invalid_argument("--trial: cannot open '" + path + "'");
  // A trial file is flat: deep nesting is refused while parsing (copying or printing a
  // document 100,000 levels deep would recurse that deep).
  constexpr int kMaxDepth = 64;
  const json::parser_callback_t depth_limit = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth)
      throw invalid_argument("--trial " + path + ": nesting deeper than " +
                             std::to_string(kMaxDepth) + " levels");
    return true;
  };
  try {
    return json::parse(in, depth_limit);
  } catch (const json::exception& e) {
    throw invalid_argument("--trial " + path + ": not valid JSON: " + e.what());
  }
}

void print_epoch(std::ostream& os, const nn::EpochRecord& r, int epochs, const nn::Task& task) {
  const char* metric = task.classification() ? "val_accuracy" : "val_rmse";
  os << fmt::format(
      "epoch {:>4}/{}  train_loss {:.4f}  val_loss {:.4f}  {} {:.4f}  lr {:.2e}  {:.3f}s\n",
      r.epoch, epochs, r.train_loss, r.val_loss, metric, r.val_metric, r.learning_rate, r.seconds);
  os.flush();
}

void run(const TrainFlags& flags) {
  const json defaults = study::TrialSpec{}.to_json();
  json given = flags.trial_file.empty() ? json::object() : read_trial_file(flags.trial_file);
  if (!given.is_object())
    throw invalid_argument("--trial " + flags.trial_file + ": expected a JSON object");
  for (const auto& [key, text] : flags.values) given[key] = typed_value(key, text, defaults[key]);
  for (const auto& key : flags.switches) given[key] = true;
  const study::TrialSpec spec = study::TrialSpec::from_json(given);
  std::ostream& log = flags.json_output ? std::cerr : std::cout;
  const study::PreparedData data = study::prepare_data(spec);
  const study::TrialOutcome outcome =
      study::run_trial(spec, data, flags.device, flags.threads, [&](int, const nn::EpochRecord& r) {
        if (!flags.quiet) print_epoch(log, r, spec.params.epochs, data.task);
        return true;
      });
  if (flags.json_output) {
    std::cout << outcome.to_json().dump(2) << "\n";
    return;
  }
  log << "status " << nn::status_name(outcome.result.status);
  if (!outcome.result.message.empty()) log << " (" << printable(outcome.result.message) << ")";
  log << fmt::format(", {} epochs, {:.2f}s\n", outcome.result.epochs.size(),
                     outcome.result.seconds);
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand("train", "Train one trial from flags or a JSON file");
  cmd->add_option("--trial", flags->trial_file,
                  "JSON file of trial parameters (flags given as well override it)");
  const json defaults = study::TrialSpec{}.to_json();
  for (const auto& [key, value] : defaults.items()) {
    const std::string name = flag_name(key);
    if (value.is_boolean()) {
      cmd->add_flag_callback(
          name, [flags, k = key] { flags->switches.push_back(k); }, "Turn on " + key);
    } else {
      cmd->add_option_function<std::string>(
             name, [flags, k = key](const std::string& v) { flags->values[k] = v; },
             key + " (default " + value.dump() + ")")
          ->type_name(value.is_array()    ? "W,W,..."
                      : value.is_string() ? "NAME"
                                          : "NUM");
    }
  }
  cmd->add_flag("--json", flags->json_output, "Print the final result as JSON on stdout");
  cmd->add_flag("-q,--quiet", flags->quiet, "Do not print a line per epoch");
  cmd->add_option("--threads", flags->threads,
                  "CPU threads for the trial's products and element-wise work")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--device", flags->device, "cpu or cuda[:N]");
  cmd->callback([flags] { run(*flags); });
}

}  // namespace layerlab::cli
