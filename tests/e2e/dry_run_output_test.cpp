// The output contract end to end: every command that writes prints with --dry-run what it would write (kubectl's
// "(server dry run)" / "(dry run)" lines, or the objects with -o json|yaml) and writes nothing; delete names or
// prints what it deleted; wait prints what it waited for.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::kExampleDir;
using e2e::kScripts;
using nlohmann::json;

namespace {

const std::string kIss = "inferserviceset.mindcluster.huawei.com/mindie-motor-vllm";

/// Every write of `reqs` was sent with dryRun=All.
void check_only_dry_writes(const std::vector<e2e::LoggedRequest>& reqs) {
  for (const auto& r : reqs)
    if (r.is_write()) CHECK_MESSAGE(r.query.find("dryRun=All") != std::string::npos, r.method << " " << r.path);
}

/// The kinds of a printed List's items, in order.
std::vector<std::string> item_kinds(const json& list) {
  REQUIRE(list["kind"] == "List");
  std::vector<std::string> kinds;
  for (const auto& item : list["items"]) {
    CHECK(!item["metadata"].contains("managedFields"));
    kinds.push_back(item["kind"].get<std::string>());
  }
  return kinds;
}

}  // namespace

TEST_CASE("--dry-run of deploy, scale, update-config and delete prints what would be written, and writes nothing") {
  Cluster sb;
  const auto deployed = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);
  std::size_t mark = sb.requests().size();

  const auto deploy = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts, "--dry-run=server"});
  REQUIRE_MESSAGE(deploy.exit_code == 0, deploy.err);
  CHECK(deploy.out.find("configmap/motor-config serverside-applied (server dry run)\n") != std::string::npos);
  CHECK(deploy.out.find(kIss + " serverside-applied (server dry run)\n") != std::string::npos);

  const auto scale = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2", "--dry-run=server"});
  REQUIRE_MESSAGE(scale.exit_code == 0, scale.err);
  CHECK(scale.out.find(kIss + " scaled (server dry run)\n") != std::string::npos);
  const auto scale_json = sb.mindie({"scale", "-n", "mindie-demo", "--prefill", "2", "--dry-run=server", "-o", "json"});
  REQUIRE_MESSAGE(scale_json.exit_code == 0, scale_json.err);
  const auto kinds = item_kinds(json::parse(scale_json.out));
  CHECK(std::find(kinds.begin(), kinds.end(), "InferServiceSet") != kinds.end());

  const auto update = sb.mindie({"update-config", "--config-dir", kExampleDir, "--dry-run=server", "-o", "yaml"});
  REQUIRE_MESSAGE(update.exit_code == 0, update.err);
  const YAML::Node cm = YAML::Load(update.out);
  CHECK(cm["kind"].as<std::string>() == "ConfigMap");
  CHECK(cm["metadata"]["name"].as<std::string>() == "motor-config");

  const auto del_name = sb.mindie({"delete", "-n", "mindie-demo", "--dry-run=server", "-o", "name"});
  REQUIRE_MESSAGE(del_name.exit_code == 0, del_name.err);
  CHECK(del_name.out == kIss +
                            "\n"
                            "serviceaccount/mindie-motor-controller\n"
                            "rolebinding.rbac.authorization.k8s.io/mindie-motor-controller\n"
                            "role.rbac.authorization.k8s.io/mindie-motor-controller\n"
                            "clusterrolebinding.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo\n"
                            "clusterrole.rbac.authorization.k8s.io/mindie-motor-controller-mindie-demo\n"
                            // the nodePort claims (cmd/node_port_claims.h)
                            "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31015\n"
                            "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31017\n"
                            "clusterrole.rbac.authorization.k8s.io/mindie-motor-nodeport-31027\n"
                            "configmap/motor-config\n");
  check_only_dry_writes(sb.requests_since(mark));

  mark = sb.requests().size();
  const auto del_client = sb.mindie({"delete", "-n", "mindie-demo", "--dry-run=client", "-o", "json"});
  REQUIRE_MESSAGE(del_client.exit_code == 0, del_client.err);
  CHECK(item_kinds(json::parse(del_client.out)) ==
        std::vector<std::string>{"InferServiceSet", "ServiceAccount", "RoleBinding", "Role", "ClusterRoleBinding",
                                 "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole", "ConfigMap"});
  CHECK(e2e::count_writes(sb.requests_since(mark)) == 0);
  CHECK(e2e::item_names(e2e::kubectl_items(sb, "configmaps", "mindie-demo")) ==
        std::vector<std::string>{"motor-config"});

  // For real: -o yaml prints what was deleted as a List; a second delete finds nothing, an empty List.
  const auto gone = sb.mindie({"delete", "-n", "mindie-demo", "-o", "yaml"});
  REQUIRE_MESSAGE(gone.exit_code == 0, gone.err);
  const YAML::Node list = YAML::Load(gone.out);
  REQUIRE(list["kind"].as<std::string>() == "List");
  CHECK(list["items"].size() == 10);  // as above: the workload, its RBAC, the three nodePort claims, the baseline
  CHECK(list["items"][9]["metadata"]["name"].as<std::string>() == "motor-config");
  const auto again = sb.mindie({"delete", "-n", "mindie-demo", "-o", "json"});
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(json::parse(again.out)["items"].empty());
}

TEST_CASE("wait -o name names the workload waited for; -o json prints it as it is once ready") {
  Cluster sb;
  const auto deployed = sb.mindie({"deploy", "--config-dir", kExampleDir, "--scripts-dir", kScripts});
  REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);
  sb.wait_ready("mindie-demo");
  const auto name = sb.mindie({"wait", "-n", "mindie-demo", "--for=ready", "-o", "name"});
  REQUIRE_MESSAGE(name.exit_code == 0, name.err);
  CHECK(name.out == kIss + "\n");
  const auto js = sb.mindie({"wait", "-n", "mindie-demo", "--for=ready", "-o", "json"});
  REQUIRE_MESSAGE(js.exit_code == 0, js.err);
  const json iss = json::parse(js.out);
  CHECK(iss["kind"] == "InferServiceSet");
  CHECK(iss["apiVersion"] == "mindcluster.huawei.com/v1");
  CHECK(iss["metadata"]["name"] == "mindie-motor-vllm");
  CHECK(!iss["metadata"].contains("managedFields"));
  const auto bad = sb.mindie({"wait", "-n", "mindie-demo", "--for=ready", "-o", "wide"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err ==
        "error: unable to match a printer suitable for the output format \"wide\", allowed formats are: "
        "json,name,yaml\n");
}
