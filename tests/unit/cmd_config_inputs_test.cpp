// The config files a command reads (cmd::read_config_inputs): -f alone takes env.json from PyMotor's
// motor_deploy_config.env_path, relative to user_config.json's folder (issue 33: it stored no env.json, silently).
#include <doctest/doctest.h>

#include <string>

#include "cmd/common.h"
#include "config_test_support.h"
#include "scratch_files.h"

using namespace mindie;

namespace {

/// A valid user_config.json whose motor_deploy_config.env_path is `env_path` (none when empty), written to `name`.
std::string write_config(const test::TempDir& dir, const std::string& name, const std::string& env_path) {
  auto cfg = test::valid_config();
  if (!env_path.empty()) cfg["motor_deploy_config"].as_object()["env_path"] = env_path;
  return dir.write(name, boost::json::serialize(cfg));
}

const std::string kEnv = R"({"motor_common_env":{"A":"1"}})";

}  // namespace

TEST_CASE("read_config_inputs: -f alone reads the env.json motor_deploy_config.env_path names, beside the config") {
  test::TempDir dir;
  dir.write("deployer/conf/env.json", kEnv);
  const std::string config = write_config(dir, "deployer/user_config.json", "./conf/env.json");
  const cmd::ConfigInputs in = cmd::read_config_inputs(config, "", "");
  REQUIRE(in.env);
  CHECK(in.env_from_config == (dir.path / "deployer/conf/env.json").string());

  // -e wins; without env_path there is no env.json.
  const std::string other = dir.write("other.json", R"({"motor_common_env":{"B":"2"}})");
  const cmd::ConfigInputs given = cmd::read_config_inputs(config, other, "");
  CHECK(given.env_from_config.empty());
  REQUIRE(given.env);
  const cmd::ConfigInputs none = cmd::read_config_inputs(write_config(dir, "plain.json", ""), "", "");
  CHECK_FALSE(none.env);
  CHECK(none.env_from_config.empty());
}

TEST_CASE("read_config_inputs: an env_path whose file is missing is an error naming both paths") {
  test::TempDir dir;
  const std::string config = write_config(dir, "user_config.json", "conf/env.json");
  try {
    (void)cmd::read_config_inputs(config, "", "");
    FAIL("no error");
  } catch (const cmd::CommandError& e) {
    CHECK(std::string(e.what()) == config + ": motor_deploy_config.env_path names conf/env.json, and " +
                                       (dir.path / "conf/env.json").string() + " does not exist: pass -e env.json");
  }
}
