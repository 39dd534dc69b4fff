// env.json reaches the pods through the set_*_env functions in motor-config; SERVICE_ID is kept across deploys.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kExampleDir;
using nlohmann::json;

namespace {

json config_map(const Cluster& sb) {
  const auto run = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "get",
                                     "configmap", "motor-config", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

}  // namespace

TEST_CASE(
    "deploy writes set_*_env into the script copies only; SERVICE_ID survives a redeploy; update-config "
    "regenerates the functions from a new env.json") {
  Cluster sb;
  e2e::TempDir dir;
  const std::string engine = "#!/bin/bash\nset_prefill_env() {\n  :\n}\nset_decode_env() {\n  :\n}\n";
  e2e::write_stand_in_scripts(dir, "scripts");
  dir.write("scripts/boot.sh", "#!/bin/bash\necho boot\n");
  dir.write("scripts/probe.sh", "#!/bin/bash\nexit 0\n");
  const std::string engine_path = dir.write("scripts/engine.sh", engine);
  dir.write("conf/user_config.json", e2e::read_file(e2e::kExample));
  dir.write("conf/env.json", R"({"motor_common_env":{"A":"1"},"motor_engine_prefill_env":{"P":"x$y 'q'"}})");
  auto run = sb.mindie({"deploy", "--config-dir", dir.path() + "/conf", "--scripts-dir", dir.path() + "/scripts"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(e2e::read_file(engine_path) == engine);  // the user's file is never modified

  const json first = config_map(sb);
  const std::string id = first["metadata"]["annotations"]["kubectl-mindie/service-id"];
  CHECK(id.rfind("mindie-demo_", 0) == 0);
  const std::string stored_engine = first["data"]["engine.sh"];
  CHECK(stored_engine.find("set_prefill_env() {\n") != std::string::npos);
  CHECK(stored_engine.find("  export P='x$y '\\''q'\\'''\n") != std::string::npos);
  CHECK(stored_engine.find("  export SERVICE_ID='" + id + "'\n") != std::string::npos);
  CHECK(first["data"]["env_functions.sh"].get<std::string>().find("set_kv_conductor_env() {") != std::string::npos);

  // A redeploy without --scripts-dir or -e renders the same ConfigMap: nothing changes, the id is kept.
  run = sb.mindie({"deploy", "-f", dir.path() + "/conf/user_config.json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json second = config_map(sb);
  CHECK(second["metadata"]["annotations"]["kubectl-mindie/service-id"] == id);
  CHECK(second["data"] == first["data"]);

  // update-config with a new env.json rewrites env.json and the functions, keeps the other keys.
  dir.write("conf/env.json", R"({"motor_common_env":{"A":"2"}})");
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/conf"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json third = config_map(sb);
  CHECK(third["data"]["engine.sh"].get<std::string>().find("export A='2'") != std::string::npos);
  CHECK(third["data"]["engine.sh"].get<std::string>().find("export P=") == std::string::npos);
  CHECK(third["data"]["boot.sh"] == first["data"]["boot.sh"]);
  CHECK(third["metadata"]["annotations"]["kubectl-mindie/service-id"] == id);
}

namespace {

/// The keys of the data object of the one write in `reqs` (a merge patch of motor-config), with their values.
json patched_data(const std::vector<e2e::LoggedRequest>& reqs) {
  json data;
  for (const auto& r : reqs) {
    if (!r.is_write()) continue;
    CHECK(r.method == "PATCH");
    CHECK(r.content_type == "application/merge-patch+json");
    const json body = json::parse(r.body);
    CHECK(body["metadata"].contains("resourceVersion"));
    data = body["data"];
  }
  return data;
}

}  // namespace

TEST_CASE(
    "update-config keeps the stored scripts byte for byte without --scripts-dir; with it, the folder's files "
    "replace them (env functions injected) and scripts no longer in the folder are removed") {
  Cluster sb;
  e2e::TempDir dir;
  e2e::write_stand_in_scripts(dir, "old");
  dir.write("old/boot.sh", "#!/bin/bash\necho boot v1\n");
  dir.write("old/probe.sh", "#!/bin/bash\nexit 0\n");
  dir.write("old/engine.sh", "#!/bin/bash\nset_prefill_env() {\n  :\n}\n");
  dir.write("old/mooncake_config.py", "# extra\n");
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  dir.write("conf/user_config.json", cfg.dump(2));
  dir.write("conf/env.json", R"({"motor_common_env":{"A":"1"},"motor_engine_prefill_env":{"P":"p1"}})");
  auto run = sb.mindie({"deploy", "--config-dir", dir.path() + "/conf", "--scripts-dir", dir.path() + "/old"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::string id = config_map(sb)["metadata"]["annotations"]["kubectl-mindie/service-id"];

  // Someone edits a script in the cluster; update-config without --scripts-dir leaves every script as it is there.
  run = e2e::run_process({e2e::kubectl_binary(), "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "patch",
                          "configmap", "motor-config", "--type", "merge", "-p",
                          R"({"data":{"boot.sh":"#!/bin/bash\necho edited in the cluster\n"}})"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json before = config_map(sb);
  cfg["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
  dir.write("conf/user_config.json", cfg.dump(2));
  std::size_t mark = sb.requests().size();
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/conf"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config configured\n");
  CHECK(patched_data(sb.requests_since(mark)) == json{{"user_config.json", cfg.dump(2)}});
  json after = config_map(sb);
  for (const char* key : {"boot.sh", "probe.sh", "engine.sh", "mooncake_config.py", "env_functions.sh", "env.json"})
    CHECK_MESSAGE(after["data"][key] == before["data"][key], key);
  CHECK(after["data"]["boot.sh"] == "#!/bin/bash\necho edited in the cluster\n");

  // --scripts-dir: boot.sh and engine.sh replaced (engine.sh carrying set_prefill_env from the stored env.json and
  // the kept SERVICE_ID), mooncake_config.py removed with a merge patch null, probe.sh unchanged and not sent.
  const std::string engine_v2 = "#!/bin/bash\n# v2\nset_prefill_env() {\n  :\n}\nstart_engine\n";
  e2e::write_stand_in_scripts(dir, "new");
  dir.write("new/boot.sh", "#!/bin/bash\necho boot v2\n");
  dir.write("new/probe.sh", "#!/bin/bash\nexit 0\n");
  const std::string engine_path = dir.write("new/engine.sh", engine_v2);
  mark = sb.requests().size();
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/conf", "--scripts-dir", dir.path() + "/new"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config configured\n");
  CHECK(e2e::read_file(engine_path) == engine_v2);  // the user's file is never modified
  const json patch = patched_data(sb.requests_since(mark));
  CHECK(patch.contains("boot.sh"));
  CHECK(patch.contains("engine.sh"));
  CHECK(patch.contains("mooncake_config.py"));
  CHECK(patch["mooncake_config.py"].is_null());
  CHECK_FALSE(patch.contains("probe.sh"));
  CHECK_FALSE(patch.contains("user_config.json"));
  CHECK_FALSE(patch.contains("env.json"));
  after = config_map(sb);
  CHECK(after["data"]["boot.sh"] == "#!/bin/bash\necho boot v2\n");
  CHECK_FALSE(after["data"].contains("mooncake_config.py"));
  const std::string engine = after["data"]["engine.sh"];
  CHECK(engine.rfind("#!/bin/bash\n# v2\n", 0) == 0);
  CHECK(engine.find("start_engine\n") != std::string::npos);
  CHECK(engine.find("set_prefill_env() {\n") != std::string::npos);
  CHECK(engine.find("  export P='p1'\n") != std::string::npos);
  CHECK(engine.find("  export A='1'\n") != std::string::npos);
  CHECK(engine.find("  export SERVICE_ID='" + id + "'\n") != std::string::npos);
  CHECK(after["data"]["env_functions.sh"] == before["data"]["env_functions.sh"]);
  CHECK(after["data"]["env.json"] == before["data"]["env.json"]);
  CHECK(after["data"]["user_config.json"] == cfg.dump(2));
  CHECK(after["metadata"]["annotations"]["kubectl-mindie/service-id"] == id);

  // The same folder again: nothing to write.
  mark = sb.requests().size();
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/conf", "--scripts-dir", dir.path() + "/new"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config unchanged\n");
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);

  // A new env.json and a folder together: the functions follow the new env.json.
  dir.write("conf/env.json", R"({"motor_common_env":{"A":"2"}})");
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/conf", "--scripts-dir", dir.path() + "/new"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  after = config_map(sb);
  CHECK(after["data"]["engine.sh"].get<std::string>().find("  export A='2'\n") != std::string::npos);
  CHECK(after["data"]["engine.sh"].get<std::string>().find("export P=") == std::string::npos);
  CHECK(after["data"]["env.json"] == R"({"motor_common_env":{"A":"2"}})");

  // --dry-run=server sends the patch with dryRun=All and changes nothing.
  e2e::write_stand_in_scripts(dir, "dry");
  std::filesystem::remove(dir.path() + "/dry/kv_pool.sh");  // stored, and not needed with the KV pool off
  dir.write("dry/boot.sh", "#!/bin/bash\necho boot v3\n");
  dir.write("dry/probe.sh", "#!/bin/bash\nexit 0\n");
  mark = sb.requests().size();
  run = sb.mindie({"update-config", "--config-dir", dir.path() + "/conf", "--scripts-dir", dir.path() + "/dry",
                   "--dry-run=server"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out == "configmap/motor-config configured (server dry run)\n");
  const auto dry = sb.requests_since(mark);
  REQUIRE(e2e::count_writes(dry) == 1);
  for (const auto& r : dry)
    if (r.is_write()) CHECK(r.query.find("dryRun=All") != std::string::npos);
  CHECK(patched_data(dry)["kv_pool.sh"].is_null());
  CHECK(config_map(sb)["data"] == after["data"]);
}

TEST_CASE("update-config with a bad --scripts-dir sends no request") {
  Cluster sb;
  auto run = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const json before = config_map(sb);
  e2e::TempDir dir;
  e2e::write_stand_in_scripts(dir, "binary");
  dir.write("binary/hccl_tools.py", std::string("\xff\xfe\x00\x01", 4));
  dir.write("no-boot/probe.sh", "#!/bin/bash\nexit 0\n");
  e2e::write_stand_in_scripts(dir, "twice/startup");
  dir.write("twice/probe/probe.sh", "#!/bin/bash\nexit 0\n");
  dir.write("twice/probe/boot.sh", "#!/bin/bash\necho boot\n");
  const struct {
    const char* name;
    std::string scripts_dir;
    const char* message;
  } cases[] = {
      {"a folder that does not exist", dir.path() + "/missing", "is not a directory"},
      {"a file that is not UTF-8", dir.path() + "/binary", "not UTF-8"},
      {"a folder without boot.sh", dir.path() + "/no-boot", "boot.sh"},
      {"two files that would be one key", dir.path() + "/twice",
       "startup/boot.sh and probe/boot.sh would both be motor-config key boot.sh"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::size_t mark = sb.requests().size();
    run = sb.mindie({"update-config", "-f", e2e::kExample, "--scripts-dir", c.scripts_dir});
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err.find(c.message) != std::string::npos, run.err);
    CHECK(run.out.empty());
    CHECK(sb.requests_since(mark).empty());
    CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
  }
  CHECK(config_map(sb)["data"] == before["data"]);
}
