#include "cmd/npu_preflight.h"

#include <algorithm>

#include "hardware/profile.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// Pods that hold a node's resources: bound to one, not ended. kubectl describe node lists a node's pods with the
/// same field selector (kubernetes/kubectl pkg/describe/describe.go, describeNode).
constexpr const char* kBoundPods = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed";

}  // namespace

std::vector<std::string> npu_resources() {
  std::vector<std::string> out;
  for (const auto& p : hardware::hardware_profiles())
    if (std::find(out.begin(), out.end(), p.npu_resource) == out.end()) out.push_back(p.npu_resource);
  return out;
}

NodeUsage read_node_usage(kube::Client& client) {
  const std::vector<std::string> resources = npu_resources();
  NodeUsage out;
  client.list_each(kube::gvr::kNodes, "", "", 500, "",
                   [&](json::object& node) { out.nodes.push_back(node_fit::node_supply(node, resources)); });
  client.list_each(kube::gvr::kPods, "", "", 500, kBoundPods, [&](json::object& pod) {
    if (auto use = node_fit::pod_use(pod, resources)) out.uses.push_back(std::move(*use));
  });
  return out;
}

std::vector<node_fit::NodeSupply> NodeUsage::supplies(const std::string& freed_namespace) const {
  std::vector<node_fit::NodeSupply> out = nodes;
  node_fit::add_pod_uses(out, uses, freed_namespace);
  return out;
}

void check_npu_fit(kube::Client& client, Printer& printer, const NpuPreflight& check) {
  if (check.demands.empty()) return;
  std::vector<node_fit::NodeSupply> nodes;
  try {
    nodes = read_node_usage(client).supplies(check.freed_namespace);
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    printer.warning("cannot check that " + check.subject + " fit the nodes' free NPUs: " + e.status_message() +
                    "; pods that fit no node stay Pending (kubectl mindie status explains them); ask for list on "
                    "nodes and on pods in all namespaces" +
                    (check.skip_flag.empty() ? "" : ", or pass " + check.skip_flag + " to skip this check"));
    return;
  }
  const auto short_roles = node_fit::pack(check.demands, nodes);
  if (short_roles.empty()) return;
  std::string msg = check.subject + " do not fit the NPUs free on the cluster's nodes (allocatable less what " +
                    (check.freed_namespace.empty() ? "their pods hold" : "the pods of other namespaces hold") +
                    "); nothing was written:";
  for (const auto& s : short_roles) msg += "\n* " + s.message();
  msg += "\n" + check.fix;
  throw CommandError(msg);
}

}  // namespace mindie::cmd
