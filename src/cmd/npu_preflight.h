// The NPU preflight deploy and scale share: do the engine pods they would add fit the NPUs free on the cluster's
// nodes (allocatable less what the pods bound there hold)? One Node LIST and one Pod LIST, cluster-wide.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "kube/client.h"
#include "mindie/node_fit.h"

namespace mindie::cmd {

/// The NPU extended resources of the hardware profiles (hardware::hardware_profiles), each once.
std::vector<std::string> npu_resources();

/// The cluster's nodes and the NPUs the pods bound to them request.
struct NodeUsage {
  std::vector<node_fit::NodeSupply> nodes;
  std::vector<node_fit::PodUse> uses;
  /// `nodes` with `uses` added, the pods of `freed_namespace` left out ("" none).
  std::vector<node_fit::NodeSupply> supplies(const std::string& freed_namespace) const;
};

/// One Node LIST and one Pod LIST, cluster-wide. Throws ApiError (a 403 when listing is forbidden).
NodeUsage read_node_usage(kube::Client& client);

/// What the preflight checks and how its refusal reads.
struct NpuPreflight {
  std::vector<node_fit::PodDemand> demands;  ///< the pods that must find room
  /// Pods of this namespace count as free ("" none): a redeploy replaces its own pods.
  std::string freed_namespace;
  std::string subject;                          ///< "the engine pods", "the added instances"
  std::string fix;                              ///< the last line of the refusal: what to do instead
  std::string skip_flag = "--skip-node-check";  ///< "": the command has none
};

/// Throws CommandError naming each role whose pods do not fit, with what the matching nodes have and hold; nothing
/// is sent when `check.demands` is empty. When listing nodes or pods is forbidden, warns with the skip flag and
/// returns. Other API errors propagate.
void check_npu_fit(kube::Client& client, Printer& printer, const NpuPreflight& check);

}  // namespace mindie::cmd
