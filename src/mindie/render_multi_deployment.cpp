// multi_deployment mode (deploy.py's "multi_deployment rendering": plain Deployments and Services), and the parts
// the Deployment-based modes share with single_container.
#include <algorithm>
#include <stdexcept>

#include "kube/names.h"
#include "mindie/render_parts.h"
#include "util/json_path.h"

namespace mindie::render {
namespace json = boost::json;
using config::UserConfig;
using validation::Problem;
using namespace detail;

namespace detail {

// Labels every multi_deployment object carries: delete selects managed-by + instance, status also component and
// instance-index (index < 0: none).
json::object multi_labels(const std::string& name, const std::string& role, int index) {
  json::object labels{{kManagedBy, "kubectl-mindie"}, {kInstance, name}, {kComponent, role}};
  if (index >= 0) labels[kInstanceIndexLabel] = std::to_string(index);
  return labels;
}

json::object multi_service(const std::string& name, const std::string& ns, const std::string& workload,
                           const std::string& role, const std::string& app, const char* type, const char* port_name,
                           int port, int node_port) {
  json::object p{{"name", port_name}, {"port", port}, {"protocol", "TCP"}, {"targetPort", port}};
  if (node_port) p["nodePort"] = node_port;
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Service"},
                      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", multi_labels(workload, role, -1)}}},
                      {"spec", {{"type", type}, {"selector", {{"app", app}}}, {"ports", json::array{std::move(p)}}}}};
}

// A Deployment `name` from a rendered role's workload spec (render_role), its pods labelled app=<name> (the
// selector) and, for engines, with the instance index.
json::object multi_deployment_object(const std::string& name, const std::string& ns, const std::string& workload,
                                     const std::string& role, int index, json::object spec) {
  // StatefulSet-only fields of the engine template (Deployments reject them).
  spec.erase("podManagementPolicy");
  sub(spec, "selector")["matchLabels"] = json::object{{"app", name}};
  json::object& labels = sub(sub(sub(spec, "template"), "metadata"), "labels");
  labels["app"] = name;
  if (index >= 0) labels[kInstanceIndexLabel] = std::to_string(index);
  stamp_template_hash(spec, false);  // the deployment controller follows a changed replicas itself
  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "Deployment"},
                      {"metadata",
                       {{"name", name}, {"namespace", ns}, {"labels", multi_labels(workload, role, index)}}},
                      {"spec", std::move(spec)}};
}

// The workload name of a Deployment-based mode, after checking that `cfg` is of `mode` (std::invalid_argument,
// naming `caller`) and the name a DNS-1123 label: only a label value there (no operator derives names from it),
// but kept a label like every name (validation::ValidationError).
std::string checked_deployments_workload(const UserConfig& cfg, const RenderOptions& opts, config::DeployMode mode,
                                         const char* caller) {
  if (cfg.deploy_mode != mode)
    throw std::invalid_argument(std::string(caller) + ": deploy_mode is " +
                                std::string(config::to_string(cfg.deploy_mode)));
  if (!cfg.hardware) throw std::invalid_argument(std::string(caller) + ": no hardware profile");
  std::string name = workload_name(cfg, opts);
  if (!kube::is_dns1123_label(name))
    throw validation::ValidationError("workload name",
                                      {{"metadata.name", "\"" + name +
                                                             "\" must be a DNS-1123 label: lower-case letters, digits "
                                                             "and '-', starting and ending with a letter or digit"}});
  return name;
}

}  // namespace detail

std::string engine_deployment_name(const UserConfig& cfg, std::string_view role, int index) {
  const char* suffix = role == "prefill"  ? "-p"
                       : role == "decode" ? "-d"
                       : role == "encode" ? "-e"
                       : role == "union"  ? "-u"
                                          : nullptr;
  if (!suffix)
    throw std::invalid_argument("engine_deployment_name: role " + std::string(role) + " is not an engine role");
  return cfg.engine_base + suffix + std::to_string(index);
}

namespace {

/// multi_deployment's env addresses: the plain Services' cluster names.
Addresses multi_addresses(const std::string& ns) {
  return {cluster_service_address(kMultiControllerService, ns), cluster_service_address(kMultiCoordinatorMgmt, ns),
          cluster_service_address(kMultiCoordinatorInfer, ns),  cluster_service_address(kMultiCoordinatorObs, ns),
          cluster_service_address(kKvPoolService, ns),          cluster_service_address(kKvConductorService, ns),
          cluster_service_address(kMfStoreService, ns)};
}

/// Overrides multi_deployment cannot apply: of roles it does not render, and gang scheduling. Volcano PodGroups per
/// instance are infer-operator's work; plain Deployments get none, and a one-pod-per-group gang would never start
/// the instance's other pods together.
std::vector<Problem> multi_override_problems(const UserConfig& cfg, const RenderOptions& opts) {
  std::vector<Problem> problems;
  if (opts.overrides)
    for (const auto& [role, o] : opts.overrides->roles) {
      if (!role_rendered(cfg, role))
        problems.push_back({util::child_path("roles", role),
                            "this deployment has no " + role + " role (" + why_not_rendered(role) + ")"});
      else if (o.gang_schedule && *o.gang_schedule)
        problems.push_back({util::child_path(util::child_path("roles", role), "gangSchedule"),
                            "gang scheduling needs infer-operator (deploy_mode infer_service_set): multi_deployment "
                            "Deployments get no Volcano PodGroup"});
    }
  return problems;
}

}  // namespace

std::vector<json::object> render_multi_workloads(const UserConfig& cfg, const RenderOptions& opts) {
  const std::string name = checked_deployments_workload(cfg, opts, config::DeployMode::MultiDeployment,
                                                        "render_multi_workloads");
  const std::string& ns = cfg.job_id;
  const Addresses addr = multi_addresses(ns);
  std::vector<Problem> problems = multi_override_problems(cfg, opts);

  std::vector<json::object> out;
  append_controller_rbac(out, ns, name, "controller");

  // One pod template per role, rendered once (override problems reported once), then one Deployment per instance.
  const auto role_spec = [&](const RoleInfo& info, const std::string& app) {
    json::object extra = multi_labels(name, info.name, -1);
    extra["job-name"] = cfg.job_id;  // deploy.py's engine label; JOB_NAME is the job_id (stable, see render_role)
    json::object r = render_role(cfg, info, 1, opts, problems, app, addr, extra);
    return r["spec"].get_object();
  };
  out.push_back(multi_deployment_object(kMultiController, ns, name, "controller", -1,
                                        role_spec(role_info("controller"), kMultiController)));
  out.push_back(multi_service(kMultiControllerService, ns, name, "controller", kMultiController, "ClusterIP", "manage",
                              kControllerPort, 0));
  // NodePorts allocated by Kubernetes unless the config fixes them (deploy.py's fixed 31015/31017/31027 collide
  // between deployments). The Services are PyMotor 7d15c04's (§U6).
  out.push_back(multi_service(kMultiControllerObs, ns, name, "controller", kMultiController, "NodePort", "obs",
                              kObsPort, cfg.controller_obs_node_port));
  out.push_back(multi_deployment_object(kMultiCoordinator, ns, name, "coordinator", -1,
                                        role_spec(role_info("coordinator"), kMultiCoordinator)));
  out.push_back(multi_service(kMultiCoordinatorMgmt, ns, name, "coordinator", kMultiCoordinator, "ClusterIP", "manage",
                              kCoordinatorPort, 0));
  out.push_back(multi_service(kMultiCoordinatorInfer, ns, name, "coordinator", kMultiCoordinator, "NodePort", "infer",
                              kInferPort, cfg.infer_node_port));
  out.push_back(multi_service(kMultiCoordinatorObs, ns, name, "coordinator", kMultiCoordinator, "NodePort", "obs",
                              kObsPort, cfg.obs_node_port));
  // Engine Deployments: encode instances first (PyMotor 7d15c04 U5), then prefill and decode, or PD-hybrid's union
  // instances (U4).
  for (const auto& [engine, count] : {std::pair{"encode", cfg.e_instances}, std::pair{"prefill", cfg.p_instances},
                                      std::pair{"decode", cfg.d_instances}, std::pair{"union", cfg.hybrid_instances}}) {
    if (count == 0) continue;
    const json::object spec = role_spec(role_info(engine), engine_deployment_name(cfg, engine, 0));
    for (int i = 0; i < count; ++i) {
      out.push_back(multi_deployment_object(engine_deployment_name(cfg, engine, i), ns, name, engine, i, spec));
      annotate_sp_block(out.back(), cfg, engine, cfg.hardware->sp_block.multi_deployment);
    }
  }
  if (cfg.kv_pool) {
    out.push_back(
        multi_deployment_object(kMultiKvPool, ns, name, "kv-pool", -1, role_spec(role_info("kv-pool"), kMultiKvPool)));
    out.push_back(
        multi_service(kKvPoolService, ns, name, "kv-pool", kMultiKvPool, "ClusterIP", "business", cfg.kv_pool_port, 0));
    out.back().at("spec").as_object()["ports"] = kv_pool_ports(cfg);
  }
  if (cfg.kv_conductor) {
    out.push_back(multi_deployment_object(kMultiKvConductor, ns, name, "kv-conductor", -1,
                                          role_spec(role_info("kv-conductor"), kMultiKvConductor)));
    out.push_back(multi_service(kKvConductorService, ns, name, "kv-conductor", kMultiKvConductor, "ClusterIP", "http",
                                cfg.kv_conductor_port, 0));
  }
  if (cfg.mf_store) {
    out.push_back(multi_deployment_object(kMultiMfStore, ns, name, "mf-store", -1,
                                          role_spec(role_info("mf-store"), kMultiMfStore)));
    out.push_back(
        multi_service(kMfStoreService, ns, name, "mf-store", kMultiMfStore, "ClusterIP", "store", kMfStorePort, 0));
  }
  if (!problems.empty())
    throw validation::ValidationError(opts.overrides ? opts.overrides->source : "overrides", std::move(problems));
  return out;
}

std::vector<json::object> render_multi_deployment(const UserConfig& cfg, const config::EnvConfig* env,
                                                  const RenderOptions& opts) {
  auto workloads = render_multi_workloads(cfg, opts);  // validates the mode and the name first
  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));
  for (auto& o : workloads) out.push_back(std::move(o));
  return out;
}

}  // namespace mindie::render
