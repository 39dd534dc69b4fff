// Cluster-wide nodePort claims: before its first write a deploy applies, for each nodePort its Services will hold,
// an empty ClusterRole "mindie-motor-nodeport-<port>" whose label names its namespace, under a field manager of that
// namespace's own: the API server refuses a second namespace's apply with a field conflict (409), so of two
// namespaces deploying the same port at once exactly one wins; the cluster-wide Service check alone cannot tell,
// since infer-operator creates the Services later (docs/architecture.md, "Cluster-wide claims").
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "change/runner.h"
#include "cmd/common.h"
#include "mindie/render.h"

namespace mindie::cmd {

/// The label naming the namespace whose deployment holds a claim.
inline constexpr const char* kClaimedByLabel = "kubectl-mindie/claimed-by-namespace";

/// The claim object's name for `port` ("mindie-motor-nodeport-<port>").
std::string node_port_claim_name(int port);

/// The claims of `claims` not yet made (one GET each); throws CommandError naming the port and the namespace
/// that holds it when another namespace's claim exists. Nothing is written.
std::vector<render::NodePortClaim> claims_to_make(kube::Client& client,
                                                  const std::vector<render::NodePortClaim>& claims);

/// What to set instead of each of `refused` (ports the cluster holds), one line each: "set KEY to a free port of
/// 30000..32767: N is free", N free of the nodePorts Services hold (`services`, a cluster-wide list; listed here when
/// null), of those deployments claim (their claim objects, one LIST) and of `own` (the deployment's own ports). A list
/// forbidden (403) is left out; no free port left says so.
std::string free_port_advice(kube::Client& client, const std::vector<render::NodePortClaim>& refused,
                             const std::vector<render::NodePortClaim>& own,
                             const boost::json::array* services = nullptr);

/// One step per claim: apply it, never forced (a conflict with another namespace's claim: CommandError naming it),
/// undone by deleting it while it is still this namespace's.
std::vector<change::Step> claim_steps(kube::Client& client, const std::vector<render::NodePortClaim>& claims,
                                      const kube::WriteOptions& opts);

/// Deletes the claims namespace `ns` holds for ports among `released` (a redeploy that moved them); returns
/// the names deleted.
std::vector<std::string> release_claims(kube::Client& client, const std::string& ns, const std::vector<int>& released,
                                        const kube::WriteOptions& opts);

/// Deletes every claim namespace `ns` holds but those of `kept` (a deploy of it that wrote nothing else, recovered:
/// the ports its baseline names, or none without one); returns the names deleted.
std::vector<std::string> release_claims_but(kube::Client& client, const std::string& ns,
                                            const std::vector<render::NodePortClaim>& kept);

}  // namespace mindie::cmd
