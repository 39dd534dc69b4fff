// The parts every deploy mode's rendering (src/mindie/render_*.cpp) and the overrides (overrides_apply.cpp) share:
// JSON editing, the built-in role templates, one role's pod template; not an API of its own.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/profile.h"
#include "mindie/render.h"
#include "validation/problem.h"

namespace mindie::render::detail {

inline constexpr const char* kManagedBy = "app.kubernetes.io/managed-by";
inline constexpr const char* kComponent = "app.kubernetes.io/component";
inline constexpr const char* kInstance = "app.kubernetes.io/instance";
inline constexpr const char* kServiceAccount = "mindie-motor-controller";
inline constexpr int kControllerPort = 1026;   // controller management port (deploy.py)
inline constexpr int kCoordinatorPort = 1026;  // coordinator management port
inline constexpr int kInferPort = 1025;        // coordinator inference entry
inline constexpr int kObsPort = 1027;       // coordinator and controller observability/metrics (PyMotor 7d15c04 §U6)
inline constexpr int kMfStorePort = 50089;  // mf-store (deploy.py's Service "mf-store")

/// A parsed copy of the embedded manifest at `path` (relative to manifests/). Parsed once; a missing or broken
/// template is a build defect, reported as std::logic_error.
boost::json::object manifest(const std::string& path);
/// obj[key] as an object, created (or replaced when of another kind) as needed.
boost::json::object& sub(boost::json::object& obj, std::string_view key);
/// obj[key] as an array, created (or replaced when of another kind) as needed.
boost::json::array& list(boost::json::object& obj, std::string_view key);
/// True when `o` is an object whose "name" is `name` (volumes, mounts).
bool named(const boost::json::value& o, std::string_view name);
/// Moves `keys` (those present) to the front of `obj`, in that order, so output reads like hand-written manifests
/// (name before details, replicas and selector before the template).
void order_first(boost::json::object& obj, std::initializer_list<std::string_view> keys);
/// An env entry {name, value}.
boost::json::object env_var(std::string_view name, std::string_view value);
/// Sets kTemplateHashAnnotation on the pod template of a workload spec (last, once the template is final). With
/// `with_replicas` (infer_service_set roles) the pods per instance count too: the operator never updates a
/// workload's replicas either.
void stamp_template_hash(boost::json::object& workload_spec, bool with_replicas);

/// Role names and the ROLE value boot.sh dispatches on (deploy.py's startup scripts).
struct RoleInfo {
  const char* name;
  const char* boot_role;
  const char* manifest;
};
inline constexpr RoleInfo kRoles[] = {
    {"controller", "controller", "infer_service_set/roles/controller.yaml"},
    {"coordinator", "coordinator", "infer_service_set/roles/coordinator.yaml"},
    {"prefill", "prefill", "infer_service_set/roles/engine.yaml"},
    {"decode", "decode", "infer_service_set/roles/engine.yaml"},
    // EPD: encode instances (multi_deployment only; PyMotor 7d15c04 U5).
    {"encode", "encode", "infer_service_set/roles/engine.yaml"},
    // PD-hybrid: prefill and decode in one engine instance (PyMotor's union role).
    {"union", "union", "infer_service_set/roles/engine.yaml"},
    {"kv-pool", "kv_pool", "infer_service_set/roles/kv-pool.yaml"},
    {"kv-conductor", "kv_conductor", "infer_service_set/roles/kv-conductor.yaml"},
    {"mf-store", "mf_store", "infer_service_set/roles/mf-store.yaml"},
    // single_container: every component in one engine pod (deploy.py's ROLE value).
    {"single-container", "SINGLE_CONTAINER", "infer_service_set/roles/engine.yaml"},
};
/// The kRoles entry of `role` (a name the code itself passes: an unknown one is a defect, std::logic_error).
const RoleInfo& role_info(std::string_view role);
/// Roles rendered only when their component is on: their absence keeps the role indices of every other
/// deployment as they were (scale patches by index).
bool role_rendered(const config::UserConfig& cfg, std::string_view role);
/// Why role_rendered is false for `role`, for messages.
std::string why_not_rendered(std::string_view role);
/// The pod label that ties a role's pods to its workload selector and its Services.
std::string app_label(const std::string& iss, const std::string& role);
/// opts.service_set_name, else default_service_set_name(cfg).
std::string service_set_name(const config::UserConfig& cfg, const RenderOptions& opts);
/// Puts name (and namespace `ns` when given) first in obj's metadata, and the managed-by and instance (`iss`)
/// labels.
void set_common_metadata(boost::json::object& obj, const std::string& name, const std::string* ns,
                         const std::string& iss);
/// The controller's ServiceAccount and its cluster RBAC, appended to `out`: every mode runs the controller (or, in
/// single_container, the pod holding it), which lists nodes, pods and ConfigMaps. Cluster-scoped names embed the
/// namespace: deploy.py's fixed names made a second deployment rebind the first's. `component` labels the
/// ServiceAccount (empty: none).
void append_controller_rbac(std::vector<boost::json::object>& out, const std::string& ns, const std::string& workload,
                            const std::string& component);

// ---- one role's pod template (render_role.cpp) ----

/// The Service addresses a mode hands the processes in env (CONTROLLER_SERVICE, ...): the operator's derived names
/// in infer_service_set mode, the plain Services' names in multi_deployment mode. coordinator is the management
/// Service (1026), coordinator_infer 1025, coordinator_obs 1027 (PyMotor 7d15c04 §U6).
struct Addresses {
  std::string controller, coordinator, coordinator_infer, coordinator_obs, kv_pool, kv_conductor, mf_store;
};
/// kvp-master's ports (PyMotor 7d15c04, U9): the pool on kv_cache_pool_config.port and its metrics on 9003.
boost::json::array kv_pool_ports(const config::UserConfig& cfg);
/// Puts the sp-block annotation of engine `role` on a Deployment's metadata (multi_deployment and
/// single_container: PyMotor's deployer annotates the Deployment, by the profile's rule for the mode).
void annotate_sp_block(boost::json::object& deployment, const config::UserConfig& cfg, std::string_view role,
                       hardware::SpBlockRule rule);
/// One role of the InferServiceSet (in multi_deployment mode, the source of a role's Deployment spec: the same pod
/// template). `app` is the pod label the workload selects; `addr` the env addresses; `extra_labels` pod template
/// labels added before the overrides (so overrides colliding with them are reported). Override problems are added
/// to `problems`.
boost::json::object render_role(const config::UserConfig& cfg, const RoleInfo& info, int replicas,
                                const RenderOptions& opts, std::vector<validation::Problem>& problems,
                                const std::string& app, const Addresses& addr,
                                const boost::json::object& extra_labels = {});

// ---- the Deployment-based modes (render_multi_deployment.cpp) ----

/// Labels every multi_deployment object carries: delete selects managed-by + instance, status also component and
/// instance-index (index < 0: none).
boost::json::object multi_labels(const std::string& name, const std::string& role, int index);
/// A Service `name` of role `role` selecting app=`app`, one port (`node_port` 0: none fixed).
boost::json::object multi_service(const std::string& name, const std::string& ns, const std::string& workload,
                                  const std::string& role, const std::string& app, const char* type,
                                  const char* port_name, int port, int node_port);
/// A Deployment `name` from a rendered role's workload spec (render_role), its pods labelled app=<name> (the
/// selector) and, for engines, with the instance index.
boost::json::object multi_deployment_object(const std::string& name, const std::string& ns, const std::string& workload,
                                            const std::string& role, int index, boost::json::object spec);
/// The workload name of a Deployment-based mode, after checking that `cfg` is of `mode` (std::invalid_argument,
/// naming `caller`) and the name a DNS-1123 label (validation::ValidationError).
std::string checked_deployments_workload(const config::UserConfig& cfg, const RenderOptions& opts,
                                         config::DeployMode mode, const char* caller);

}  // namespace mindie::render::detail
