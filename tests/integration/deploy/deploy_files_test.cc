// The deploy/ examples (Dockerfile, docker-compose, Kubernetes, Slurm, README) are not run
// on the build machine (no Docker engine, no cluster), so this test keeps them honest
// another way: it extracts every `layerlab ...` invocation from them and checks, against
// the built binary's --help, that each subcommand exists and that every flag it uses is one
// that subcommand accepts. It also checks that the compose and Kubernetes files agree with
// themselves: URLs name services and ports that exist, Services select pods and ports that
// exist, the server listens where its port is published, Secret keys exist.
//
// What counts as an invocation: in shell-like text (Dockerfile, sbatch, README code blocks),
// `layerlab` or `.../layerlab` where a command starts (line start, after `&&`, `|`, `;`,
// `RUN`, `exec`, `srun OPTS`, ...), or an image reference `layerlab:TAG` followed by a
// subcommand (`docker run layerlab:0.1.0 worker ...`); in prose (comments, README text), a
// code span starting with `layerlab`; in YAML, a container's command/args (the image's
// ENTRYPOINT is `layerlab`, so a compose `command:` or a Kubernetes `args:` starts with the
// subcommand).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace layerlab {
namespace {

namespace fs = std::filesystem;

// ---- the binary's command-line surface, from its --help ---------------------------------

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  return out;
}

// Flags listed in the "Options:" part of a CLI11 help text ("  -w,--workers INT ...").
std::set<std::string> flags_in_help(const std::string& help) {
  std::set<std::string> flags;
  static const std::regex option_line(R"(^\s+(-[A-Za-z0-9],)?(--[A-Za-z0-9][A-Za-z0-9-]*))");
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, option_line)) continue;
    if (m[1].matched) flags.insert(m[1].str().substr(0, 2));
    flags.insert(m[2].str());
  }
  return flags;
}

struct Cli {
  std::set<std::string> top_flags;
  std::map<std::string, std::set<std::string>> subcommands;  // name -> its flags
  bool has(const std::string& sub) const { return subcommands.count(sub) > 0; }
};

// Reads `layerlab --help` and `layerlab SUB --help` for each subcommand it lists.
Cli read_cli(const std::string& binary) {
  Cli cli;
  const std::string help = capture(binary + " --help");
  cli.top_flags = flags_in_help(help);
  std::istringstream lines(help);
  std::string line;
  bool in_subcommands = false;
  static const std::regex sub_line(R"(^\s+([a-z][a-z0-9-]*)\s)");
  while (std::getline(lines, line)) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_subcommands = true;
      continue;
    }
    std::smatch m;
    if (in_subcommands && std::regex_search(line, m, sub_line)) {
      const std::string sub = m[1];
      const std::string sub_help = capture(binary + " " + sub + " --help");
      // CLI11 answers an unknown subcommand with the top-level help: make sure this is the
      // subcommand's own.
      if (sub_help.find(" " + sub + " [OPTIONS]") != std::string::npos)
        cli.subcommands[sub] = flags_in_help(sub_help);
    } else if (in_subcommands && !line.empty() && line[0] != ' ') {
      in_subcommands = false;
    }
  }
  return cli;
}

const Cli& binary_cli() {
  static const Cli cli = read_cli(LAYERLAB_BINARY);
  return cli;
}

// ---- invocations -------------------------------------------------------------------------

struct Invocation {
  std::string where;              // file:line (or file: service/container)
  std::vector<std::string> args;  // after `layerlab`
  // Strict: the first argument must be a subcommand or a flag (shell code, YAML). Not
  // strict: found in prose or after an image reference; only checked when the first
  // argument is a known subcommand.
  bool strict = true;
};

std::string trim_punct(std::string s, const std::string& lead, const std::string& trail) {
  while (!s.empty() && lead.find(s.front()) != std::string::npos) s.erase(0, 1);
  while (!s.empty() && trail.find(s.back()) != std::string::npos) s.pop_back();
  return s;
}

// The flag a token spells ("--store", "--store=URL", "[--broker", "-q"), if any.
std::optional<std::string> flag_of(const std::string& token) {
  static const std::regex long_flag(R"(^[\[(`'"]*(--[A-Za-z][A-Za-z0-9-]*))");
  static const std::regex short_flag(R"(^[\[(`'"]*(-[A-Za-z])([\],`'"]*)$)");
  std::smatch m;
  if (std::regex_search(token, m, long_flag)) return m[1].str();
  if (std::regex_match(token, m, short_flag)) return m[1].str();
  return std::nullopt;
}

// What is wrong with one invocation (empty: nothing).
std::vector<std::string> check(const Invocation& inv, const Cli& cli) {
  std::vector<std::string> problems;
  const std::string cmd = "`layerlab" +
                          [&] {
                            std::string s;
                            for (const auto& a : inv.args) s += " " + a;
                            return s;
                          }() +
                          "` (" + inv.where + ")";
  if (inv.args.empty()) return problems;
  const std::string first = trim_punct(inv.args[0], "`'\"([", "`'\",.:;)]");
  const std::set<std::string>* flags = nullptr;
  size_t from = 0;
  if (cli.has(first)) {
    flags = &cli.subcommands.at(first);
    from = 1;
  } else if (!inv.strict) {
    return problems;  // `docker build -t layerlab:1 .`, `kubectl ... generic layerlab`
  } else if (flag_of(inv.args[0])) {
    flags = &cli.top_flags;
  } else {
    // A word where a subcommand goes; placeholders (`layerlab ...`, `layerlab "$@"`) pass.
    static const std::regex word(R"(^[a-z][a-z0-9-]*$)");
    if (std::regex_match(first, word))
      problems.push_back("unknown subcommand '" + first + "' in " + cmd);
    return problems;
  }
  for (size_t i = from; i < inv.args.size(); ++i) {
    const auto flag = flag_of(inv.args[i]);
    if (flag && !flags->count(*flag))
      problems.push_back("flag " + *flag + " is not in `layerlab " +
                         (from ? first + " " : std::string()) + "--help`: " + cmd);
  }
  return problems;
}

// Shell words of one logical line: quotes removed, operators as their own words, a
// `$(...)` kept whole; stops at an unquoted comment.
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool have = false;
  auto flush = [&] {
    if (have) words.push_back(cur);
    cur.clear();
    have = false;
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      const size_t end = line.find('\'', i + 1);
      cur += line.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
      have = true;
      if (end == std::string::npos) break;
      i = end;
    } else if (c == '"') {
      have = true;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) ++i;
        cur += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      have = true;
    } else if (c == '$' && i + 1 < line.size() && (line[i + 1] == '(' || line[i + 1] == '{')) {
      const char close = line[i + 1] == '(' ? ')' : '}';
      const size_t end = line.find(close, i);
      cur += line.substr(i, end == std::string::npos ? std::string::npos : end - i + 1);
      have = true;
      if (end == std::string::npos) break;
      i = end;
    } else if (c == ' ' || c == '\t') {
      flush();
    } else if (c == '#' && !have) {
      break;
    } else if (std::string("|&;<>()").find(c) != std::string::npos) {
      flush();
      std::string op(1, c);
      while (i + 1 < line.size() && std::string("|&;<>").find(line[i + 1]) != std::string::npos)
        op += line[++i];
      words.push_back(op);
    } else {
      cur += c;
      have = true;
    }
  }
  flush();
  return words;
}

bool is_operator(const std::string& w) {
  return !w.empty() && std::string("|&;<>()").find(w[0]) != std::string::npos;
}
bool is_command_head(const std::string& w) {
  return w == "layerlab" || (w.size() > 9 && w.ends_with("/layerlab"));
}
bool is_image_head(const std::string& w) {
  static const std::regex image(R"(^([\w.-]+(:\d+)?/)*layerlab:[\w.-]+$)");
  return std::regex_match(w, image);
}

// Invocations in one logical line of shell code.
void shell_invocations(const std::string& line, const std::string& where,
                       std::vector<Invocation>& out) {
  static const std::set<std::string> wrappers = {"exec", "sudo",   "time",    "nohup", "env",
                                                 "srun", "mpirun", "command", "RUN"};
  const auto words = shell_words(line);
  bool command_position = true;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (is_operator(w)) {
      command_position = true;
      continue;
    }
    const bool head = is_command_head(w) || is_image_head(w);
    if (head) {
      Invocation inv{where, {}, command_position && is_command_head(w)};
      size_t j = i + 1;
      for (; j < words.size() && !is_operator(words[j]); ++j) inv.args.push_back(words[j]);
      out.push_back(inv);
      i = j - 1;
      command_position = false;
      continue;
    }
    if (command_position && wrappers.count(w)) {
      // `srun --opt=v layerlab ...`, `env A=1 layerlab ...`: still the command position.
      while (i + 1 < words.size() &&
             (words[i + 1].starts_with("-") || words[i + 1].find('=') != std::string::npos))
        ++i;
      continue;
    }
    if (command_position && w.find('=') != std::string::npos && w[0] != '-') continue;
    command_position = false;
  }
}

// Invocations in prose: code spans that start with `layerlab (up to the closing backtick).
void prose_invocations(const std::string& line, const std::string& where,
                       std::vector<Invocation>& out) {
  size_t at = 0;
  while ((at = line.find("`layerlab", at)) != std::string::npos) {
    const size_t end = line.find('`', at + 1);
    const std::string span =
        line.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    shell_invocations(span, where, out);
    if (end == std::string::npos) break;
    at = end + 1;
  }
}

// Joins backslash-continued lines; returns (first line number, text) pairs.
std::vector<std::pair<int, std::string>> logical_lines(const std::string& text) {
  std::vector<std::pair<int, std::string>> lines;
  std::istringstream in(text);
  std::string line, acc;
  int n = 0, first = 0;
  while (std::getline(in, line)) {
    ++n;
    if (acc.empty()) first = n;
    const bool cont = !line.empty() && line.back() == '\\';
    acc += cont ? line.substr(0, line.size() - 1) + " " : line;
    if (!cont) {
      lines.emplace_back(first, acc);
      acc.clear();
    }
  }
  if (!acc.empty()) lines.emplace_back(first, acc);
  return lines;
}

bool is_comment(const std::string& line) {
  const auto p = line.find_first_not_of(" \t");
  return p != std::string::npos && line[p] == '#';
}

// A comment line: an indented example command ("#   docker run ...") is read as code,
// other comments as prose.
void comment_invocations(const std::string& line, const std::string& where,
                         std::vector<Invocation>& out) {
  const std::string text = line.substr(line.find('#') + 1);
  if (text.rfind("  ", 0) == 0)
    shell_invocations(text, where, out);
  else
    prose_invocations(text, where, out);
}

// Shell scripts, sbatch files, Dockerfiles: code lines strictly, then the comments.
std::vector<Invocation> from_shell_text(const std::string& text, const std::string& name) {
  std::vector<Invocation> out;
  for (const auto& [n, line] : logical_lines(text)) {
    const std::string where = name + ":" + std::to_string(n);
    if (is_comment(line))
      comment_invocations(line, where, out);
    else
      shell_invocations(line, where, out);
  }
  return out;
}

// The comments of a YAML file (the rest is read as YAML).
std::vector<Invocation> from_yaml_comments(const std::string& text, const std::string& name) {
  std::vector<Invocation> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (is_comment(line)) comment_invocations(line, name + ":" + std::to_string(n), out);
  return out;
}

// A JSON-array instruction of a Dockerfile (ENTRYPOINT ["layerlab"]), as words.
std::vector<std::string> dockerfile_words(const std::string& rest) {
  std::vector<std::string> words;
  try {
    const YAML::Node node = YAML::Load(rest);  // a JSON array is YAML
    if (node.IsSequence()) {
      for (const auto& w : node) words.push_back(w.as<std::string>());
      return words;
    }
  } catch (const YAML::Exception&) {
  }
  return shell_words(rest);
}

struct Dockerfile {
  std::vector<Invocation> invocations;
  std::vector<std::string> entrypoint;  // of the last stage
};

Dockerfile from_dockerfile(const std::string& text, const std::string& name) {
  Dockerfile d;
  d.invocations = from_shell_text(text, name);
  std::vector<std::string> cmd;
  int cmd_line = 0;
  for (const auto& [n, line] : logical_lines(text)) {
    if (line.rfind("FROM ", 0) == 0) {
      d.entrypoint.clear();
      cmd.clear();
    } else if (line.rfind("ENTRYPOINT ", 0) == 0) {
      d.entrypoint = dockerfile_words(line.substr(11));
    } else if (line.rfind("CMD ", 0) == 0) {
      cmd = dockerfile_words(line.substr(4));
      cmd_line = n;
    }
  }
  if (d.entrypoint == std::vector<std::string>{"layerlab"} && cmd_line)
    d.invocations.push_back({name + ":" + std::to_string(cmd_line) + " (ENTRYPOINT + CMD)", cmd});
  return d;
}

// README: fenced code blocks as shell code, the rest as prose.
std::vector<Invocation> from_markdown(const std::string& text, const std::string& name) {
  std::vector<Invocation> out;
  bool in_code = false;
  std::string lang;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  std::string block;
  int block_start = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      if (in_code) {
        if (lang.empty() || lang == "sh" || lang == "bash" || lang == "shell" ||
            lang == "console") {
          for (auto& inv : from_shell_text(block, name)) {
            // renumber: block lines are relative to the block
            const auto colon = inv.where.rfind(':');
            inv.where =
                name + ":" + std::to_string(block_start + std::stoi(inv.where.substr(colon + 1)));
            out.push_back(inv);
          }
        }
        block.clear();
      } else {
        lang = line.substr(3);
        block_start = n;
      }
      in_code = !in_code;
      continue;
    }
    if (in_code)
      block += line + "\n";
    else
      prose_invocations(line, name + ":" + std::to_string(n), out);
  }
  return out;
}

std::vector<std::string> yaml_words(const YAML::Node& node) {
  std::vector<std::string> words;
  if (!node) return words;
  if (node.IsSequence()) {
    for (const auto& w : node) words.push_back(w.as<std::string>());
  } else if (node.IsScalar()) {
    words = shell_words(node.as<std::string>());
  }
  return words;
}

bool is_layerlab_image(const std::string& image) {
  return is_image_head(image);
}

// A mapping with its YAML merge keys (`<<: *anchor`) applied; yaml-cpp leaves them as
// plain keys.
YAML::Node merged(const YAML::Node& node) {
  if (!node.IsMap() || !node["<<"]) return node;
  YAML::Node out(YAML::NodeType::Map);
  auto take = [&](const YAML::Node& from) {
    for (const auto& kv : from) out[kv.first.as<std::string>()] = kv.second;
  };
  if (node["<<"].IsSequence())
    for (const auto& base : node["<<"]) take(merged(base));
  else
    take(merged(node["<<"]));
  for (const auto& kv : node)
    if (kv.first.as<std::string>() != "<<") out[kv.first.as<std::string>()] = kv.second;
  return out;
}

// The services of a compose file, merge keys applied.
std::map<std::string, YAML::Node> compose_services(const YAML::Node& doc) {
  std::map<std::string, YAML::Node> services;
  for (const auto& s : doc["services"]) services[s.first.as<std::string>()] = merged(s.second);
  return services;
}

// An invocation from a container's entrypoint/command override and arguments; `override`
// replaces the image's ENTRYPOINT (`layerlab`).
void container_invocation(const std::vector<std::string>& override_words,
                          const std::vector<std::string>& args, const std::string& where,
                          std::vector<Invocation>& out) {
  if (override_words.empty()) {
    out.push_back({where, args, true});
    return;
  }
  std::string line;
  for (const auto& w : override_words) line += "'" + w + "' ";
  for (const auto& w : args) line += "'" + w + "' ";
  shell_invocations(line, where, out);
}

// docker-compose: each service's command (list or string) on the layerlab image.
std::vector<Invocation> from_compose(const YAML::Node& doc, const std::string& name) {
  std::vector<Invocation> out;
  for (const auto& [sname, s] : compose_services(doc)) {
    const std::string image = s["image"] ? s["image"].as<std::string>() : "";
    const std::string where = name + ": services." + sname;
    if (is_layerlab_image(image))
      container_invocation(yaml_words(s["entrypoint"]), yaml_words(s["command"]), where, out);
    else if (s["command"])
      shell_invocations(s["command"].IsScalar() ? s["command"].as<std::string>() : "", where, out);
  }
  return out;
}

// The pod spec of a Kubernetes workload (Deployment, StatefulSet, Job, ...); an undefined
// node for anything else.
YAML::Node pod_spec(const YAML::Node& doc) {
  const YAML::Node spec = doc["spec"];
  if (spec && spec["template"] && spec["template"]["spec"]) return spec["template"]["spec"];
  if (spec && spec["jobTemplate"] && spec["jobTemplate"]["spec"]["template"]["spec"])
    return spec["jobTemplate"]["spec"]["template"]["spec"];
  return YAML::Node(YAML::NodeType::Undefined);
}

std::vector<Invocation> from_k8s(const std::vector<YAML::Node>& docs, const std::string& name) {
  std::vector<Invocation> out;
  for (const auto& doc : docs) {
    const YAML::Node spec = pod_spec(doc);
    if (!spec) continue;
    for (const char* kind : {"initContainers", "containers"}) {
      for (const auto& c : spec[kind]) {
        const std::string where = name + ": " + doc["metadata"]["name"].as<std::string>() + "/" +
                                  c["name"].as<std::string>();
        const std::string image = c["image"].as<std::string>();
        if (is_layerlab_image(image))
          container_invocation(yaml_words(c["command"]), yaml_words(c["args"]), where, out);
        else
          shell_invocations(
              [&] {
                std::string line;
                for (const auto& w : yaml_words(c["command"])) line += "'" + w + "' ";
                return line;
              }(),
              where, out);
      }
    }
  }
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const fs::path kDeploy = fs::path(LAYERLAB_SOURCE_DIR) / "deploy";

std::vector<YAML::Node> load_all(const fs::path& p) {
  return YAML::LoadAllFromFile(p.string());
}

std::vector<fs::path> k8s_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kDeploy / "k8s"))
    if (e.path().extension() == ".yaml" || e.path().extension() == ".yml")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Every invocation in every deploy file.
std::vector<Invocation> all_invocations() {
  std::vector<Invocation> all;
  auto add = [&](std::vector<Invocation> v) { all.insert(all.end(), v.begin(), v.end()); };
  add(from_dockerfile(read_text(kDeploy / "Dockerfile"), "deploy/Dockerfile").invocations);
  const fs::path compose = kDeploy / "docker-compose.yml";
  add(from_compose(YAML::LoadFile(compose.string()), "deploy/docker-compose.yml"));
  add(from_yaml_comments(read_text(compose), "deploy/docker-compose.yml"));
  for (const auto& f : k8s_files()) {
    const std::string name = "deploy/k8s/" + f.filename().string();
    add(from_k8s(load_all(f), name));
    add(from_yaml_comments(read_text(f), name));
  }
  add(from_shell_text(read_text(kDeploy / "slurm" / "workers.sbatch"),
                      "deploy/slurm/workers.sbatch"));
  add(from_markdown(read_text(kDeploy / "README.md"), "deploy/README.md"));
  return all;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "  " + x + "\n";
  return s;
}

std::vector<std::string> problems_of(const std::vector<Invocation>& invs) {
  std::vector<std::string> problems;
  for (const auto& inv : invs)
    for (auto& p : check(inv, binary_cli())) problems.push_back(p);
  return problems;
}

// The subcommands (first words) the strict invocations of files under a prefix use,
// whether or not the binary has them.
std::set<std::string> subcommands_in(const std::vector<Invocation>& invs, const std::string& file) {
  std::set<std::string> subs;
  static const std::regex word(R"(^[a-z][a-z0-9-]*$)");
  for (const auto& inv : invs)
    if (inv.where.rfind(file, 0) == 0 && inv.strict && !inv.args.empty() &&
        std::regex_match(inv.args[0], word))
      subs.insert(inv.args[0]);
  return subs;
}

// ---- the binary ----------------------------------------------------------------------------

TEST(DeployFiles, TheBinaryListsItsSubcommandsAndFlags) {
  const Cli& cli = binary_cli();
  for (const char* sub : {"run", "worker", "serve"}) EXPECT_TRUE(cli.has(sub)) << sub;
  ASSERT_TRUE(cli.has("worker"));
  EXPECT_TRUE(cli.subcommands.at("worker").count("--store"));
  EXPECT_TRUE(cli.subcommands.at("worker").count("-q"));
  EXPECT_TRUE(cli.top_flags.count("--version"));
}

// ---- every command in deploy/ exists ------------------------------------------------------

TEST(DeployFiles, EveryLayerlabCommandUsesRealSubcommandsAndFlags) {
  const auto invs = all_invocations();
  const auto problems = problems_of(invs);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problem(s):\n" << joined(problems);
}

TEST(DeployFiles, TheExtractionFindsTheCommandsOfEveryFile) {
  // So that a parser that silently finds nothing cannot pass the test above.
  const auto invs = all_invocations();
  using S = std::set<std::string>;
  EXPECT_EQ(subcommands_in(invs, "deploy/docker-compose.yml"), (S{"serve", "worker"}));
  EXPECT_EQ(subcommands_in(invs, "deploy/k8s/"), (S{"serve", "worker"}));
  EXPECT_TRUE(subcommands_in(invs, "deploy/slurm/workers.sbatch").count("worker"));
  EXPECT_TRUE(subcommands_in(invs, "deploy/README.md").count("submit"));
  EXPECT_TRUE(subcommands_in(invs, "deploy/Dockerfile").count("worker"));
  size_t dockerfile_cmd = 0;
  for (const auto& inv : invs)
    if (inv.where.find("(ENTRYPOINT + CMD)") != std::string::npos) ++dockerfile_cmd;
  EXPECT_EQ(dockerfile_cmd, 1u);
}

TEST(DeployFiles, DockerfileEntrypointIsLayerlab) {
  // compose `command:` and Kubernetes `args:` start with the subcommand because of this.
  const auto d = from_dockerfile(read_text(kDeploy / "Dockerfile"), "deploy/Dockerfile");
  EXPECT_EQ(d.entrypoint, std::vector<std::string>{"layerlab"});
}

// ---- the checker itself catches what it should (in-memory files) --------------------------

std::vector<std::string> problems_in_compose(const std::string& yaml) {
  return problems_of(from_compose(YAML::Load(yaml), "inline-compose"));
}

TEST(DeployChecker, FindsAFlagTheBinaryDoesNotHave) {
  const auto list_form = problems_in_compose(R"(
services:
  worker:
    image: layerlab:0.1.0
    command: ["worker", "--store", "sqlite:x.db", "--no-such-flag", "3"]
)");
  ASSERT_EQ(list_form.size(), 1u) << joined(list_form);
  EXPECT_NE(list_form[0].find("--no-such-flag"), std::string::npos) << list_form[0];

  const auto string_form = problems_in_compose(R"(
services:
  worker:
    image: registry.example.com:5000/team/layerlab:latest
    command: >-
      worker --store sqlite:x.db
      --frobnicate=2
)");
  ASSERT_EQ(string_form.size(), 1u) << joined(string_form);
  EXPECT_NE(string_form[0].find("--frobnicate"), std::string::npos);

  const auto block_list = problems_in_compose(R"(
services:
  server:
    image: layerlab:0.1.0
    command:
      - serve
      - --bind
      - 0.0.0.0:8080
      - --tokn
      - t
)");
  ASSERT_EQ(block_list.size(), 1u) << joined(block_list);
  EXPECT_NE(block_list[0].find("--tokn"), std::string::npos);
}

TEST(DeployChecker, FindsAnUnknownSubcommand) {
  const auto in_compose = problems_in_compose(R"(
services:
  w:
    image: layerlab:0.1.0
    command: ["wroker", "--store", "sqlite:x.db"]
)");
  ASSERT_EQ(in_compose.size(), 1u) << joined(in_compose);
  EXPECT_NE(in_compose[0].find("wroker"), std::string::npos);

  const auto in_script = problems_of(from_shell_text(
      "#!/bin/bash\nset -e\nexec srun --ntasks=1 layerlab frobnicate --store x\n", "inline.sh"));
  ASSERT_EQ(in_script.size(), 1u) << joined(in_script);
  EXPECT_NE(in_script[0].find("frobnicate"), std::string::npos);
}

TEST(DeployChecker, ReadsShellLinesCommentsAndKubernetesArgs) {
  const std::string script =
      "# run `layerlab worker --bogus-in-comment` by hand\n"
      "srun --cpus-per-task=4 \\\n"
      "  layerlab worker --store \"$S\" \\\n"
      "  --bogus-continued 1 && echo done --not-a-layerlab-flag\n"
      "kubectl create secret generic layerlab --from-literal=x=y\n"
      "docker build -t layerlab:1 -f deploy/Dockerfile .\n"
      "docker run --rm layerlab:1 worker --bogus-image-arg\n"
      "LAYERLAB_X=1 ./build/release/src/cli/layerlab --bogus-top\n";
  const auto problems = problems_of(from_shell_text(script, "inline.sh"));
  const std::string all = joined(problems);
  EXPECT_EQ(problems.size(), 4u) << all;
  for (const char* f :
       {"--bogus-in-comment", "--bogus-continued", "--bogus-image-arg", "--bogus-top"})
    EXPECT_NE(all.find(f), std::string::npos) << f << "\n" << all;
  EXPECT_EQ(all.find("--not-a-layerlab-flag"), std::string::npos) << all;
  EXPECT_EQ(all.find("--from-literal"), std::string::npos) << all;

  const auto k8s = problems_of(from_k8s(YAML::LoadAll(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: w}
spec:
  template:
    spec:
      containers:
        - name: a
          image: layerlab:0.1.0
          args: ["worker", "--slots", "2", "--bad-arg"]
        - name: b
          image: layerlab:0.1.0
          command: ["/usr/local/bin/layerlab", "serve"]
          args: ["--bad-command-arg"]
)"),
                                        "inline-k8s"));
  EXPECT_EQ(k8s.size(), 2u) << joined(k8s);
  EXPECT_NE(joined(k8s).find("--bad-arg"), std::string::npos);
  EXPECT_NE(joined(k8s).find("--bad-command-arg"), std::string::npos);
}

// ---- compose and Kubernetes agree with themselves -----------------------------------------

struct HostPort {
  std::string scheme, host;
  int port = 0;
};

// postgresql://user:pass@host:port/db, amqp://user:pass@host:port/vhost (in any word).
std::vector<HostPort> urls_in(const std::string& text) {
  std::vector<HostPort> urls;
  static const std::regex url(R"((postgresql|postgres|amqp)://[^\s"'@]*@([A-Za-z0-9.-]+):(\d+))");
  for (std::sregex_iterator it(text.begin(), text.end(), url), end; it != end; ++it)
    urls.push_back({(*it)[1], (*it)[2], std::stoi((*it)[3])});
  return urls;
}

// The port of a --bind HOST:PORT among the arguments (0 if none).
int bind_port(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string v;
    if (args[i] == "--bind" && i + 1 < args.size()) v = args[i + 1];
    if (args[i].rfind("--bind=", 0) == 0) v = args[i].substr(7);
    if (!v.empty()) return std::stoi(v.substr(v.rfind(':') + 1));
  }
  return 0;
}

std::string scalar_text(const YAML::Node& n) {
  std::string s;
  for (const auto& w : yaml_words(n)) s += w + " ";
  return s;
}

TEST(DeployFiles, ComposeServicesAgree) {
  auto services = compose_services(YAML::LoadFile((kDeploy / "docker-compose.yml").string()));
  for (const char* s : {"postgres", "rabbitmq", "server", "worker"})
    ASSERT_TRUE(services.count(s)) << s;
  std::set<std::string> layerlab_images;
  for (const auto& [name, svc] : services) {
    const std::string image = svc["image"].as<std::string>("");
    if (!is_layerlab_image(image)) continue;
    layerlab_images.insert(image);
    const auto args = yaml_words(svc["command"]);
    // URLs point at a service of the right kind, on its default port.
    for (const auto& u : urls_in(scalar_text(svc["command"]))) {
      ASSERT_TRUE(services.count(u.host)) << name << ": no service '" << u.host << "'";
      const std::string target = services[u.host]["image"].as<std::string>("");
      if (u.scheme == "amqp") {
        EXPECT_EQ(target.rfind("rabbitmq:", 0), 0u) << name << " -> " << u.host;
        EXPECT_EQ(u.port, 5672) << name;
      } else {
        EXPECT_EQ(target.rfind("postgres:", 0), 0u) << name << " -> " << u.host;
        EXPECT_EQ(u.port, 5432) << name;
      }
      // and the service waits for it
      EXPECT_TRUE(svc["depends_on"] && svc["depends_on"][u.host])
          << name << " does not depend on " << u.host;
    }
    // The server listens on the port it publishes.
    if (const int port = bind_port(args)) {
      bool published = false;
      for (const auto& p : svc["ports"]) {
        const std::string spec = p.as<std::string>();
        published |= std::stoi(spec.substr(spec.rfind(':') + 1)) == port;
      }
      EXPECT_TRUE(published) << name << " binds " << port << " but does not publish it";
      const std::string health = scalar_text(svc["healthcheck"]["test"]);
      EXPECT_NE(health.find(std::to_string(port)), std::string::npos) << health;
    }
  }
  // One image for server and workers; the one the Kubernetes manifests use.
  ASSERT_EQ(layerlab_images.size(), 1u);
  for (const auto& f : k8s_files()) {
    for (const auto& d : load_all(f)) {
      const auto spec = pod_spec(d);
      if (!spec) continue;
      for (const auto& c : spec["containers"]) {
        const std::string image = c["image"].as<std::string>();
        if (image.find("layerlab") != std::string::npos) {
          EXPECT_EQ(image, *layerlab_images.begin()) << f;
        }
      }
    }
  }
}

TEST(DeployFiles, KubernetesManifestsAgree) {
  std::vector<YAML::Node> docs;
  for (const auto& f : k8s_files())
    for (const auto& d : load_all(f))
      if (d && d["kind"]) docs.push_back(d);
  std::map<std::string, YAML::Node> services, workloads, secrets;
  for (const auto& d : docs) {
    const std::string kind = d["kind"].as<std::string>(),
                      name = d["metadata"]["name"].as<std::string>();
    EXPECT_FALSE(d["metadata"]["namespace"]) << name << ": the manifests are namespace-free";
    if (kind == "Service") services[name] = d;
    if (kind == "Secret") secrets[name] = d;
    if (pod_spec(d)) workloads[name] = d;
  }
  for (const char* s : {"layerlab-postgres", "layerlab-rabbitmq", "layerlab-server"})
    EXPECT_TRUE(services.count(s)) << s;
  for (const char* w :
       {"layerlab-postgres", "layerlab-rabbitmq", "layerlab-server", "layerlab-worker"})
    EXPECT_TRUE(workloads.count(w)) << w;

  // Each Service selects a workload's pods, and its targetPorts are that pod's ports.
  std::map<std::string, std::set<std::string>> service_ports;  // name -> port numbers
  for (const auto& [name, svc] : services) {
    const YAML::Node selector = svc["spec"]["selector"];
    const YAML::Node* match = nullptr;
    for (const auto& [wname, w] : workloads) {
      bool all = true;
      for (const auto& kv : selector) {
        const YAML::Node labels = w["spec"]["template"]["metadata"]["labels"];
        all &= labels[kv.first.as<std::string>()] &&
               labels[kv.first.as<std::string>()].as<std::string>() == kv.second.as<std::string>();
      }
      if (all) match = &w;
    }
    ASSERT_NE(match, nullptr) << "Service " << name << " selects no pods";
    std::set<std::string> container_ports;
    for (const auto& c : pod_spec(*match)["containers"])
      for (const auto& p : c["ports"]) {
        container_ports.insert(p["containerPort"].as<std::string>());
        if (p["name"]) container_ports.insert(p["name"].as<std::string>());
      }
    for (const auto& p : svc["spec"]["ports"]) {
      const std::string target =
          p["targetPort"] ? p["targetPort"].as<std::string>() : p["port"].as<std::string>();
      EXPECT_TRUE(container_ports.count(target))
          << "Service " << name << " targets port " << target << ", not a container port";
      service_ports[name].insert(p["port"].as<std::string>());
    }
  }

  // Secret references resolve; URLs in Secrets name Services and their ports.
  for (const auto& [wname, w] : workloads)
    for (const auto& c : pod_spec(w)["containers"]) {
      for (const auto& e : c["env"]) {
        if (!e["valueFrom"] || !e["valueFrom"]["secretKeyRef"]) continue;
        const auto ref = e["valueFrom"]["secretKeyRef"];
        const std::string sname = ref["name"].as<std::string>(), key = ref["key"].as<std::string>();
        ASSERT_TRUE(secrets.count(sname)) << wname << ": no Secret " << sname;
        EXPECT_TRUE(secrets[sname]["stringData"][key] || secrets[sname]["data"][key])
            << wname << ": Secret " << sname << " has no key " << key;
      }
      // The server listens on its container port.
      const int port =
          is_layerlab_image(c["image"].as<std::string>()) ? bind_port(yaml_words(c["args"])) : 0;
      if (port) {
        bool declared = false;
        for (const auto& p : c["ports"]) declared |= p["containerPort"].as<int>() == port;
        EXPECT_TRUE(declared) << wname << " binds " << port << ", not a containerPort";
      }
    }
  for (const auto& [sname, secret] : secrets)
    for (const auto& kv : secret["stringData"])
      for (const auto& u : urls_in(kv.second.as<std::string>())) {
        EXPECT_TRUE(service_ports.count(u.host))
            << sname << "." << kv.first << ": no Service " << u.host;
        EXPECT_TRUE(service_ports[u.host].count(std::to_string(u.port)))
            << sname << "." << kv.first << ": Service " << u.host << " has no port " << u.port;
      }

  // SIGTERM hands trials back: the worker gets time for that before SIGKILL.
  ASSERT_TRUE(workloads.count("layerlab-worker"));
  EXPECT_GE(pod_spec(workloads["layerlab-worker"])["terminationGracePeriodSeconds"].as<int>(0), 60);
}

TEST(DeployFiles, SlurmForwardsSigtermBeforeTheTimeLimit) {
  const std::string sbatch = read_text(kDeploy / "slurm" / "workers.sbatch");
  EXPECT_TRUE(std::regex_search(sbatch, std::regex(R"(#SBATCH --signal=(B:)?TERM@\d+)")));
  EXPECT_TRUE(std::regex_search(sbatch, std::regex(R"(#SBATCH --array=)")));
  EXPECT_NE(sbatch.find("srun"), std::string::npos);
}

}  // namespace
}  // namespace layerlab
