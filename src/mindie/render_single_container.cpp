// single_container mode (deploy.py's: every component in one pod).
#include <stdexcept>

#include "kube/names.h"
#include "mindie/render_parts.h"
#include "util/json_path.h"

namespace mindie::render {
namespace json = boost::json;
using config::UserConfig;
using validation::Problem;
using namespace detail;

std::string single_container_name(const UserConfig& cfg) { return cfg.job_id + "-single-container"; }

std::string single_container_service_name(const UserConfig& cfg) { return cfg.job_id + "-coordinator-service"; }

std::vector<RenamedService> renamed_services(const UserConfig& cfg) {
  switch (cfg.deploy_mode) {
    case config::DeployMode::MultiDeployment: return {{kOldMultiCoordinatorService, kMultiCoordinatorMgmt}};
    case config::DeployMode::SingleContainer: return {{single_container_name(cfg), single_container_service_name(cfg)}};
    case config::DeployMode::InferServiceSet: return {};
  }
  return {};
}

std::vector<json::object> render_single_container_workloads(const UserConfig& cfg, const RenderOptions& opts) {
  const std::string name = checked_deployments_workload(cfg, opts, config::DeployMode::SingleContainer,
                                                        "render_single_container_workloads");
  const std::string& ns = cfg.job_id;
  const std::string object_name = single_container_name(cfg);
  const std::string service_name = single_container_service_name(cfg);
  // A job_id of up to 63 characters plus the suffix can exceed the DNS label limit of Services (parse_user_config
  // refuses such a job_id already; this guards configs built otherwise).
  if (!kube::is_dns1123_label(object_name) || !kube::is_dns1123_label(service_name))
    throw validation::ValidationError("workload name",
                                      {{"motor_deploy_config.job_id",
                                        "too long for single_container: the Service \"" + service_name +
                                            "\" must be at most 63 characters (job_id at most " +
                                            std::to_string(config::kMaxSingleContainerJobId) + ")"}});

  std::vector<Problem> problems;
  if (opts.overrides)
    for (const auto& [role, o] : opts.overrides->roles) {
      if (role != "single-container")
        problems.push_back({util::child_path("roles", role),
                            "deploy_mode single_container runs one pod: only roles.single-container "
                            "applies"});
      else if (o.gang_schedule && *o.gang_schedule)
        problems.push_back({util::child_path(util::child_path("roles", role), "gangSchedule"),
                            "gang scheduling needs infer-operator (deploy_mode infer_service_set)"});
    }

  std::vector<json::object> out;
  append_controller_rbac(out, ns, name, "single-container");

  const RoleInfo& info = role_info("single-container");
  json::object extra = multi_labels(name, info.name, -1);
  extra["job-name"] = cfg.job_id;
  json::object r = render_role(cfg, info, 1, opts, problems, object_name, Addresses{}, extra);
  out.push_back(multi_deployment_object(object_name, ns, name, info.name, -1, std::move(r["spec"].get_object())));
  annotate_sp_block(out.back(), cfg, info.name, cfg.hardware->sp_block.single_container);
  // The inference entry (the coordinator inside listens on 1025), reachable from outside like deploy.py's and under
  // its name (PyMotor's "<job_id>-coordinator-service"); it selects the Deployment's pods.
  out.push_back(multi_service(service_name, ns, name, info.name, object_name, "NodePort", "infer", kInferPort,
                              cfg.infer_node_port));
  if (!problems.empty())
    throw validation::ValidationError(opts.overrides ? opts.overrides->source : "overrides", std::move(problems));
  return out;
}

std::vector<json::object> render_single_container(const UserConfig& cfg, const config::EnvConfig* env,
                                                  const RenderOptions& opts) {
  auto workloads = render_single_container_workloads(cfg, opts);
  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));
  for (auto& o : workloads) out.push_back(std::move(o));
  return out;
}

}  // namespace mindie::render
