// The node preflight of deploy (PyMotor 7d15c04 U3, and beyond it): do the engine pods of the rendered workload fit
// the cluster's nodes? Pure: rendered objects and Node objects in, shortfalls out; knows nothing of HTTP.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <optional>
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

/// What a node offers: its labels, its allocatable count of each NPU resource, and how many of them the pods bound
/// to it hold. Unschedulable (cordoned) nodes take no new pods.
struct NodeSupply {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, long long> allocatable;
  std::map<std::string, long long> used;  ///< requested by the pods bound to the node (add_pod_uses)
  bool unschedulable = false;
};

/// The NPUs a pod bound to a node holds: the scheduler's effective request of each resource (the sum over its
/// containers, or the largest init container's when larger; a limit stands for a missing request, as the API
/// server defaults extended resources).
struct PodUse {
  std::string node;        ///< spec.nodeName
  std::string namespace_;  ///< metadata.namespace
  std::map<std::string, long long> npus;
};

/// One role whose pods do not all fit.
struct Shortfall {
  PodDemand demand;
  int placed = 0;               ///< pods of the role that found room
  int matching_nodes = 0;       ///< schedulable nodes whose labels match the selector
  long long matching_npus = 0;  ///< their allocatable `resource`, in all
  long long matching_used = 0;  ///< of which the pods bound to them hold
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

/// What `pod` holds of `npu_resources`, or nothing for a pod bound to no node, ended (Succeeded or Failed) or
/// asking for no NPU. A deleted pod still holds its NPUs until it is gone, as the scheduler counts it.
std::optional<PodUse> pod_use(const boost::json::object& pod, const std::vector<std::string>& npu_resources);

/// Adds each of `uses` to its node's `used`, except the pods of `freed_namespace` (a redeploy replaces its own
/// pods; "" frees none). Uses of unknown nodes are dropped.
void add_pod_uses(std::vector<NodeSupply>& nodes, const std::vector<PodUse>& uses, const std::string& freed_namespace);

/// The pods `after` asks for beyond `before` (the same role, size, resource and selector), for a scale: only what
/// it adds must find room.
std::vector<PodDemand> added_demands(const std::vector<PodDemand>& before, const std::vector<PodDemand>& after);

/// Packs every pod of `demands` onto the free NPUs of `nodes` (allocatable less used), node by node, roles sharing
/// nodes counted together: largest pods first, each onto the matching schedulable node with the least room that
/// still fits (best-fit decreasing). Returns the roles with pods left over, in the order of `demands`.
std::vector<Shortfall> pack(const std::vector<PodDemand>& demands, const std::vector<NodeSupply>& nodes);

}  // namespace mindie::node_fit
