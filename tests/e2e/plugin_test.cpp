// kubectl-mindie as a kubectl plugin: help text against docs/, version, shell completion (directly and through the
// real kubectl), plugin discovery, and no terminal escape codes when stdout is not a terminal.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "harness.h"

using e2e::Cluster;
using e2e::Run;
using nlohmann::json;

namespace {

const std::string kBinary = e2e::mindie_binary();
const std::string kBinDir = std::filesystem::path(kBinary).parent_path().string();
const std::string kCompleter = kBinDir + "/kubectl_complete-mindie";

Run mindie(std::vector<std::string> args) {
  args.insert(args.begin(), kBinary);
  return e2e::run_process(args);
}

/// The commands `kubectl mindie --help` lists: whatever exists, so a new command is checked without editing this.
std::vector<std::string> listed_commands() {
  const Run run = mindie({"--help"});
  REQUIRE(run.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(run.out);
  std::string line;
  bool on = false;
  while (std::getline(in, line)) {
    if (line == "Commands:") {
      on = true;
    } else if (on) {
      if (line.rfind("  ", 0) != 0) break;
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  REQUIRE(out.size() >= 6);
  return out;
}

/// The fenced ```text block under "## Help" of docs/COMMAND.md ("" when there is none).
std::string documented_help(const std::string& page) {
  const std::string text = e2e::read_file(page);
  const auto section = text.find("\n## Help\n");
  if (section == std::string::npos) return "";
  const auto open = text.find("\n```text\n", section);
  if (open == std::string::npos) return "";
  const auto begin = open + 9;
  const auto close = text.find("\n```\n", begin - 1);
  if (close == std::string::npos) return "";
  return text.substr(begin, close + 1 - begin);
}

/// The rows of --help's "Exit codes:" block as docs/exit-codes.md writes them ("| CODE | WHEN |"): a code at column
/// 3, its meaning after two or more spaces, continued on lines indented by 17.
std::vector<std::string> help_exit_rows(const std::string& help) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto at = help.find("\nExit codes:\n");
  if (at == std::string::npos) return {};
  std::istringstream lines(help.substr(at + 13));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(std::string(17, ' '), 0) == 0 && !rows.empty()) {
      rows.back().second += " " + line.substr(line.find_first_not_of(' '));
    } else if (line.rfind("  ", 0) == 0) {
      const auto gap = line.find("  ", 2);
      REQUIRE(gap != std::string::npos);
      rows.emplace_back(line.substr(2, gap - 2), line.substr(line.find_first_not_of(' ', gap)));
    }
  }
  std::vector<std::string> out;
  for (const auto& [code, when] : rows) out.push_back("| " + code + " | " + when + " |");
  return out;
}

/// The table rows under "## kubectl mindie CMD" of docs/exit-codes.md (empty when there is no such section).
std::vector<std::string> documented_exit_rows(const std::string& cmd) {
  const std::string text = e2e::read_file(std::string(MINDIE_SOURCE_DIR) + "/docs/exit-codes.md");
  const auto section = text.find("\n## kubectl mindie " + cmd + "\n");
  if (section == std::string::npos) return {};
  std::istringstream lines(text.substr(section + 1));
  std::string line;
  std::vector<std::string> out;
  std::getline(lines, line);  // the heading
  while (std::getline(lines, line)) {
    if (line.rfind("## ", 0) == 0) break;
    if (line.rfind("| ", 0) == 0 && line != "| code | when |" && line != "| --- | --- |") out.push_back(line);
  }
  return out;
}

/// Candidates (without descriptions) and the directive of a completion answer.
struct Completion {
  std::vector<std::string> values;
  int directive = -1;
  bool has(const std::string& v) const { return std::find(values.begin(), values.end(), v) != values.end(); }
};

Completion parse_completion(const Run& run) {
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  Completion c;
  std::istringstream in(run.out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == ':') {
      c.directive = std::stoi(line.substr(1));
    } else {
      c.values.push_back(line.substr(0, line.find('\t')));
    }
  }
  REQUIRE_MESSAGE(c.directive >= 0, "no directive line in: " << run.out);
  return c;
}

Completion complete(std::vector<std::string> words) {
  words.insert(words.begin(), kCompleter);
  return parse_completion(e2e::run_process(words));
}

/// Sets PATH for the child processes started while it lives (the real kubectl finds plugins on PATH).
class PathWithBinDir {
 public:
  PathWithBinDir() : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", (kBinDir + ":" + old_).c_str(), 1);
  }
  ~PathWithBinDir() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

// ---- krew's manifest rules (sigs.k8s.io/krew internal/index/validation: ValidatePlugin, validatePlatform,
// validateSelector; the index's CI adds lowercase os/arch and no overlapping selectors) ----

const std::vector<std::string> kOses = {"linux", "darwin", "windows"};
const std::vector<std::string> kArches = {"amd64", "arm64", "386", "arm", "ppc64le", "s390x"};

std::string scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }

/// Whether a platform's selector matches os/arch (matchLabels and matchExpressions with In/NotIn).
bool selector_matches(const YAML::Node& sel, const std::string& os, const std::string& arch) {
  const auto value_of = [&](const std::string& key) { return key == "os" ? os : arch; };
  if (const auto labels = sel["matchLabels"]; labels && labels.IsMap())
    for (const auto& kv : labels)
      if (scalar(kv.second) != value_of(kv.first.Scalar())) return false;
  if (const auto exprs = sel["matchExpressions"]; exprs && exprs.IsSequence())
    for (const auto& e : exprs) {
      bool in = false;
      for (const auto& v : e["values"]) in = in || scalar(v) == value_of(scalar(e["key"]));
      if ((scalar(e["operator"]) == "In") != in) return false;
    }
  return true;
}

/// Every rule the manifest breaks (empty: valid). `version` is the project's version without the v.
std::vector<std::string> krew_problems(const std::string& yaml_text, const std::string& version) {
  std::vector<std::string> bad;
  YAML::Node m;
  try {
    m = YAML::Load(yaml_text);
  } catch (const std::exception& e) {
    return {std::string("not YAML: ") + e.what()};
  }
  if (scalar(m["apiVersion"]) != "krew.googlecontainertools.github.com/v1alpha2") bad.push_back("apiVersion");
  if (scalar(m["kind"]) != "Plugin") bad.push_back("kind");
  const std::string name = scalar(m["metadata"]["name"]);
  if (name != "mindie" || !std::regex_match(name, std::regex("^[A-Za-z0-9_-]+$"))) bad.push_back("metadata.name");
  const auto spec = m["spec"];
  const std::string v = scalar(spec["version"]);
  if (!std::regex_match(
          v,
          std::regex(R"(^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$)")))
    bad.push_back("spec.version is not semver with a v prefix: " + v);
  else if (!version.empty() && v != "v" + version)
    bad.push_back("spec.version " + v + " is not the project's v" + version);
  const std::string shortd = scalar(spec["shortDescription"]);
  if (shortd.empty() || shortd.size() >= 50 || shortd.find_first_of("\r\n") != std::string::npos)
    bad.push_back("spec.shortDescription must be 1..49 characters on one line");
  std::istringstream desc(scalar(spec["description"]));
  std::string line;
  bool any = false;
  while (std::getline(desc, line)) {
    any = true;
    if (line.size() > 80) bad.push_back("spec.description line over 80 columns: " + line);
  }
  if (!any) bad.push_back("spec.description is empty");
  const auto platforms = spec["platforms"];
  if (!platforms || !platforms.IsSequence() || platforms.size() == 0) {
    bad.push_back("spec.platforms is empty");
    return bad;
  }
  for (const auto& p : platforms) {
    if (scalar(p["uri"]).rfind("https://", 0) != 0) bad.push_back("platform uri must be https://...");
    if (!std::regex_match(scalar(p["sha256"]), std::regex("^[a-f0-9]{64}$")))
      bad.push_back("platform sha256 must be 64 lowercase hex digits: " + scalar(p["sha256"]));
    if (scalar(p["bin"]).empty()) bad.push_back("platform bin has to be set");
    bool license = false;
    if (const auto files = p["files"]; files) {
      if (!files.IsSequence() || files.size() == 0) bad.push_back("files has to be unspecified or non-empty");
      for (const auto& f : files) {
        if (scalar(f["from"]).empty() || scalar(f["to"]).empty()) bad.push_back("files entry without from/to");
        license = license || scalar(f["from"]) == "LICENSE";
      }
    }
    if (!license) bad.push_back("LICENSE is not extracted (files: from: LICENSE)");
    const auto sel = p["selector"];
    const auto labels = sel["matchLabels"];
    const auto exprs = sel["matchExpressions"];
    if (!sel || ((!labels || labels.size() == 0) && (!exprs || exprs.size() == 0))) {
      bad.push_back("empty or missing selector");
      continue;
    }
    const auto check_key_value = [&](const std::string& key, const std::string& value) {
      if (key != "os" && key != "arch") bad.push_back("selector key not supported: " + key);
      const auto& known = key == "os" ? kOses : kArches;
      if (std::find(known.begin(), known.end(), value) == known.end())
        bad.push_back("selector " + key + ": " + value + " is not a lowercase GOOS/GOARCH value");
    };
    if (labels)
      for (const auto& kv : labels) check_key_value(kv.first.Scalar(), scalar(kv.second));
    if (exprs)
      for (const auto& e : exprs)
        for (const auto& val : e["values"]) check_key_value(scalar(e["key"]), scalar(val));
  }
  for (const auto& os : kOses)
    for (const auto& arch : kArches) {
      int n = 0;
      for (const auto& p : platforms) n += p["selector"] && selector_matches(p["selector"], os, arch) ? 1 : 0;
      if (n > 1) bad.push_back("overlapping selectors for " + os + "/" + arch);
    }
  return bad;
}

std::string project_version() {
  const std::string cm = e2e::read_file(std::string(MINDIE_SOURCE_DIR) + "/CMakeLists.txt");
  std::smatch m;
  REQUIRE(std::regex_search(cm, m, std::regex(R"(project\(kubectl-mindie VERSION ([0-9.]+))")));
  return m[1].str();
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

}  // namespace

TEST_CASE("every command's --help is in kubectl's style and equals the help block of its docs/ page") {
  for (const auto& cmd : listed_commands()) {
    CAPTURE(cmd);
    const Run run = mindie({cmd, "--help"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const std::string& help = run.out;
    // Description, then Examples (each command after a "# comment" line), Options, Usage with the synopsis.
    const auto examples = help.find("\nExamples:\n");
    const auto options = help.find("\nOptions:\n");
    const auto usage = help.find("\nUsage:\n  kubectl mindie " + cmd);
    REQUIRE(examples != std::string::npos);
    REQUIRE(options != std::string::npos);
    REQUIRE(usage != std::string::npos);
    CHECK(examples > 0);
    CHECK(examples < options);
    CHECK(options < usage);
    std::istringstream lines(help.substr(examples + 11, options - examples - 11));
    std::string line, previous;
    int commands = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("  kubectl mindie " + cmd, 0) == 0) {
        CHECK_MESSAGE(previous.rfind("  # ", 0) == 0, "example without a # comment before it: " << line);
        ++commands;
      } else {
        CHECK_MESSAGE((line.empty() || line.rfind("  # ", 0) == 0), "unexpected example line: " << line);
      }
      previous = line;
    }
    CHECK(commands >= 1);
    CHECK(help.find("--help") != std::string::npos);

    const std::string page = std::string(MINDIE_SOURCE_DIR) + "/docs/" + cmd + ".md";
    REQUIRE_MESSAGE(std::filesystem::exists(page), page << " is missing: run scripts/update-docs.sh");
    CHECK_MESSAGE(documented_help(page) == help, page << "'s help block differs from `kubectl mindie " << cmd
                                                      << " --help`: run scripts/update-docs.sh");
  }
}

TEST_CASE("kubectl's layout: flags as -f, --filename='':, global flags on options, help COMMAND, kubectl's errors") {
  // Once Boost's layout: "-f [ --filename ] arg" and "--dry-run [=arg(=client)] (=none)", the global flags on every
  // page, Boost's "unrecognised option", and no suggestion for a mistyped command.
  const Run deploy = mindie({"deploy", "--help"});
  REQUIRE_MESSAGE(deploy.exit_code == 0, deploy.err);
  CHECK_MESSAGE(deploy.out.find("\n    -f, --filename='':\n\t") != std::string::npos, deploy.out);
  CHECK(deploy.out.find("\n    --dry-run='none':\n\t") != std::string::npos);
  CHECK(deploy.out.find("\n    --wait=false:\n\t") != std::string::npos);
  CHECK(deploy.out.find("[ --") == std::string::npos);
  CHECK(deploy.out.find("--kubeconfig") == std::string::npos);
  CHECK(deploy.out.find("Use \"kubectl mindie options\" for a list of global command-line options") !=
        std::string::npos);
  const Run options = mindie({"options"});
  CHECK(options.exit_code == 0);
  CHECK(options.out.find("\n    --kubeconfig='':\n\t") != std::string::npos);
  CHECK(options.out.find("\n    -n, --namespace='':\n\t") != std::string::npos);
  const Run help = mindie({"help", "scale"});
  CHECK(help.exit_code == 0);
  CHECK(help.out == mindie({"scale", "--help"}).out);

  const Run flag = mindie({"scale", "-n", "mindie-demo", "--decod", "2"});
  CHECK(flag.exit_code == 1);
  CHECK(flag.err == "error: unknown flag: --decod\nSee 'kubectl mindie scale --help' for usage.\n");
  const Run shorthand = mindie({"status", "-x"});
  CHECK(shorthand.err.rfind("error: unknown shorthand flag: 'x' in -x\n", 0) == 0);
  const Run command = mindie({"stauts"});
  CHECK(command.exit_code == 1);
  CHECK(command.err ==
        "error: unknown command \"stauts\" for \"kubectl mindie\"\n\nDid you mean this?\n\tstatus\n\n"
        "Run 'kubectl mindie --help' for usage.\n");
}

TEST_CASE(
    "docs/exit-codes.md has each command's exit codes as its --help lists them, and a bad flag exits 1 (diff 2)") {
  for (const auto& cmd : listed_commands()) {
    CAPTURE(cmd);
    const Run help = mindie({cmd, "--help"});
    REQUIRE_MESSAGE(help.exit_code == 0, help.err);
    const std::vector<std::string> rows = help_exit_rows(help.out);
    REQUIRE(rows.size() >= 2);
    CHECK(rows[0].rfind("| 0 | ", 0) == 0);
    CHECK(rows[1].rfind("| 1 | ", 0) == 0);
    CHECK_MESSAGE(documented_exit_rows(cmd) == rows,
                  "docs/exit-codes.md differs from `kubectl mindie " << cmd << " --help`: run scripts/update-docs.sh");
    const Run bad = mindie({cmd, "--no-such-flag"});
    CHECK(bad.exit_code == (cmd == "diff" ? 2 : 1));  // diff: kubectl diff's >1, since 1 means differences
    CHECK(bad.err.rfind("error: ", 0) == 0);
  }
}

TEST_CASE("version prints the version, git commit and build date; -o json the same; --version too") {
  const Run text = mindie({"version"});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(std::regex_search(text.out, std::regex("^kubectl-mindie version [0-9]+\\.[0-9]+\\.[0-9]+\n")));
  CHECK(std::regex_search(text.out, std::regex("\ngit commit: ([0-9a-f]{40}|unknown) \\((clean|dirty|unknown)\\)\n")));
  CHECK(std::regex_search(text.out, std::regex("\nbuild date: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\n")));
  CHECK(mindie({"--version"}).out == text.out);

  const Run js = mindie({"version", "-o", "json"});
  REQUIRE_MESSAGE(js.exit_code == 0, js.err);
  const json v = json::parse(js.out);
  for (const char* key : {"version", "gitCommit", "gitTreeState", "buildDate", "platform"}) {
    CAPTURE(key);
    CHECK(v.contains(key));
  }
  CHECK(text.out.find(v["gitCommit"].get<std::string>()) != std::string::npos);
  CHECK(text.out.find(v["buildDate"].get<std::string>()) != std::string::npos);
  CHECK(js.out.rfind("{\n", 0) == 0);  // issue 33: printed on one line; pretty as kubectl version -o json
  const Run yaml = mindie({"version", "-o", "yaml"});
  CHECK(yaml.out.find("gitCommit: ") != std::string::npos);
  CHECK(yaml.out.find(v["gitCommit"].get<std::string>()) != std::string::npos);
  const Run bad = mindie({"version", "-o", "wide"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("error: ") == 0);
}

TEST_CASE("completion: commands, flags, -o values, --context names from the kubeconfig") {
  const Completion top = complete({""});
  for (const auto& cmd : listed_commands()) CHECK_MESSAGE(top.has(cmd), cmd);
  CHECK(top.directive == 4);  // no file names
  CHECK(complete({"st"}).values == std::vector<std::string>{"status"});
  CHECK(complete({"sc"}).values == std::vector<std::string>{"scale"});

  // Every flag each command's --help lists is offered, and only flags.
  for (const auto& cmd : listed_commands()) {
    CAPTURE(cmd);
    const Completion flags = complete({cmd, "--"});
    const std::string help = mindie({cmd, "--help"}).out;
    std::smatch m;
    const auto options = help.find("\nOptions:\n");
    std::string rest = help.substr(options, help.find("\nUsage:\n") - options);  // not the exit codes' words
    std::set<std::string> listed;
    for (std::regex flag("--([a-z][a-z0-9-]*)"); std::regex_search(rest, m, flag); rest = m.suffix())
      listed.insert("--" + m[1].str());
    for (const auto& f : listed) CHECK_MESSAGE(flags.has(f), f << " of `" << cmd << " --help` is not completed");
    for (const auto& f : flags.values) CHECK(f.rfind("--", 0) == 0);
  }
  CHECK(complete({"scale", "-"}).has("-n"));
  CHECK(complete({"scale", "--pre"}).values == std::vector<std::string>{"--prefill"});
  CHECK(complete({"scale", "--prefill", "2", "--pre"}).values.empty());  // already given

  CHECK(complete({"status", "-o", ""}).values == std::vector<std::string>{"wide", "json", "yaml", "name"});
  CHECK(complete({"status", "--output", "j"}).values == std::vector<std::string>{"json"});
  CHECK(complete({"status", "--output=y"}).values == std::vector<std::string>{"--output=yaml"});
  CHECK(complete({"deploy", "--dry-run=s"}).values == std::vector<std::string>{"--dry-run=server"});
  CHECK(complete({"version", "-o", ""}).values == std::vector<std::string>{"json", "yaml"});
  CHECK(complete({"wait", "--for", ""}).values == std::vector<std::string>{"ready"});
  CHECK(complete({"deploy", "--framework", ""}).values == std::vector<std::string>{"mindie", "aibrix"});
  CHECK(complete({"delete", "--framework=a"}).values == std::vector<std::string>{"--framework=aibrix"});
  CHECK(complete({"logs", "--framework", ""}).values.empty());      // logs has no --framework
  CHECK(complete({"deploy", "-f", ""}).directive == 0);             // file names
  CHECK(complete({"deploy", "--config-dir", ""}).directive == 16);  // directories

  e2e::TempDir dir;
  const std::string kc = dir.write("config", R"(apiVersion: v1
kind: Config
clusters: [{name: c1, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u1, user: {token: t}}]
contexts:
- {name: prod-a, context: {cluster: c1, user: u1}}
- {name: lab, context: {cluster: c1, user: u1}}
current-context: lab
)");
  CHECK(complete({"--kubeconfig", kc, "status", "--context", ""}).values == std::vector<std::string>{"prod-a", "lab"});
  CHECK(complete({"status", "--kubeconfig=" + kc, "--context", "p"}).values == std::vector<std::string>{"prod-a"});
  // An unreachable server gives no namespaces and no roles, quickly, and still a directive.
  CHECK(complete({"--kubeconfig", kc, "status", "-n", ""}).values.empty());
  CHECK(complete({"--kubeconfig", kc, "logs", "--role", ""}).directive == 4);
}

TEST_CASE("completion of -n lists the namespaces holding a deployment, with one LIST per kind") {
  Cluster sb;
  CHECK(complete({"--kubeconfig", sb.kubeconfig(), "status", "-n", ""}).values.empty());
  const auto deploy = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(deploy.exit_code == 0, deploy.err);
  const std::size_t before = sb.requests().size();
  const Completion ns = complete({"scale", "--kubeconfig", sb.kubeconfig(), "--namespace", "mindie-"});
  CHECK(ns.values == std::vector<std::string>{"mindie-demo"});
  CHECK(ns.directive == 4);
  const auto reqs = sb.requests_since(before);
  REQUIRE(reqs.size() == 2);  // motor-config by kubectl-mindie's label, then the StormServices (cmd/list_inputs.h)
  CHECK(reqs[0].method == "GET");
  CHECK(reqs[0].path == "/api/v1/configmaps");
  CHECK(reqs[0].query.find("fieldSelector=metadata.name%3Dmotor-config") != std::string::npos);
  CHECK(reqs[0].query.find("labelSelector=app.kubernetes.io%2Fmanaged-by%3Dkubectl-mindie") != std::string::npos);
  CHECK(reqs[1].path == "/apis/orchestration.aibrix.ai/v1alpha1/stormservices");

  // --role of logs: the roles of the deployment's pods in the namespace given (or the kubeconfig's); scale's --role
  // is AIBrix's, so nothing without --framework aibrix.
  sb.wait_ready("mindie-demo");
  CHECK(complete({"logs", "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "--role", ""}).values ==
        std::vector<std::string>{"controller", "coordinator", "decode", "prefill"});
  CHECK(complete({"logs", "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "--role=pre"}).values ==
        std::vector<std::string>{"--role=prefill"});
  CHECK(complete({"logs", "--kubeconfig", sb.kubeconfig(), "-n", "mindie-motor", "--role", ""}).values.empty());
  CHECK(complete({"scale", "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "--role", ""}).values.empty());
}

TEST_CASE("through the real kubectl: plugin list, kubectl mindie, and completion via kubectl_complete-mindie") {
  // The kubectl the control plane was built with (tests/cluster/build.sh): always there, so never skipped.
  const std::string& kKubectl = e2e::kubectl_binary();
  PathWithBinDir path;
  const Run list = e2e::run_process({kKubectl, "plugin", "list"});
  CHECK_MESSAGE(list.out.find(kBinDir + "/kubectl-mindie\n") != std::string::npos, list.out << list.err);
  CHECK(list.out.find("kubectl_complete-mindie") == std::string::npos);  // not a plugin, only a completer

  const Run version = e2e::run_process({kKubectl, "mindie", "version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == mindie({"version"}).out);
  const Run help = e2e::run_process({kKubectl, "mindie", "status", "--help"});
  CHECK(help.out == mindie({"status", "--help"}).out);

  // kubectl >= 1.26 completes plugin arguments by running kubectl_complete-<plugin>.
  const Completion sub = parse_completion(e2e::run_process({kKubectl, "__complete", "mindie", "up"}));
  CHECK(sub.values == std::vector<std::string>{"update-config"});
  const Completion out = parse_completion(e2e::run_process({kKubectl, "__complete", "mindie", "status", "-o", ""}));
  CHECK(out.values == std::vector<std::string>{"wide", "json", "yaml", "name"});
}

TEST_CASE("no escape codes when stdout is not a terminal: status and status --watch") {
  Cluster sb;
  const auto deploy = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(deploy.exit_code == 0, deploy.err);
  const Run status = sb.mindie({"status", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(status.exit_code == 0, status.err);
  CHECK(status.out.find('\x1b') == std::string::npos);
  CHECK(status.err.find('\x1b') == std::string::npos);

  e2e::Background watch(sb.mindie_argv({"status", "-n", "mindie-demo", "--watch"}));
  const std::string first = watch.wait_for_output("\n");
  const Run stopped = watch.stop();
  CHECK(first.find('\x1b') == std::string::npos);
  CHECK(stopped.out.find('\x1b') == std::string::npos);
  CHECK(stopped.err.find('\x1b') == std::string::npos);
}

TEST_CASE("krew: the manifest generated from the amd64 and arm64 archives passes krew's rules; broken ones do not") {
  const std::string version = project_version();
  e2e::TempDir dir;
  const std::string stage = dir.path() + "/stage";
  std::filesystem::create_directory(stage);
  for (const std::string& f : {kBinary, kCompleter, std::string(MINDIE_SOURCE_DIR) + "/LICENSE"})
    std::filesystem::copy_file(f, stage + "/" + std::filesystem::path(f).filename().string());
  const auto archive_for = [&](const std::string& arch) {
    return dir.path() + "/kubectl-mindie_" + version + "_linux_" + arch + ".tar.gz";
  };
  const std::string archive = archive_for("amd64");
  const Run tar = e2e::run_process(
      {"/usr/bin/env", "tar", "-C", stage, "-czf", archive, "kubectl-mindie", "kubectl_complete-mindie", "LICENSE"});
  REQUIRE_MESSAGE(tar.exit_code == 0, tar.err);
  std::filesystem::copy_file(archive, archive_for("arm64"));  // the script reads names and members only
  const std::string script = std::string(MINDIE_SOURCE_DIR) + "/scripts/krew-manifest.sh";
  const Run gen = e2e::run_process({"/usr/bin/env", "bash", script, archive, archive_for("arm64")});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  CHECK_MESSAGE(krew_problems(gen.out, version).empty(), join(krew_problems(gen.out, version)) << gen.out);

  // One architecture alone is refused: krew would tell the other's users that there is no build for them.
  const Run alone = e2e::run_process({"/usr/bin/env", "bash", script, archive});
  CHECK(alone.exit_code != 0);
  CHECK(alone.err.find("no linux/arm64 archive given") != std::string::npos);

  // The sha256 is the archive's, and bin and LICENSE are in it.
  const YAML::Node m = YAML::Load(gen.out);
  const YAML::Node p = m["spec"]["platforms"][0];
  const Run sum = e2e::run_process({"/usr/bin/env", "sha256sum", archive});
  CHECK(sum.out.substr(0, 64) == p["sha256"].Scalar());
  const Run listing = e2e::run_process({"/usr/bin/env", "tar", "-tzf", archive});
  CHECK(listing.out.find(p["bin"].Scalar() + "\n") != std::string::npos);
  CHECK(listing.out.find("LICENSE\n") != std::string::npos);
  CHECK(p["selector"]["matchLabels"]["os"].Scalar() == "linux");
  CHECK(p["selector"]["matchLabels"]["arch"].Scalar() == "amd64");
  CHECK(m["spec"]["platforms"][1]["selector"]["matchLabels"]["arch"].Scalar() == "arm64");

  // An archive that is not named for a platform, or lacks a member, is refused.
  const std::string odd = dir.path() + "/kubectl-mindie_" + version + "_Linux_amd64.tar.gz";
  std::filesystem::copy_file(archive, odd);
  CHECK(e2e::run_process({"/usr/bin/env", "bash", script, odd, archive_for("arm64")}).exit_code != 0);

  const auto broken = [&](const std::string& from, const std::string& to) {
    std::string text = gen.out;
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    return krew_problems(text, version);
  };
  CHECK(!broken("os: linux", "os: Linux").empty());
  CHECK(!broken("arch: amd64", "arch: x86_64").empty());
  CHECK(!broken("version: v", "version: ").empty());
  CHECK(!broken("sha256: ", "sha256: A").empty());
  CHECK(!broken(p["sha256"].Scalar(), p["sha256"].Scalar().substr(0, 63)).empty());
  CHECK(!broken("bin: kubectl-mindie", "bin: \"\"").empty());
  CHECK(!broken("- from: LICENSE", "- from: COPYING").empty());
  CHECK(!broken("os: linux", "os: linux\n        cpu: x").empty());
  CHECK(
      !broken("shortDescription: ", "shortDescription: A much longer description than fifty characters for ").empty());
  CHECK(!broken("kind: Plugin", "kind: Plugins").empty());
  // Two platforms for linux/amd64.
  std::string twice = gen.out + gen.out.substr(gen.out.find("  - selector:"));
  CHECK(join(krew_problems(twice, version)).find("overlapping selectors for linux/amd64") != std::string::npos);
}

TEST_CASE("krew: the committed krew/mindie.yaml passes krew's rules, names this version and both architectures") {
  const std::string path = std::string(MINDIE_SOURCE_DIR) + "/krew/mindie.yaml";
  REQUIRE_MESSAGE(std::filesystem::exists(path), "krew/mindie.yaml is missing: run scripts/release.sh");
  const std::string text = e2e::read_file(path);
  const auto problems = krew_problems(text, project_version());
  CHECK_MESSAGE(problems.empty(), join(problems));
  const YAML::Node m = YAML::Load(text);
  std::string platforms;
  for (const auto& p : m["spec"]["platforms"]) {
    const std::string os = p["selector"]["matchLabels"]["os"].Scalar();
    const std::string arch = p["selector"]["matchLabels"]["arch"].Scalar();
    platforms += os + "/" + arch + " ";
    CHECK(p["uri"].Scalar().find("kubectl-mindie_" + project_version() + "_" + os + "_" + arch + ".tar.gz") !=
          std::string::npos);
  }
  CHECK(platforms == "linux/amd64 linux/arm64 ");
}
