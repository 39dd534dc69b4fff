// The node preflight of deploy (PyMotor 7d15c04 U3, and beyond it): do the engine pods of the rendered workload fit
// the cluster's nodes? Pure: rendered objects and Node objects in, shortfalls out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mindie::node_fit {

/// The NPU pods of one role: `pods` pods, each asking for `npus` of extended resource `resource`, on nodes whose
/// labels hold every pair of `selector` (the pod template's nodeSelector).
struct PodDemand {
  std::string role;
  int pods = 0;
  long long npus = 0;
  std::string resource;
  std::vector<std::pair<std::string, std::string>> selector;
};

/// What a node offers: its labels, and its allocatable count of each NPU resource. Unschedulable (cordoned) nodes
/// take no new pods.
struct NodeSupply {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, long long> allocatable;
  bool unschedulable = false;
};

/// One role whose pods do not all fit.
struct Shortfall {
  PodDemand demand;
  int placed = 0;               ///< pods of the role that found room
  int matching_nodes = 0;       ///< schedulable nodes whose labels match the selector
  long long matching_npus = 0;  ///< their allocatable `resource`, in all
  /// The message naming the role, the labels and what is short, e.g. "role prefill: 4 pods x 8 huawei.com/Ascend910
  /// on nodes labelled accelerator=huawei-Ascend910,accelerator-type=module-910b-8: the 1 matching node (8
  /// allocatable) takes 1 of them alongside the other roles; 3 pods (24 NPUs) do not fit".
  std::string message() const;
};

/// The NPU pods of `objects` (what deploy writes: render::render_infer_service_set, render_multi_deployment or
/// render_single_container): InferServiceSet roles (instances x pods per instance) and Deployments (replicas),
/// grouped by role (the component label or the role name), selector and size.
/// A pod counts when its first container requests one of `npu_resources` (the hardware profiles' resources).
std::vector<PodDemand> npu_demands(const std::vector<boost::json::object>& objects,
                                   const std::vector<std::string>& npu_resources);

/// A NodeSupply from a Node object (metadata.labels, spec.unschedulable, status.allocatable quantities of
/// `npu_resources`; an unparsable quantity counts as 0).
NodeSupply node_supply(const boost::json::object& node, const std::vector<std::string>& npu_resources);

/// Packs every pod of `demands` onto `nodes`, node by node, roles sharing nodes counted together: largest pods
/// first, each onto the matching schedulable node with the least room that still fits (best-fit decreasing; what
/// the nodes already run is not subtracted). Returns the roles with pods left over, in the order of `demands`.
std::vector<Shortfall> pack(const std::vector<PodDemand>& demands, const std::vector<NodeSupply>& nodes);

}  // namespace mindie::node_fit
