// env.json reaches the pods through the set_*_env functions in motor-config; SERVICE_ID is kept across deploys.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::kExampleDir;
using e2e::Sandbox;
using nlohmann::json;

namespace {

json config_map(const Sandbox& sb) {
  const auto run = e2e::run_process({"/usr/bin/kubectl", "--kubeconfig", sb.kubeconfig(), "-n", "mindie-demo", "get",
                                     "configmap", "motor-config", "-o", "json"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  return json::parse(run.out);
}

}  // namespace

TEST_CASE("deploy writes set_*_env into the script copies only; SERVICE_ID survives a redeploy; update-config "
          "regenerates the functions from a new env.json") {
  Sandbox sb;
  e2e::TempDir dir;
  const std::string engine = "#!/bin/bash\nset_prefill_env() {\n  :\n}\nset_decode_env() {\n  :\n}\n";
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
