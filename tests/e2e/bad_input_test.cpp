// Bad input through the real binary against the live local cluster: every rejected file of tests/corpus (user_config,
// env.json, kubeconfig — the kubeconfigs rewritten to point at the test's fault proxy), mutations of the example config
// (wrong types, strings for numbers, floats, negative and huge values, unknown enum values, invalid namespaces,
// 2 MB files) and broken flag sets. Each must exit 1 with an "error: ..." naming the file or flag at fault, one
// "* path: problem" line per problem when it lists problems, and send exactly zero requests.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness.h"

namespace fs = std::filesystem;
using e2e::Cluster;
using e2e::kExample;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

const fs::path kCorpus = fs::path(MINDIE_SOURCE_DIR) / "tests" / "corpus";

struct Case {
  std::string name;
  std::vector<std::string> argv;  ///< the whole command line
  std::string names;              ///< stderr must contain this: the file, flag or value at fault
};

// The corpus files of `dir` that its parser must reject (every file not named ok_*), sorted.
std::vector<fs::path> rejected_files(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kCorpus / dir))
    if (entry.is_regular_file() && entry.path().filename().string().rfind("ok_", 0) != 0) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The example config with `mutate` applied, written to `dir`/`name`.
template <class F>
std::string mutated_example(const e2e::TempDir& dir, const std::string& name, F mutate) {
  json cfg = json::parse(e2e::read_file(kExample));
  mutate(cfg["motor_deploy_config"]);
  return dir.write(name, cfg.dump(2));
}

std::vector<Case> all_cases(const Cluster& sb, const e2e::TempDir& dir) {
  std::vector<Case> cases;
  const auto deploy = [&](const std::string& config, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"deploy", "-f", config, "--scripts-dir", kScripts};
    args.insert(args.end(), extra.begin(), extra.end());
    return sb.mindie_argv(args);
  };
  for (const auto& f : rejected_files("user_config"))
    cases.push_back({"user_config/" + f.filename().string(), deploy(f.string()), f.string()});
  for (const auto& f : rejected_files("env"))
    cases.push_back({"env/" + f.filename().string(), deploy(kExample, {"-e", f.string()}), f.string()});
  // Kubeconfigs whose server is the fault proxy: a request, had one been sent, would show up in its log.
  for (const auto& f : rejected_files("kubeconfig")) {
    const std::string copy = dir.write("kubeconfig/" + f.filename().string(),
                                       replace_all(e2e::read_file(f.string()), "https://127.0.0.1:6443", sb.url()));
    cases.push_back({"kubeconfig/" + f.filename().string(),
                     {e2e::mindie_binary(), "--kubeconfig", copy, "status", "-n", "mindie-demo"},
                     copy});
  }

  // Mutations of the example: each names the field at fault.
  const std::vector<std::pair<std::string, json>> counts = {{"negative", -1}, {"zero", 0},
                                                            {"over_16", 17},  {"huge", 1000000000000LL},
                                                            {"float", 1.5},   {"string", "2"},
                                                            {"bool", true},   {"null", nullptr}};
  for (const auto& [label, value] : counts) {
    const auto file = mutated_example(dir, "p_instances_" + label + ".json",
                                      [&](json& m) { m["p_instances_num"] = value; });
    cases.push_back({"p_instances_num " + label, deploy(file), "motor_deploy_config.p_instances_num"});
  }
  const std::vector<std::pair<std::string, json>> job_ids = {{"upper_case", "Mindie-Demo"},
                                                             {"underscore", "mindie_demo"},
                                                             {"empty", ""},
                                                             {"64_chars", std::string(64, 'a')},
                                                             {"number", 7}};
  for (const auto& [label, value] : job_ids) {
    const auto file = mutated_example(dir, "job_id_" + label + ".json", [&](json& m) { m["job_id"] = value; });
    cases.push_back({"job_id " + label, deploy(file), "motor_deploy_config.job_id"});
  }
  cases.push_back({"deploy_mode unknown",
                   deploy(mutated_example(dir, "mode.json", [](json& m) { m["deploy_mode"] = "everywhere"; })),
                   "motor_deploy_config.deploy_mode"});
  // 2 MB configs: an absurdly long field is refused by validation, a padded file by the ConfigMap's 1 MiB limit
  // (with the size and the limit), both locally.
  cases.push_back(
      {"image_name of 2 MB",
       deploy(mutated_example(dir, "image_2mb.json", [](json& m) { m["image_name"] = std::string(2 << 20, 'x'); })),
       "motor_deploy_config.image_name: must be at most 1024 characters"});
  const std::string padded = dir.write("padded_2mb.json", e2e::read_file(kExample) + std::string(2 << 20, ' '));
  cases.push_back({"config of 2 MB", deploy(padded), "1 MiB"});

  // Flag sets.
  const auto flags = [&](const std::string& name, std::vector<std::string> args, const std::string& names) {
    cases.push_back({"flags: " + name, sb.mindie_argv(std::move(args)), names});
  };
  flags("--prefill not a number", {"scale", "-n", "mindie-demo", "--prefill", "abc"}, "--prefill");
  flags("--prefill a float", {"scale", "-n", "mindie-demo", "--prefill", "1.5"}, "--prefill");
  flags("--prefill 0", {"scale", "-n", "mindie-demo", "--prefill", "0"}, "--prefill");
  flags("--prefill 17", {"scale", "-n", "mindie-demo", "--prefill", "17"}, "--prefill");
  flags("--decode negative", {"scale", "-n", "mindie-demo", "--decode=-1"}, "--decode");
  flags("--decode beyond int", {"scale", "-n", "mindie-demo", "--decode", "99999999999"}, "--decode");
  flags("scale without counts", {"scale", "-n", "mindie-demo"}, "--prefill");
  flags("scale with counts and -f", {"scale", "--prefill", "2", "-f", kExample}, "-f");
  flags("scale --dry-run=client", {"scale", "-n", "mindie-demo", "--prefill", "2", "--dry-run=client"}, "dry-run");
  flags("scale -o table", {"scale", "-n", "mindie-demo", "--prefill", "2", "-o", "table"}, "table");
  flags("deploy without a config", {"deploy"}, "-f");
  flags("deploy -f and --config-dir", {"deploy", "-f", kExample, "--config-dir", kExampleDir}, "--config-dir");
  flags("deploy --config-dir and -e", {"deploy", "--config-dir", kExampleDir, "-e", kExampleDir + "/env.json"}, "-e");
  flags("deploy --name not a DNS label", {"deploy", "--config-dir", kExampleDir, "--name", "Bad_Name"}, "Bad_Name");
  flags("deploy --dry-run=bogus", {"deploy", "--config-dir", kExampleDir, "--dry-run=bogus"}, "bogus");
  flags("deploy -n other than job_id", {"deploy", "-n", "other", "--config-dir", kExampleDir}, "other");
  flags("deploy -f missing file", {"deploy", "-f", "/nonexistent/user_config.json"}, "/nonexistent/user_config.json");
  flags("deploy --scripts-dir missing", {"deploy", "--config-dir", kExampleDir, "--scripts-dir", "/nonexistent/s"},
        "/nonexistent/s");
  flags("status -o table", {"status", "-n", "mindie-demo", "-o", "table"}, "table");
  flags("update-config without a config", {"update-config"}, "-f");
  flags("update-config --dry-run=client", {"update-config", "-f", kExample, "--dry-run=client"}, "dry-run");
  flags("unknown flag", {"status", "-n", "mindie-demo", "--frobnicate"}, "frobnicate");
  flags("unknown command", {"frobnicate"}, "frobnicate");
  flags("-v not a number", {"status", "-n", "mindie-demo", "-v", "loud"}, "loud");
  flags("unknown --context", {"status", "-n", "mindie-demo", "--context", "nosuch"}, "nosuch");
  return cases;
}

}  // namespace

TEST_CASE("bad-input corpus: each case fails with an error naming the file or flag, and sends zero requests") {
  Cluster sb;
  e2e::TempDir dir;
  const auto cases = all_cases(sb, dir);
  MESSAGE("bad-input corpus: " << cases.size() << " cases");
  CHECK(cases.size() >= 50);
  const std::regex problems_header(R"(: (\d+) problems?$)");
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto run = e2e::run_process(c.argv);
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err.rfind("error: ", 0) == 0, run.err.substr(0, 500));
    CHECK_MESSAGE(run.err.find(c.names) != std::string::npos, "stderr does not name " << c.names << ":\n"
                                                                                      << run.err.substr(0, 500));
    // "error: FILE: N problems" is followed by exactly N "* path: problem" lines.
    const std::string first = run.err.substr(0, run.err.find('\n'));
    if (std::smatch m; std::regex_search(first, m, problems_header)) {
      std::size_t listed = 0;
      for (std::size_t at = run.err.find("\n* "); at != std::string::npos; at = run.err.find("\n* ", at + 1)) ++listed;
      CHECK(listed == std::stoul(m[1]));
    }
    REQUIRE_MESSAGE(sb.requests().empty(), "a request was sent");
  }
}
