// deploy's checks before its first write: what infer-operator would refuse or never carry out
// (mindie/operator_rules.h names the infer-operator sources) and whether the engine pods fit the nodes. Each throws
// CommandError ending "nothing was written", or warns and goes on when the read it needs is forbidden.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "cmd/common.h"
#include "mindie/config.h"
#include "mindie/render.h"
#include "mindie/scale_plan.h"

namespace mindie::cmd {

/// Refuses a fixed nodePort another Service holds (one cluster-wide Service LIST; forbidden: a warning); returns the
/// ports the deployment's Services will hold (not those a live role Service keeps in place of them).
std::vector<render::NodePortClaim> check_node_ports(kube::Client& client, Printer& printer,
                                                    const config::UserConfig& cfg, const render::RenderOptions& opts);

/// Refuses gang-scheduled roles of `iss` when the server does not serve Volcano's PodGroup API (infer-operator's
/// instanceset_controller.go validate).
void check_gang_support(kube::Client& client, const boost::json::object& iss);

/// The gang roles a redeploy changes: those it scales in (role -> instances wanted) and every count it changes; and
/// the running instances per role that keep an earlier pod template.
struct GangChanges {
  std::map<std::string, int> scale_in;
  std::vector<scale::RoleChange> changes;
  std::map<std::string, std::size_t> earlier_templates;  ///< role -> instances (the operator never updates them)
};

/// A redeploy against the live InstanceSets of `iss`: refuses a rebuild loop and changes fixed at creation
/// (inferservice_controller.go newInstanceSet); returns the gang roles it changes and the instances on an earlier
/// pod template.
GangChanges check_live_instance_sets(kube::Client& client, Printer& printer, const config::UserConfig& cfg,
                                     const boost::json::object& iss, const std::string& workload);

/// One line for `earlier` (GangChanges::earlier_templates): how many instances per role, and the command that rolls
/// them ("2 instances on an earlier pod template (decode 1, prefill 1): run \"kubectl mindie rollout restart -n NS\"
/// to roll them"); "" when there are none.
std::string earlier_templates_line(const std::map<std::string, std::size_t>& earlier, const std::string& ns);

/// Refuses, naming it, a resource of `objects` outside Kubernetes' built-in groups that the server does not serve:
/// a group version can be served (one CRD of MindCluster installed) while another of its CRDs is not. One discovery
/// GET per such group version.
void check_served(kube::Client& client, const std::vector<boost::json::object>& objects);

/// The refusal for script keys the pods run that motor-config would not hold.
std::string missing_scripts_message(const std::vector<std::string>& missing);

}  // namespace mindie::cmd
