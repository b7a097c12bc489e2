// The module map of docs/architecture.md, enforced: every `#include "MODULE/..."` in src/
// must be allowed by the map's `deps` block or listed in its `crossings` block, and every
// listed crossing must still exist (the list only shrinks).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_and_errors.h"

namespace layerlab {
namespace {

namespace fs = std::filesystem;

struct Rules {
  std::map<std::string, std::set<std::string>> allowed;     // module -> modules it may include
  std::set<std::pair<std::string, std::string>> crossings;  // (file, module) accepted
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of the fenced block ```name in markdown.
std::vector<std::string> block(const std::string& markdown, const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "```" + name) {
      inside = true;
    } else if (inside && line == "```") {
      break;
    } else if (inside && !line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

Rules parse_rules(const std::string& markdown) {
  Rules r;
  for (const std::string& line : block(markdown, "deps")) {
    const size_t colon = line.find(':');
    std::istringstream rest(line.substr(colon + 1));
    std::set<std::string>& deps = r.allowed[line.substr(0, colon)];
    for (std::string m; rest >> m;) deps.insert(m);
  }
  static const std::regex kCrossing(R"((\S+) -> (\S+))");
  for (const std::string& line : block(markdown, "crossings")) {
    std::smatch m;
    if (std::regex_match(line, m, kCrossing)) r.crossings.insert({m[1], m[2]});
  }
  return r;
}

struct Include {
  std::string file;  // relative to the root, e.g. src/report/timing.h
  int line;
  std::string module;  // the included module
};

// Every include of another module's header in root/src.
std::vector<Include> cross_module_includes(const fs::path& root) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([a-z_]+)/[^"]+")re");
  std::vector<Include> out;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cc" && ext != ".cu" && ext != ".cuh") continue;
    const std::string rel = fs::relative(e.path(), root).generic_string();
    const std::string own = fs::relative(e.path(), root / "src").begin()->string();
    std::istringstream in(read(e.path()));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      std::smatch m;
      if (std::regex_search(line, m, kInclude) && m[1] != own) out.push_back({rel, n, m[1]});
    }
  }
  return out;
}

// What breaks the rules, one message per problem.
std::vector<std::string> violations(const fs::path& root, const Rules& rules) {
  std::vector<std::string> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& dir : fs::directory_iterator(root / "src"))
    if (dir.is_directory() && !rules.allowed.count(dir.path().filename().string()))
      out.push_back("src/" + dir.path().filename().string() + " is not on the map");
  for (const Include& inc : cross_module_includes(root)) {
    const std::string own = inc.file.substr(4, inc.file.find('/', 4) - 4);
    const auto it = rules.allowed.find(own);
    if (it == rules.allowed.end()) continue;  // reported above
    if (it->second.count(inc.module)) continue;
    if (rules.crossings.count({inc.file, inc.module})) {
      seen.insert({inc.file, inc.module});
      continue;
    }
    out.push_back(inc.file + ":" + std::to_string(inc.line) + ": " + own + " may not include " +
                  inc.module + " (docs/architecture.md)");
  }
  for (const auto& c : rules.crossings)
    if (!seen.count(c))
      out.push_back("crossing " + c.first + " -> " + c.second +
                    " no longer exists: remove it from docs/architecture.md");
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

TEST(IncludeGraph, EveryIncludeInSrcFollowsTheModuleMap) {
  const fs::path root = LAYERLAB_SOURCE_DIR;
  const Rules rules = parse_rules(read(root / "docs/architecture.md"));
  ASSERT_GE(rules.allowed.size(), 10u) << "the deps block of docs/architecture.md is missing";
  const std::vector<std::string> found = violations(root, rules);
  EXPECT_TRUE(found.empty()) << joined(found);
}

// The checker itself, on a small tree: it must catch what it is for.
TEST(IncludeGraph, TheCheckerCatchesACrossingAStaleExceptionAndAnUnmappedModule) {
  testing::TempDir dir;
  const fs::path root = dir.path("");
  fs::create_directories(root / "src/low");
  fs::create_directories(root / "src/high");
  fs::create_directories(root / "src/stray");
  std::ofstream(root / "src/low/a.h") << "#include \"high/b.h\"\n";  // upward
  std::ofstream(root / "src/high/b.h") << "#include \"low/a.h\"\n#include \"high/c.h\"\n";
  const Rules rules =
      parse_rules("```deps\nlow:\nhigh: low\n```\n```crossings\nsrc/high/b.h -> stray\n```\n");
  const std::string found = joined(violations(root, rules));
  EXPECT_NE(found.find("src/low/a.h:1: low may not include high"), std::string::npos) << found;
  EXPECT_NE(found.find("crossing src/high/b.h -> stray no longer exists"), std::string::npos)
      << found;
  EXPECT_NE(found.find("src/stray is not on the map"), std::string::npos) << found;
  EXPECT_EQ(found.find("src/high/b.h:1"), std::string::npos) << "high may include low";
}

}  // namespace
}  // namespace layerlab
