// Cluster-wide nodePort claims (issue 30) on the real control plane: two namespaces deploying the same nodePorts
// cannot both win. infer-operator creates the role Services only after deploy returns, so the cluster-wide Service
// check alone let both pass; the claim objects (cmd/node_port_claims.h) are applied before the first write, each
// namespace under a field manager of its own, and the API server's field conflict decides.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

constexpr auto npos = std::string::npos;
const std::string kClaimApply = "PATCH:/apis/rbac.authorization.k8s.io/v1/clusterroles/mindie-motor-nodeport-.*";
const std::string kWinner = e2e::kExampleNamespace;  // mindie-demo
const std::string kLoser = "mindie-motor";

/// The example's user_config.json deployed to namespace `ns` (its job_id), the default nodePorts unchanged.
std::vector<std::string> deploy_args(const e2e::TempDir& dir, const std::string& ns) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["job_id"] = ns;
  return {"deploy", "-f", dir.write(ns + ".json", cfg.dump(2)), "--scripts-dir", e2e::kScripts};
}

/// The names of the nodePort claims namespace `ns` holds.
std::vector<std::string> claims_of(const Cluster& sb, const std::string& ns) {
  return e2e::item_names(e2e::kubectl_items(sb, "clusterroles", "", "kubectl-mindie/claimed-by-namespace=" + ns));
}

/// The writes logged after `mark` into namespace `ns` or of its claims (the namespace lock's Lease is not one).
std::vector<std::string> writes_of(const Cluster& sb, std::size_t mark, const std::string& ns) {
  std::vector<std::string> out;
  for (const auto& r : e2e::writes_since(sb, mark))
    if (r.path.find("/namespaces/" + ns + "/") != npos || r.path.find("/clusterroles") != npos)
      out.push_back(r.method + " " + r.path + " " + std::to_string(r.status));
  return out;
}

/// The loser's refusal: the port, its Service and the namespace that holds it.
void check_refusal(const e2e::Run& run) {
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("nodePort 31015 of service/infer-mindie-motor-vllm-0-coordinator in namespace " + kLoser +
                             " is already claimed by the deployment in namespace " + kWinner) != npos,
                run.err);
  CHECK(run.err.find("set motor_deploy_config.infer_node_port to a free port of 30000..32767: 31016 is free") != npos);
}

}  // namespace

TEST_CASE(
    "nodePort race: two namespaces deploying the same nodePorts at once, exactly one wins, the other writes "
    "nothing") {
  Cluster sb;
  e2e::TempDir dir;
  // The loser has passed every check (no Service holds the ports yet) when its first claim is held; the winner then
  // deploys whole, and the held claim reaches the server after it.
  sb.add_fault(kClaimApply + ":hold:1");
  e2e::Background loser(sb.mindie_argv(deploy_args(dir, kLoser)));
  sb.wait_held(1);
  const auto winner = sb.mindie(deploy_args(dir, kWinner));
  CHECK_MESSAGE(winner.exit_code == 0, winner.err);
  const std::size_t mark = sb.requests().size();
  sb.release_held();
  const auto lost = loser.finish();
  check_refusal(lost);
  // Its held claim was refused (409: the winner's field manager owns the label); nothing of it is left.
  CHECK(writes_of(sb, mark, kLoser) ==
        std::vector<std::string>{
            "PATCH /apis/rbac.authorization.k8s.io/v1/clusterroles/mindie-motor-nodeport-31015 409"});
  CHECK(e2e::kubectl_items(sb, "configmaps", kLoser).empty());
  CHECK(e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kLoser).empty());
  CHECK(claims_of(sb, kLoser).empty());
  CHECK(claims_of(sb, kWinner) == std::vector<std::string>{"mindie-motor-nodeport-31015", "mindie-motor-nodeport-31017",
                                                           "mindie-motor-nodeport-31027"});
}

TEST_CASE("nodePort claims: a redeploy keeps them, another namespace is refused before any write, delete frees them") {
  Cluster sb;
  e2e::TempDir dir;
  auto run = sb.mindie(deploy_args(dir, kWinner));
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // A redeploy keeps its own claims.
  run = sb.mindie(deploy_args(dir, kWinner));
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // Refused before any write: by the claim, or by the Service check once the operator made the role Services.
  const std::size_t mark = sb.requests().size();
  const auto refused = sb.mindie(deploy_args(dir, kLoser));
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(refused.err.find("in namespace " + kWinner) != npos, refused.err);
  CHECK(refused.err.find("nothing was written") != npos);
  CHECK_MESSAGE(refused.err.find("set motor_deploy_config.infer_node_port to a free port of 30000..32767: 31016 is "
                                 "free") != npos,
                refused.err);
  CHECK(writes_of(sb, mark, kLoser).empty());

  run = sb.mindie({"delete", "-n", kWinner});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(claims_of(sb, kWinner).empty());
  // The operator's role Services held the ports too: they go with their InstanceSets (garbage collection).
  sb.admin_ok({"wait", "-n", kWinner, "--for=delete", "service", "--all", "--timeout=120s"});
  run = sb.mindie(deploy_args(dir, kLoser));
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK(claims_of(sb, kLoser).size() == 3);
}

TEST_CASE("nodePort claims: a deploy whose baseline is refused releases the claims it made, and leaves no intent") {
  Cluster sb;
  e2e::TempDir dir;
  // The claims are the deploy's first writes; the baseline (motor-config's apply) comes next and is refused.
  sb.add_fault("PATCH:/api/v1/namespaces/" + kWinner + "/configmaps/motor-config.*:403:1");
  const auto refused = sb.mindie(deploy_args(dir, kWinner));
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(refused.err.find("so the deploy was undone") != npos, refused.err);
  CHECK(claims_of(sb, kWinner).empty());
  const auto config_maps = e2e::item_names(e2e::kubectl_items(sb, "configmaps", kWinner));
  CHECK(std::find(config_maps.begin(), config_maps.end(), "motor-config") == config_maps.end());
  // Nothing left to recover: the next deploy neither recovers nor supersedes anything, and claims the ports again.
  const auto next = sb.mindie(deploy_args(dir, kWinner));
  CHECK_MESSAGE(next.exit_code == 0, next.err);
  CHECK(next.err.find("interrupted") == npos);
  CHECK(claims_of(sb, kWinner).size() == 3);
}

TEST_CASE("nodePort claims: a redeploy that moves a port, killed before its baseline, leaves only the baseline's") {
  // multi_deployment: its Services are kubectl-mindie's own, so a redeploy moves their nodePorts (infer-operator
  // never updates a role Service's).
  Cluster sb;
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["deploy_mode"] = "multi_deployment";
  cfg["motor_deploy_config"]["infer_node_port"] = 31015;
  const std::vector<std::string> deploy = {"deploy", "-f", dir.write("first.json", cfg.dump(2)), "--scripts-dir",
                                           e2e::kScripts};
  auto run = sb.mindie(deploy);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto claimed = claims_of(sb, kWinner);
  CHECK(std::find(claimed.begin(), claimed.end(), "mindie-motor-nodeport-31015") != claimed.end());
  // The redeploy claims 31115 (its first write), then its baseline write is held and the process killed.
  cfg["motor_deploy_config"]["infer_node_port"] = 31115;
  sb.add_fault("PATCH:/api/v1/namespaces/" + kWinner + "/configmaps/motor-config:hold:1");
  e2e::Background moved(
      sb.mindie_argv({"deploy", "-f", dir.write("moved.json", cfg.dump(2)), "--scripts-dir", e2e::kScripts}));
  sb.wait_held(1);
  CHECK(claims_of(sb, kWinner).size() == claimed.size() + 1);
  moved.signal(SIGKILL);
  moved.finish();
  // The next command drops the redeploy (its baseline was never written) and frees the claim it made; once the
  // claim leaked, and no other namespace could use 31115 until this deployment was deleted.
  run = sb.mindie({"scale", "-n", kWinner, "--decode", "2"});
  CHECK_MESSAGE(run.exit_code == 0, run.err);
  CHECK_MESSAGE(run.err.find("dropped: the baseline had not been written, and the workload is written after it; its "
                             "nodePort claims, released (mindie-motor-nodeport-31115)") != npos,
                run.err);
  CHECK(claims_of(sb, kWinner) == claimed);
}
