// layerlab datasets [info NAME]: lists the datasets, or loads one and describes it.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/text_safety.h"
#include "data/dataset.h"

namespace layerlab::cli {
namespace {

void list(bool as_json) {
  const auto all = data::describe_datasets();
  if (as_json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : all) out.push_back({{"name", d.name}, {"description", d.description}});
    std::cout << out.dump(2) << "\n";
    return;
  }
  for (const auto& d : all)
    std::cout << fmt::format("{:<16} {}\n", printable(d.name), d.description);
}

void info(const std::string& spec, bool as_json) {
  const data::Dataset d = data::load(spec);
  const bool classification = d.task == data::Task::kClassification;
  if (as_json) {
    std::cout << nlohmann::json{{"name", d.name},
                                {"task", classification ? "classification" : "regression"},
                                {"rows", d.rows},
                                {"features", d.features},
                                {"classes", d.classes},
                                {"targets", d.targets}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format("{}: {} rows, {} features, {}\n", printable(d.name), d.rows, d.features,
                           classification ? fmt::format("{} classes", d.classes)
                                          : fmt::format("regression, {} targets", d.targets));
}

}  // namespace

void add_datasets_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("datasets", "List the datasets, or describe one");
  cmd->add_flag("--json", *as_json, "JSON output");
  CLI::App* info_cmd = cmd->add_subcommand("info", "Load a dataset and describe it");
  info_cmd->add_option("name", *name, "dataset name or spec, e.g. digits, csv:data.csv")
      ->required();
  info_cmd->add_flag("--json", *as_json, "JSON output");
  cmd->callback([cmd, as_json, name] {
    if (cmd->got_subcommand("info"))
      info(*name, *as_json);
    else
      list(*as_json);
  });
}

}  // namespace layerlab::cli
