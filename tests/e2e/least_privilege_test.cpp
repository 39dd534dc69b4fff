// What the controller's ServiceAccount may read, tried as an attacker would: a token minted for it (TokenRequest,
// `kubectl create token`) reads ConfigMaps and pods of the deployment's namespace and the nodes, nothing of another
// namespace; a redeploy narrows the cluster-wide grant an earlier version wrote; delete removes the namespaced grant.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "harness.h"

using e2e::Cluster;

namespace {

/// A token of the controller's ServiceAccount in mindie-demo (TokenRequest API, as `kubectl create token` asks).
std::string controller_token(const Cluster& sb) {
  const e2e::Run run = sb.kubectl({"create", "token", "mindie-motor-controller", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  std::string token = run.out;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  REQUIRE_FALSE(token.empty());
  return token;
}

/// kubectl `args` as the bearer of `token` (the test kubeconfig's user authenticates by token too, which it replaces).
e2e::Run as_token(const Cluster& sb, const std::string& token, std::vector<std::string> args) {
  args.insert(args.begin(), {"--token", token});
  return sb.kubectl(args);
}

bool forbidden(const e2e::Run& run) { return run.exit_code != 0 && run.err.find("Forbidden") != std::string::npos; }

/// Checks what the controller's token may read.
void check_controller_rights(const Cluster& sb) {
  const std::string token = controller_token(sb);
  CHECK(as_token(sb, token, {"get", "configmap", "motor-config", "-n", "mindie-demo"}).exit_code == 0);
  CHECK(as_token(sb, token, {"get", "pods", "-n", "mindie-demo"}).exit_code == 0);
  CHECK(as_token(sb, token, {"get", "nodes"}).exit_code == 0);
  const e2e::Run other = as_token(sb, token, {"get", "configmaps", "-n", "kube-system"});
  CHECK_MESSAGE(forbidden(other), other.err);
  CHECK(forbidden(as_token(sb, token, {"get", "pods", "--all-namespaces"})));
  CHECK(forbidden(as_token(sb, token, {"get", "secrets", "-n", "mindie-demo"})));
  CHECK(
      forbidden(as_token(sb, token, {"delete", "configmap", "motor-config", "-n", "mindie-demo", "--dry-run=server"})));
}

}  // namespace

TEST_CASE("the controller's token reads ConfigMaps and pods of its namespace and the nodes, nothing elsewhere") {
  Cluster sb;
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  check_controller_rights(sb);
}

TEST_CASE("a redeploy narrows an earlier deploy's cluster-wide grant; delete removes the namespaced one") {
  Cluster sb;
  auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  // What earlier versions wrote: ConfigMaps, nodes and pods in the ClusterRole (under the same field manager), and
  // no Role.
  e2e::TempDir dir;
  const std::string old_role =
      dir.write("old.yaml",
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: "
                "mindie-motor-controller-mindie-demo\n"
                "rules:\n- apiGroups: [\"\"]\n  resources: [configmaps, nodes, pods]\n  verbs: [get, list, watch]\n");
  REQUIRE(sb.kubectl({"apply", "--server-side", "--field-manager=kubectl-mindie", "-f", old_role}).exit_code == 0);
  REQUIRE(sb.kubectl({"delete", "rolebinding,role", "mindie-motor-controller", "-n", "mindie-demo"}).exit_code == 0);
  CHECK(as_token(sb, controller_token(sb), {"get", "configmaps", "-n", "kube-system"}).exit_code == 0);

  run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto rules =
      sb.kubectl({"get", "clusterrole", "mindie-motor-controller-mindie-demo", "-o", "jsonpath={.rules[*].resources}"});
  CHECK(rules.out == R"(["nodes"])");
  check_controller_rights(sb);

  run = sb.mindie({"delete", "-n", "mindie-demo"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("role.rbac.authorization.k8s.io/mindie-motor-controller deleted") != std::string::npos);
  CHECK(run.out.find("rolebinding.rbac.authorization.k8s.io/mindie-motor-controller deleted") != std::string::npos);
  const auto left = sb.kubectl({"get", "role,rolebinding", "-n", "mindie-demo", "-o", "name"});
  CHECK(left.exit_code == 0);
  CHECK(left.out.empty());
}
