// env.json → set_*_env functions (mindie/env_script.h), checked by sourcing the generated text in a real bash.
#include "mindie/env_script.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

using namespace mindie;

namespace {

// Runs `script` with bash -c and returns stdout.
std::string bash(const std::string& script) {
  char path[] = "/tmp/env_script_testXXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  {
    std::ofstream out(path, std::ios::binary);
    out << script;
  }
  const std::string cmd = std::string("bash ") + path;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  std::remove(path);
  return out;
}

config::UserConfig minimal_config() {
  config::UserConfig cfg;
  cfg.job_id = "demo";
  cfg.engine_type = "vllm";
  cfg.model_name = "qwen";
  cfg.doc = boost::json::parse(R"({"north_config":{"name":"pangu"}})").as_object();
  return cfg;
}

}  // namespace

TEST_CASE("values survive a bash round trip: $, quotes, backslashes, newlines, spaces") {
  const std::string tricky = "a $HOME `id` \"q\" 'single' \\back\nnext line\n}\n";
  const auto env = config::parse_env_config(
      R"({"motor_common_env":{"C1":"common","SHARED":"from-common"},
          "motor_controller_env":{"TRICKY":)" +
          boost::json::serialize(boost::json::value(tricky)) + R"(,"SHARED":"from-controller","N":200,"B":false}})",
      "env.json");
  const auto derived = env_script::derived_common_env(minimal_config(), "demo_1700000000");
  const auto& fns = env_script::env_functions();
  const auto controller = *std::find_if(fns.begin(), fns.end(),
                                        [](const auto& f) { return std::string(f.function) == "set_controller_env"; });
  const std::string fn = env_script::render_function(controller, &env, derived);
  const std::string out = bash(fn +
                               "set -u\nset_controller_env\nprintf '%s\\0' \"$TRICKY\" \"$SHARED\" \"$C1\" \"$N\" "
                               "\"$B\" \"$ENGINE_TYPE\" \"$MODEL_NAME\" \"$NORTH_PLATFORM\" \"$SERVICE_ID\"\n");
  std::vector<std::string> values;
  std::size_t start = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] == '\0') {
      values.push_back(out.substr(start, i - start));
      start = i + 1;
    }
  REQUIRE(values.size() == 9);
  CHECK(values[0] == tricky);
  CHECK(values[1] == "from-controller");  // the role's own section wins over common
  CHECK(values[2] == "common");
  CHECK(values[3] == "200");
  CHECK(values[4] == "false");
  CHECK(values[5] == "vllm");
  CHECK(values[6] == "qwen");
  CHECK(values[7] == "pangu");
  CHECK(values[8] == "demo_1700000000");
}

TEST_CASE("functions replace PyMotor's definitions in the script copies, idempotently, or are appended") {
  const auto env = config::parse_env_config(R"({"motor_engine_prefill_env":{"X":"1"}})", "env.json");
  const auto derived = env_script::derived_common_env(minimal_config(), "id");
  std::map<std::string, std::string> data = {
      {"engine.sh",
       "#!/bin/bash\nset_prefill_env() {\n  export OLD=1\n}\n\nfunction set_decode_env {\n  :\n}\n"
       "main() {\n  set_prefill_env\n  echo \"X=$X\"\n}\nmain\n"},
      {"boot.sh", "echo boot\n"},
  };
  env_script::inject(data, &env, derived);
  const std::string once = data["engine.sh"];
  CHECK(once.find("OLD=1") == std::string::npos);
  CHECK(once.find("main() {") != std::string::npos);
  CHECK(data["boot.sh"] == "echo boot\n");  // no function of its own: untouched
  CHECK(data.count(env_script::kEnvFunctionsKey) == 1);
  CHECK(bash(once) == "X=1\n");
  env_script::inject(data, &env, derived);
  CHECK(data["engine.sh"] == once);

  // A script without the definition gets it appended.
  std::map<std::string, std::string> bare = {{"common.sh", "echo hi"}};
  env_script::inject(bare, nullptr, derived);
  CHECK(bash(bare["common.sh"] + "set_common_env; echo \"$ENGINE_TYPE\"\n") == "hi\nvllm\n");
}

TEST_CASE("shell_quote keeps every value on one line") {
  CHECK(env_script::shell_quote("a'b") == "'a'\\''b'");
  CHECK(env_script::shell_quote("a\nb").find('\n') == std::string::npos);
}

TEST_CASE(
    "set_union_env and set_encode_env: in engine.sh and the single-container script; union falls back to prefill's env "
    "(U12)") {
  const auto derived = env_script::derived_common_env(minimal_config(), "id");
  const std::string run = "set_union_env; set_encode_env; echo \"U=${U-} E=${E-} P=${P-}\"\n";
  for (const char* script : {"engine.sh", "all_combine_in_single_container.sh"}) {
    CAPTURE(script);
    // No motor_engine_union_env: set_union_env exports the prefill section (PyMotor 7d15c04's default copy).
    auto env = config::parse_env_config(R"({"motor_engine_prefill_env":{"P":"p"},"motor_engine_encode_env":{"E":"e"}})",
                                        "env.json");
    std::map<std::string, std::string> data = {{script, "#!/bin/bash\n"}};
    env_script::inject(data, &env, derived);
    CHECK(bash(data[script] + run) == "U= E=e P=p\n");
    // Its own section, when given, replaces the prefill copy.
    env = config::parse_env_config(R"({"motor_engine_prefill_env":{"P":"p"},"motor_engine_union_env":{"U":"u"}})",
                                   "env.json");
    env_script::inject(data, &env, derived);
    CHECK(bash(data[script] + run) == "U=u E= P=\n");
  }
  // Always written, even without env.json, and listed in env_functions.sh.
  std::map<std::string, std::string> data = {{"engine.sh", ""}};
  env_script::inject(data, nullptr, derived);
  CHECK(bash(data["engine.sh"] + "set_union_env && set_encode_env && echo \"$ENGINE_TYPE\"\n") == "vllm\n");
  CHECK(data[env_script::kEnvFunctionsKey].find("set_encode_env() {") != std::string::npos);
}
