// What kubectl mindie doctor checks, one function per check: the API server, the APIs and controllers a deploy
// needs, the namespace, the user's rights, the nodes' NPUs and, given a config, its fit and nodePorts. Reads only.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "mindie/config.h"
#include "mindie/render.h"

namespace mindie::cmd::doctor {

enum class State { Ok, Warning, Failed };

/// "ok", "warning" or "failed".
const char* to_string(State s);

/// One line of the report: what was checked, how it stands, and what to do when it is not ok.
struct Check {
  std::string name;  ///< "server", "api/infer-operator", "rbac", "nodes/800I_A2", ...
  State state = State::Ok;
  std::string message;
  std::string fix;  ///< empty when ok
};

/// What the checks look at: the namespace (may be empty) and, with a config, what a deploy of it writes.
struct Target {
  std::string ns;
  const config::UserConfig* config = nullptr;
  const std::vector<boost::json::object>* objects = nullptr;
  const render::RenderOptions* render_options = nullptr;
};

/// The server's version (GET /version). Throws what the request throws: nothing else can be checked without it.
Check server(kube::Client& client);
/// infer-operator's, Volcano's and AIBrix's resources served (one discovery GET per group version); what the
/// target's deploy mode needs fails, the rest warns.
std::vector<Check> apis(kube::Client& client, const Target& target);
/// infer-operator's and Volcano's scheduler's Deployments: where the published manifests put them, else anywhere by
/// name; ready or not.
std::vector<Check> controllers(kube::Client& client);
/// The target namespace exists (deploy never creates it); nothing without one.
std::optional<Check> namespace_exists(kube::Client& client, const Target& target);
/// Every right a deploy into the target namespace needs, asked of the server (SelfSubjectAccessReview).
Check rights(kube::Client& client, const Target& target);
/// The rights rollout restart --stop-operator needs (rights::stop_operator_rights): a warning when denied.
Check stop_operator_rights(kube::Client& client);
/// Nodes per hardware profile: how many, NPUs allocatable and free (allocatable less what bound pods request); with
/// a config, whether its engine pods fit the free NPUs.
std::vector<Check> nodes(kube::Client& client, const Target& target);
/// With a config: its fixed nodePorts free in the cluster.
std::optional<Check> node_ports(kube::Client& client, const Target& target);

/// The Role (in `ns`) and ClusterRole a user deploying with kubectl-mindie needs, as a v1 List: the rights rights()
/// checks.
boost::json::object rbac_manifest(const std::string& ns);

}  // namespace mindie::cmd::doctor
