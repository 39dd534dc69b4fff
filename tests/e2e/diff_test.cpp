// kubectl mindie diff end to end: exit statuses and content as kubectl diff's (0 none, 1 differences, 2 an error),
// the baseline paths with the command that applies each, nothing written, KUBECTL_EXTERNAL_DIFF; and deploy's
// refusal of a redeploy that would remove running instances.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string& kNs = e2e::kExampleNamespace;
const std::string kIssFile = "mindcluster.huawei.com.v1.InferServiceSet.mindie-demo.mindie-motor-vllm";

json example() { return json::parse(e2e::read_file(e2e::kExample)); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// What a write would change, by kind and name: the resourceVersion of the objects only kubectl-mindie writes, the
/// generation (a spec write) of those controllers also write the status of.
std::map<std::string, std::string> versions(const Cluster& sb) {
  std::map<std::string, std::string> out;
  for (const char* kind : {"configmaps", "serviceaccounts", "roles", "rolebindings"})
    for (const auto& o : e2e::kubectl_items(sb, kind, kNs))
      out[std::string(kind) + "/" + o["metadata"]["name"].get<std::string>()] =
          o["metadata"]["resourceVersion"].get<std::string>();
  for (const char* kind : {"inferservicesets", "deployments"})
    for (const auto& o : e2e::kubectl_items(sb, kind, kNs))
      out[std::string(kind) + "/" + o["metadata"]["name"].get<std::string>()] = o["metadata"]["generation"].dump();
  return out;
}

/// Sets KUBECTL_EXTERNAL_DIFF for the runs of one test.
struct ExternalDiffVariable {
  explicit ExternalDiffVariable(const std::string& value) { setenv("KUBECTL_EXTERNAL_DIFF", value.c_str(), 1); }
  ~ExternalDiffVariable() { unsetenv("KUBECTL_EXTERNAL_DIFF"); }
};

}  // namespace

TEST_CASE("diff: no change exits 0 and prints nothing; an image change exits 1 with the hunk and the path") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"diff", "-f", e2e::kExample});
  CHECK_MESSAGE(run.exit_code == 0, (run.out + run.err));
  CHECK(run.out.empty());

  json cfg = example();
  const std::string old_image = cfg["motor_deploy_config"]["image_name"];
  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:new";
  const std::string changed = dir.write("user_config.json", cfg.dump(2));
  const auto before = versions(sb);
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"diff", "-f", changed, "-n", kNs});
  CHECK_MESSAGE(run.exit_code == 1, run.err);
  CHECK(has(run.out, "--- LIVE/" + kIssFile + "\n+++ MERGED/" + kIssFile + "\n"));
  CHECK_MESSAGE(has(run.out, "image: mindie-motor-vllm:new\n"), run.out);
  CHECK(has(run.out, "--- LIVE/v1.ConfigMap.mindie-demo.motor-config\n"));
  CHECK_MESSAGE(has(run.out, "#   motor_deploy_config.image_name: \"" + old_image +
                                 "\" → \"mindie-motor-vllm:new\" (deploy + rollout restart)\n"),
                run.out);
  CHECK(!has(run.out, "managedFields"));
  CHECK(!has(run.out, "resourceVersion"));
  // A dry run: every request but GETs carries dryRun=All, and nothing changed on the cluster.
  for (const auto& r : e2e::writes_since(sb, mark))
    CHECK_MESSAGE(has(r.query, "dryRun=All"), (r.method + " " + r.path));
  CHECK(versions(sb) == before);
}

TEST_CASE("diff: a count change names scale; a config for another namespace is one error, exit 2") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  json cfg = example();
  cfg["motor_deploy_config"]["p_instances_num"] = 2;
  const std::string changed = dir.write("user_config.json", cfg.dump(2));
  run = sb.mindie({"diff", "-f", changed});
  CHECK_MESSAGE(run.exit_code == 1, run.err);
  CHECK_MESSAGE(has(run.out, "#   motor_deploy_config.p_instances_num: 1 → 2 (scale)\n"), run.out);

  run = sb.mindie({"diff", "-f", changed, "-n", "mindie-motor"});
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK_MESSAGE(has(run.err, "error: "), run.err);
  CHECK(has(run.err, "mindie-demo"));
}

TEST_CASE("diff: KUBECTL_EXTERNAL_DIFF runs the program on the LIVE and MERGED folders, argv only") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  json cfg = example();
  cfg["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:new";
  const std::string changed = dir.write("user_config.json", cfg.dump(2));
  // The program prints its arguments and the files it was given, and exits with $EXIT_WITH.
  const std::string program =
      dir.write("show-diff",
                "#!/bin/sh\n"
                "echo \"args: $(basename \"$1\" | cut -c1-5) $(basename \"$2\" | cut -c1-7) $3 $4\"\n"
                "grep -l 'mindie-motor-vllm:new' \"$2\"/* | xargs -n1 basename\n"
                "test -s \"$1/" +
                    kIssFile +
                    "\" && echo live-present\n"
                    "exit \"${EXIT_WITH:-1}\"\n");
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  {
    ExternalDiffVariable v(program + " -N --x=1 $(touch;evil)");
    run = sb.mindie({"diff", "-f", changed});
  }
  CHECK_MESSAGE(run.exit_code == 1, run.err);
  CHECK_MESSAGE(has(run.out, "args: LIVE- MERGED- -N --x=1\n"), run.out);
  CHECK(has(run.out, kIssFile + "\n"));
  CHECK(has(run.out, "live-present\n"));
  CHECK(has(run.err, "invalid argument is ignored: $(touch;evil)"));
  CHECK(has(run.out, "#   motor_deploy_config.image_name:"));  // the baseline paths follow the program's output
  {
    ExternalDiffVariable v(program);
    setenv("EXIT_WITH", "3", 1);
    run = sb.mindie({"diff", "-f", changed});
    unsetenv("EXIT_WITH");
  }
  CHECK(run.exit_code == 2);
  CHECK_MESSAGE(has(run.err, "error: failed to run \"" + program + "\": exit status 3"), run.err);
}

TEST_CASE("deploy: a redeploy with counts below the live ones is refused before any write, unless --prune") {
  Cluster sb;
  auto run = sb.mindie({"deploy", "-f", e2e::kExample, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto before = versions(sb);
  const std::size_t mark = sb.requests().size();
  run = sb.mindie({"deploy", "-f", e2e::kExample});  // the stale file: prefill 1
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(has(run.err, "role prefill: 2 instances → 1"), run.err);
  CHECK(has(run.err, "--prune"));
  CHECK(has(run.err, "nothing was written"));
  // Nothing written: deploy's field-conflict probe of the InferServiceSet is a dry run.
  for (const auto& r : e2e::writes_since(sb, mark))
    CHECK_MESSAGE(has(r.query, "dryRun=All"), (r.method + " " + r.path));
  CHECK(versions(sb) == before);
  // diff shows the same: the count going down, by scale.
  run = sb.mindie({"diff", "-f", e2e::kExample});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(has(run.out, "#   motor_deploy_config.p_instances_num: 2 → 1 (scale)\n"), run.out);
  run = sb.mindie({"deploy", "-f", e2e::kExample, "--prune"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  run = sb.mindie({"diff", "-f", e2e::kExample});
  CHECK_MESSAGE(run.exit_code == 0, (run.out + run.err));
}
