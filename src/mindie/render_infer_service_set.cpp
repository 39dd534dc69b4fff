// infer_service_set mode: the InferServiceSet infer-operator turns into InferServices, InstanceSets and workloads.
#include <stdexcept>

#include "kube/names.h"
#include "mindie/render_parts.h"
#include "util/json_path.h"

namespace mindie::render {
namespace json = boost::json;
using config::UserConfig;
using validation::Problem;
using namespace detail;

namespace {

Addresses operator_addresses(const std::string& iss, const std::string& ns) {
  return {operator_service_address(kControllerService, iss, "controller", ns),
          operator_service_address(kCoordinatorService, iss, "coordinator", ns),
          operator_service_address(kCoordinatorInferService, iss, "coordinator", ns),
          operator_service_address(kCoordinatorObsService, iss, "coordinator", ns),
          operator_service_address(kKvPoolService, iss, "kv-pool", ns),
          operator_service_address(kKvConductorService, iss, "kv-conductor", ns),
          operator_service_address(kMfStoreService, iss, "mf-store", ns)};
}

}  // namespace

std::string operator_service_address(const std::string& service, const std::string& iss, const std::string& role,
                                     const std::string& ns) {
  return service + "-" + iss + "-0-" + role + "." + ns + ".svc.cluster.local";
}

std::string default_service_set_name(const UserConfig& cfg) { return "mindie-motor-" + cfg.engine_base; }

std::vector<Problem> check_service_set_name(const std::string& name) {
  const std::string path = "metadata.name";
  if (!kube::is_dns1123_label(name))
    return {{path, "InferServiceSet name \"" + name +
                       "\" must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with "
                       "a letter or digit"}};
  // Names the operator derives from the InferServiceSet name that must be DNS labels (at most 63 characters).
  std::vector<std::string> derived;
  for (const auto& [service, role] :
       {std::pair{kControllerService, "controller"}, std::pair{kControllerObsService, "controller"},
        std::pair{kCoordinatorService, "coordinator"}, std::pair{kCoordinatorInferService, "coordinator"},
        std::pair{kCoordinatorObsService, "coordinator"}, std::pair{kKvPoolService, "kv-pool"},
        std::pair{kKvConductorService, "kv-conductor"}, std::pair{kMfStoreService, "mf-store"}})
    derived.push_back(std::string(service) + "-" + name + "-0-" + role);
  // StatefulSet instance 15 (the largest): its pods' controller-revision-hash label is "<sts>-<10-char hash>",
  // and its headless Service "service-<sts>".
  derived.push_back(name + "-0-prefill-15-0123456789");
  derived.push_back("service-" + name + "-0-prefill-15");
  std::string longest;
  for (const auto& d : derived)
    if (d.size() > longest.size()) longest = d;
  if (longest.size() > 63)
    return {{path, "InferServiceSet name \"" + name + "\" is too long: the operator would derive \"" + longest +
                       "\" (" + std::to_string(longest.size()) + " characters, at most 63 allowed); use at most " +
                       std::to_string(name.size() - (longest.size() - 63)) + " characters"}};
  return {};
}

std::vector<json::object> render_infer_service_set(const UserConfig& cfg, const config::EnvConfig* env,
                                                   const RenderOptions& opts) {
  if (cfg.deploy_mode != config::DeployMode::InferServiceSet)
    throw std::invalid_argument("render_infer_service_set: deploy_mode is " +
                                std::string(config::to_string(cfg.deploy_mode)));
  if (!cfg.hardware) throw std::invalid_argument("render_infer_service_set: no hardware profile");
  const std::string iss = service_set_name(cfg, opts);
  if (auto problems = check_service_set_name(iss); !problems.empty())
    throw validation::ValidationError("InferServiceSet name", std::move(problems));
  const std::string& ns = cfg.job_id;
  std::vector<json::object> out;
  out.push_back(render_config_map(cfg, env, opts));
  append_controller_rbac(out, ns, iss, "");

  json::object set = manifest("infer_service_set/inferserviceset.yaml");
  set_common_metadata(set, iss, &ns, iss);
  json::object& spec = sub(set, "spec");
  spec["replicas"] = 1;  // MindIE runs exactly one InferService per set
  json::array& roles = list(sub(spec, "template"), "roles");
  const auto replicas = desired_role_replicas(cfg);
  std::vector<Problem> problems;
  if (opts.overrides)
    for (const auto& [role, o] : opts.overrides->roles)
      if (!role_rendered(cfg, role))
        problems.push_back({util::child_path("roles", role),
                            "this deployment has no " + role + " role (" + why_not_rendered(role) + ")"});
  const Addresses addr = operator_addresses(iss, ns);
  for (const auto& info : kRoles)
    if (role_rendered(cfg, info.name)) {
      json::object r = render_role(cfg, info, replicas.at(info.name), opts, problems, app_label(iss, info.name), addr);
      stamp_template_hash(r.at("spec").as_object(), true);
      roles.push_back(std::move(r));
    }
  // Every role's collisions at once, as for the files themselves.
  if (!problems.empty()) throw validation::ValidationError(opts.overrides->source, std::move(problems));
  out.push_back(std::move(set));
  return out;
}

}  // namespace mindie::render
