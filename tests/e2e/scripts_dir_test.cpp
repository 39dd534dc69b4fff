// --scripts-dir with PyMotor's deployer folder as operators keep it (startup/, startup/roles/, probe/ and files
// deploy.py never stores), its startup/ folder, and a flat folder: motor-config gets exactly the keys deploy.py
// stores (Ascend/MindIE-PyMotor 7d15c04 examples/deployer/lib/generator/k8s_utils.py, create_motor_config_configmap).
// The fixture tree has that layout with placeholder contents.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

const char* const kStartup[] = {"boot.sh", "common.sh", "hccl_tools.py", "mooncake_config.py"};
const char* const kRoles[] = {"controller.sh",
                              "coordinator.sh",
                              "engine.sh",
                              "kv_pool.sh",
                              "kv_conductor.sh",
                              "mf_store.sh",
                              "all_combine_in_single_container.sh"};
const char* const kProbe[] = {"probe.sh", "probe.py"};

/// A deployer folder under dir/deployer: every stored script (content "# <path>"), and what deploy.py leaves.
void write_deployer_tree(const e2e::TempDir& dir) {
  for (const char* k : kStartup) dir.write(std::string("deployer/startup/") + k, std::string("# startup/") + k + "\n");
  for (const char* k : kRoles)
    dir.write(std::string("deployer/startup/roles/") + k, std::string("# roles/") + k + "\n");
  for (const char* k : kProbe) dir.write(std::string("deployer/probe/") + k, std::string("# probe/") + k + "\n");
  for (const char* f : {"deploy.py", "delete.sh", "show_log.sh", "requirements.txt", "README.md",
                        "startup/set_env_docker.py", "lib/util.py", "yaml_template/a.yaml", "output_yamls/b.yaml"})
    dir.write(std::string("deployer/") + f, "# not stored\n");
}

/// The ConfigMap a client dry run of the example renders with `scripts_dir`; the run's stderr in `err`.
json rendered_config_map(const Cluster& sb, const std::string& scripts_dir, std::string& err) {
  const auto run = sb.mindie(
      {"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", scripts_dir, "--dry-run=client", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  err = run.err;
  const json list = json::parse(run.out);
  for (const auto& item : list["items"])
    if (item["kind"] == "ConfigMap") return item;
  FAIL("no ConfigMap rendered");
  return {};
}

std::set<std::string> script_keys(const json& cm) {
  std::set<std::string> keys;
  for (const auto& [k, v] : cm["data"].items())
    if (k != "user_config.json" && k != "env.json" && k != "env_functions.sh") keys.insert(k);
  return keys;
}

std::set<std::string> all_keys() {
  std::set<std::string> keys;
  for (const char* k : kStartup) keys.insert(k);
  for (const char* k : kRoles) keys.insert(k);
  for (const char* k : kProbe) keys.insert(k);
  return keys;
}

}  // namespace

TEST_CASE("--scripts-dir reads PyMotor's deployer folder and its startup folder as deploy.py does") {
  Cluster sb;
  e2e::TempDir dir;
  write_deployer_tree(dir);
  std::string err;
  SUBCASE("the deployer folder: the thirteen keys, nothing else, one notice of what was left out") {
    const json cm = rendered_config_map(sb, dir.path() + "/deployer", err);
    CHECK(script_keys(cm) == all_keys());
    CHECK(cm["data"]["engine.sh"].get<std::string>().find("# roles/engine.sh\n") == 0);
    CHECK(cm["data"]["probe.py"] == "# probe/probe.py\n");
    CHECK_MESSAGE(err.find("(PyMotor's deployer folder): stored the 13 files deploy.py stores; left out README.md, "
                           "delete.sh, deploy.py, lib/, output_yamls/, requirements.txt, show_log.sh, "
                           "startup/set_env_docker.py, yaml_template/") != std::string::npos,
                  err);
  }
  SUBCASE("its startup folder: probe/ is read beside it") {
    const json cm = rendered_config_map(sb, dir.path() + "/deployer/startup", err);
    CHECK(script_keys(cm) == all_keys());
    CHECK(err.find("(the deployer's startup folder)") != std::string::npos);
    CHECK(err.find("left out set_env_docker.py") != std::string::npos);
  }
  SUBCASE("a flat folder: only the keys deploy.py stores") {
    dir.write("flat/notes.txt", "x\n");
    for (const auto& f : std::filesystem::directory_iterator(e2e::kScripts))
      dir.write("flat/" + f.path().filename().string(), e2e::read_file(f.path().string()));
    const json cm = rendered_config_map(sb, dir.path() + "/flat", err);
    CHECK(script_keys(cm).count("engine.sh") == 1);
    CHECK(script_keys(cm).count("notes.txt") == 0);
    CHECK(err.find("(a flat folder): stored the") != std::string::npos);
    CHECK(err.find("left out notes.txt") != std::string::npos);
  }
}

TEST_CASE("--scripts-dir lacking a file the config's roles run is an error naming where it was looked for") {
  Cluster sb;
  e2e::TempDir dir;
  write_deployer_tree(dir);
  std::filesystem::remove(dir.path() + "/deployer/startup/roles/engine.sh");
  std::filesystem::remove(dir.path() + "/deployer/probe/probe.sh");
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", dir.path() + "/deployer"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("probe.sh (looked for " + dir.path() + "/deployer/probe/probe.sh)") != std::string::npos,
                run.err);
  CHECK(run.err.find("engine.sh (looked for " + dir.path() + "/deployer/startup/roles/engine.sh)") !=
        std::string::npos);
  CHECK(sb.requests_since(mark).empty());
  // kv_pool.sh is needed only when the KV pool is on: the example runs without it.
  std::filesystem::remove(dir.path() + "/deployer/startup/roles/kv_pool.sh");
  dir.write("deployer/startup/roles/engine.sh", "# engine\n");
  dir.write("deployer/probe/probe.sh", "# probe\n");
  const auto ok = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", dir.path() + "/deployer"});
  CHECK_MESSAGE(ok.exit_code == 0, ok.err);
}

TEST_CASE("--scripts-dir: a symbolic link out of the folder is refused before any request, and never read") {
  Cluster sb;
  e2e::TempDir dir;
  e2e::write_stand_in_scripts(dir, "scripts");
  const std::string key = dir.write("home/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  std::filesystem::remove(dir.path() + "/scripts/boot.sh");
  std::filesystem::create_symlink(key, dir.path() + "/scripts/boot.sh");
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", dir.path() + "/scripts"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("boot.sh -> " + key) != std::string::npos, run.err);
  CHECK(run.err.find("nothing was written") != std::string::npos);
  CHECK(run.err.find("PRIVATE KEY") == std::string::npos);
  CHECK(sb.requests_since(mark).empty());
}

TEST_CASE("--output-dir never writes through a symbolic link planted in it") {
  Cluster sb;
  e2e::TempDir dir;
  const std::string victim = dir.write("victim/.bashrc", "# the victim's own\n");
  std::filesystem::create_directories(dir.path() + "/out");
  std::filesystem::create_symlink(victim, dir.path() + "/out/infer_service.yaml");
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts,
                              "--output-dir", dir.path() + "/out"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find(dir.path() + "/out/infer_service.yaml is a symbolic link") != std::string::npos, run.err);
  CHECK(e2e::read_file(victim) == "# the victim's own\n");
  for (const auto& r : sb.requests_since(mark)) CHECK_FALSE(r.is_write());
}

TEST_CASE("a file name with terminal escapes is printed with them made visible") {
  Cluster sb;
  e2e::TempDir dir;
  e2e::write_stand_in_scripts(dir, "scripts");
  dir.write("scripts/notes\x1b]0;owned\x07\x1b[2J.txt", "x\n");
  std::string err;
  rendered_config_map(sb, dir.path() + "/scripts", err);
  CHECK_MESSAGE(err.find("left out notes^[]0;owned^G^[[2J.txt") != std::string::npos, err);
  CHECK(err.find('\x1b') == std::string::npos);
  CHECK(err.find('\x07') == std::string::npos);
}
