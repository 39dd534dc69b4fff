#include <algorithm>
#include <chrono>
#include <filesystem>

#include "cmd/deploy.h"
#include "cmd/deploy_steps.h"
#include "mindie/deployer_scripts.h"
#include "mindie/overrides.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace json = boost::json;
namespace fs = std::filesystem;
namespace po = boost::program_options;

void add_deploy_flags(po::options_description& desc, DeployFlags& flags) {
  desc.add_options()("filename,f", po::value(&flags.filename), "user_config.json to deploy")(
      "env-file,e", po::value(&flags.env_file), "env.json with the containers' environment")(
      "config-dir", po::value(&flags.config_dir), "Folder holding user_config.json and env.json")(
      "scripts-dir", po::value(&flags.scripts_dir),
      "PyMotor's deployer folder (or its startup/ folder, or a flat folder): the scripts motor-config stores")(
      "name", po::value(&flags.name), "InferServiceSet name (default: mindie-motor-<engine>)")(
      "overrides", po::value(&flags.overrides),
      "YAML of per-role changes to the built-in pod templates; stored in motor-config and reused by later deploys")(
      "dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
      "none, client (print only) or server (send with dryRun=All)");
  flags.output.bind(desc);
  desc.add_options()("output-dir", po::value(&flags.output_dir), "Also write the rendered objects as YAML files here")(
      "force-conflicts", po::bool_switch(&flags.force_conflicts),
      "Take over fields another field manager owns (server-side apply force)")(
      "skip-node-check", po::bool_switch(&flags.skip_node_check),
      "Do not check that the engine pods fit the free NPUs of the nodes their nodeSelector matches")(
      "adopt", po::bool_switch(&flags.adopt),
      "Take over a deployment PyMotor's deploy.py made in the namespace: labels, field ownership, motor-config's "
      "records (implies --force-conflicts)")(
      "prune", po::bool_switch(&flags.prune),
      "Confirm that a redeploy removes running instances: counts below the live ones, Deployments the config no "
      "longer has")("rollout", po::bool_switch(&flags.rollout),
                    "Then replace the instances on an earlier pod template one at a time, as kubectl mindie rollout "
                    "restart does; --timeout bounds it")(
      "stop-operator", po::bool_switch(&flags.stop_operator),
      "With --rollout: gang-scheduled roles may be rolled by stopping infer-operator (in every namespace) while each "
      "old instance's pods go, as kubectl mindie rollout restart --stop-operator does");
  add_wait_after_flags(desc, flags.wait);
  add_lock_flags(desc, flags.lock);
  add_history_flags(desc, flags.history);
}

void DeployOptions::read_inputs() {
  if (inputs_read_) return;
  auto inputs = read_config_inputs(flags_.filename, flags_.env_file, flags_.config_dir);
  config_ = std::move(inputs.user);
  env_ = std::move(inputs.env);
  check_namespace_flag(namespace_flag_, config_->job_id);
  if (!flags_.scripts_dir.empty()) {
    const ScriptsDir dir = read_scripts(flags_.scripts_dir);
    check_needed_scripts(dir, deployer_scripts::needed(*config_));
    render_options_.scripts = dir.scripts;
    scripts_notice_ = dir.left_out_notice();
  }
  // Validated here, with the config, before any request; collisions with the templates are found by the render.
  if (!flags_.overrides.empty())
    render_options_.overrides = overrides::parse_overrides(read_file(flags_.overrides), flags_.overrides);
  render_options_.service_set_name = flags_.name;
  // PyMotor's "<job_id>_<timestamp>"; replaced by the stored one when motor-config exists (keep_stored_files).
  render_options_.service_id = config_->job_id + "_" +
                               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count());
  render_objects();
  inputs_read_ = true;
}

void DeployOptions::render_objects() {
  const config::EnvConfig* env = env_ ? &*env_ : nullptr;
  switch (config_->deploy_mode) {
    case config::DeployMode::MultiDeployment:
      objects_ = render::render_multi_deployment(*config_, env, render_options_);
      break;
    case config::DeployMode::SingleContainer:
      objects_ = render::render_single_container(*config_, env, render_options_);
      break;
    case config::DeployMode::InferServiceSet:
      objects_ = render::render_infer_service_set(*config_, env, render_options_);
      break;
  }
}

void DeployOptions::keep_stored_files(const baseline::Baseline& existing) {
  bool kept = false;
  // SERVICE_ID is generated once, at the first deploy: a redeploy renders the same functions (issue 3).
  if (const std::string& id = existing.service_id; !id.empty() && id != render_options_.service_id) {
    render_options_.service_id = id;
    kept = true;
  }
  if (existing.env_raw && !env_) {
    // Parsed, not only kept: the set_*_env functions are generated from it.
    try {
      env_ = existing.env();
    } catch (const validation::ValidationError& e) {
      throw CommandError(std::string(e.what()) + "\npass -e env.json to replace it; nothing was written");
    }
    kept = true;
  }
  // Stored overrides apply again unless --overrides replaces them (an empty file clears them).
  if (existing.overrides_raw && !render_options_.overrides) {
    const std::string source = "configmap/" + std::string(baseline::kConfigMapName) + " " + baseline::kOverridesKey;
    try {
      render_options_.overrides = overrides::parse_overrides(*existing.overrides_raw, source);
    } catch (const validation::ValidationError& e) {
      throw CommandError(std::string(e.what()) + "\npass --overrides FILE to replace them; nothing was written");
    }
    kept = true;
  }
  for (const auto& [key, text] : existing.scripts)
    if (render_options_.scripts.emplace(key, text).second) kept = true;
  if (kept) render_objects();
}

std::string DeployOptions::rerun_command() const {
  std::string cmd = "kubectl mindie deploy -n " + config_->job_id;
  if (!flags_.config_dir.empty()) cmd += " --config-dir " + flags_.config_dir;
  if (!flags_.filename.empty()) cmd += " -f " + flags_.filename;
  if (!flags_.env_file.empty()) cmd += " -e " + flags_.env_file;
  if (!flags_.scripts_dir.empty()) cmd += " --scripts-dir " + flags_.scripts_dir;
  if (!flags_.name.empty()) cmd += " --name " + flags_.name;
  if (!flags_.overrides.empty()) cmd += " --overrides " + flags_.overrides;
  if (flags_.adopt) cmd += " --adopt";
  if (flags_.prune) cmd += " --prune";
  return cmd;
}

namespace {

/// The --output-dir file an object goes to, named as deploy.py users know them (issue 3, "Rendering for review"):
/// the ConfigMap in motor_config.yaml; in infer_service_set mode the ServiceAccount, cluster RBAC and
/// InferServiceSet together in infer_service.yaml, the one file deploy.py applied; in multi_deployment mode one
/// file per component as deploy.py wrote them: controller.yaml (with the ServiceAccount and RBAC the controller
/// uses), coordinator.yaml, engine_p<i>.yaml / engine_d<i>.yaml per engine instance (engine_e<i>.yaml for encode,
/// engine_u<i>.yaml for PD-hybrid's union), kv_pool.yaml, kv_conductor.yaml, mf_store.yaml; in single_container
/// mode everything else in single_container.yaml.
std::string output_group(const json::object& obj, config::DeployMode mode) {
  if (obj.at("kind") == "ConfigMap") return "motor_config";
  if (mode == config::DeployMode::SingleContainer) return "single_container";
  if (mode != config::DeployMode::MultiDeployment) return "infer_service";
  std::string role, index;
  if (const auto* labels = obj.at("metadata").as_object().if_contains("labels"); labels && labels->is_object()) {
    const auto& l = labels->as_object();
    if (const auto* v = l.if_contains(render::kComponentLabel); v && v->is_string()) role = v->as_string();
    if (const auto* v = l.if_contains(render::kInstanceIndexLabel); v && v->is_string()) index = v->as_string();
  }
  if (role == "prefill") return "engine_p" + index;
  if (role == "decode") return "engine_d" + index;
  if (role == "encode") return "engine_e" + index;
  if (role == "union") return "engine_u" + index;
  if (role == "coordinator" || role == "kv-pool" || role == "kv-conductor" || role == "mf-store") {
    std::replace(role.begin(), role.end(), '-', '_');
    return role;
  }
  return "controller";  // the controller and its ServiceAccount and RBAC
}

}  // namespace

void DeployOptions::write_output_dir() const {
  std::error_code ec;
  fs::create_directories(flags_.output_dir, ec);
  if (ec) throw CommandError("cannot create --output-dir " + flags_.output_dir + ": " + ec.message());
  // One multi-document file per group, in write order.
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& obj : objects_) {
    const std::string group = output_group(obj, config_->deploy_mode);
    auto it = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.first == group; });
    if (it == files.end()) it = files.insert(files.end(), {group, ""});
    else it->second += "---\n";
    it->second += util::json_to_yaml(obj);
  }
  for (const auto& [group, text] : files) {
    // A file planted as a symbolic link (to ~/.ssh/authorized_keys, say) is refused, never written through.
    write_file_no_follow((fs::path(flags_.output_dir) / (group + ".yaml")).string(), text);
  }
}

std::optional<AdoptionPlan> DeployOptions::plan_takeover(kube::Client& client,
                                                         const std::optional<json::object>& existing) const {
  const bool foreign = existing && !has_our_records(*existing);
  if (!foreign && !flags_.adopt) return std::nullopt;
  AdoptionPlan plan = plan_adoption(client, config_->job_id, objects_, render::renamed_services(*config_));
  if (foreign && !flags_.adopt)
    throw CommandError("namespace " + config_->job_id + " holds a deployment kubectl-mindie did not make: configmap/" +
                       baseline::kConfigMapName + " has no label " + render::kManagedByLabel + "=" +
                       render::kFieldManager +
                       " (PyMotor's deploy.py writes it so). deploy would write over:" + plan.describe() +
                       "\nre-run with --adopt to take it over (labels, field ownership, motor-config's records), after "
                       "which scale, status and delete work on it; nothing was written");
  return plan;
}

std::vector<std::string> DeployOptions::missing_scripts() const {
  std::vector<std::string> missing;
  for (const auto& key : deployer_scripts::needed(*config_))
    if (!render_options_.scripts.count(key)) missing.push_back(key);
  return missing;
}

}  // namespace mindie::cmd
