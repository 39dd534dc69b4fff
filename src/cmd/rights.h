// The rights a user of kubectl-mindie needs, one table: doctor checks all of it and prints it (--print-rbac);
// deploy and scale check, before their first write, the rights their writes need.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kube/access_review.h"
#include "kube/client.h"

namespace mindie::cmd::rights {

/// Which deploy modes need a right.
enum class Modes { All, ServiceSet, Deployments };

/// Which commands check a right before their first write (bits; none: doctor only).
enum Use : unsigned { kDeploy = 1, kDeployPrune = 2, kScale = 4 };

/// One resource a user acts on, and how.
struct Right {
  const char* group;
  const char* resource;
  std::vector<const char*> verbs;
  bool cluster_wide;  ///< cluster-scoped, or in all namespaces
  Modes modes;
  unsigned checked_by;  ///< Use bits
};

/// Every right, in the order doctor reports and --print-rbac prints them.
const std::vector<Right>& table();

/// The rights of the table for a deployment in namespace `ns` (empty: the cluster-wide ones only): of the commands
/// in `uses` (0: all of them), for deploy mode infer_service_set (`service_set`), the others, or any (nullopt).
std::vector<kube::ResourceAccess> needed(unsigned uses, std::optional<bool> service_set, const std::string& ns);

/// What rollout restart --stop-operator needs besides: to read and scale infer-operator's Deployment and watch its
/// pods, in the namespace its published manifest installs it (operator_rules::kOperatorNamespace).
std::vector<kube::ResourceAccess> stop_operator_rights();

/// What a deploy or scale --framework aibrix writes, as far as it is known before its first write.
struct StormWrites {
  bool lease = true;    ///< the namespace lock (not under --dry-run=server)
  bool create = false;  ///< the StormService is created (deploy of one that does not exist)
  bool prune = false;   ///< Services of the app are deleted (some the new state no longer wants)
};

/// The rights `writes` needs in namespace `ns`: the Lease, patch (and create) on the StormService, create and patch
/// (and delete) on Services.
std::vector<kube::ResourceAccess> storm_rights(const StormWrites& writes, const std::string& ns);

/// `denied` in kubectl auth can-i's words, grouped per resource in the table's order:
/// "create,patch configmaps; patch clusterroles.rbac.authorization.k8s.io (cluster-wide)".
std::string describe(const std::vector<kube::ResourceAccess>& denied);

/// Before `command`'s first write in `ns`: throws CommandError naming every right of `uses` (for the deploy mode
/// `service_set` or not) that the server denies the user, ending "nothing was written". One SelfSubjectRulesReview,
/// and SelfSubjectAccessReviews for what it does not settle (kube/access_review.h).
void check_before_write(kube::Client& client, const std::string& ns, unsigned uses, bool service_set,
                        const std::string& command);

/// As check_before_write, for the rights `needed` in `ns` that the table does not hold (--framework aibrix).
void check_before_write(kube::Client& client, const std::string& ns, const std::vector<kube::ResourceAccess>& needed,
                        const std::string& command);

}  // namespace mindie::cmd::rights
