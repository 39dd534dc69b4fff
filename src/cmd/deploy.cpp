#include "cmd/deploy.h"
#include "cmd/gang_instances.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/multi_deployment.h"
#include "cmd/pod_groups.h"
#include "cmd/scale.h"
#include "hardware/profile.h"
#include "kube/names.h"
#include "mindie/baseline_policy.h"
#include "mindie/deployer_scripts.h"
#include "mindie/node_fit.h"
#include "mindie/operator_rules.h"
#include "mindie/overrides.h"
#include "util/json_diff.h"
#include "util/json_path.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;
namespace fs = std::filesystem;

void add_deploy_flags(po::options_description& desc, DeployFlags& flags) {
  desc.add_options()
      ("filename,f", po::value(&flags.filename), "user_config.json to deploy")
      ("env-file,e", po::value(&flags.env_file), "env.json with the containers' environment")
      ("config-dir", po::value(&flags.config_dir), "Folder holding user_config.json and env.json")
      ("scripts-dir", po::value(&flags.scripts_dir),
       "PyMotor's deployer folder (or its startup/ folder, or a flat folder): the scripts motor-config stores")
      ("name", po::value(&flags.name), "InferServiceSet name (default: mindie-motor-<engine>)")
      ("overrides", po::value(&flags.overrides),
       "YAML of per-role changes to the built-in pod templates; stored in motor-config and reused by later deploys")
      ("dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
       "none, client (print only) or server (send with dryRun=All)");
  flags.output.bind(desc);
  desc.add_options()
      ("output-dir", po::value(&flags.output_dir), "Also write the rendered objects as YAML files here")
      ("force-conflicts", po::bool_switch(&flags.force_conflicts),
       "Take over fields another field manager owns (server-side apply force)")
      ("skip-node-check", po::bool_switch(&flags.skip_node_check),
       "Do not check that the engine pods fit the allocatable NPUs of the nodes their nodeSelector matches")
      ("adopt", po::bool_switch(&flags.adopt),
       "Take over a deployment PyMotor's deploy.py made in the namespace: labels, field ownership, motor-config's "
       "records (implies --force-conflicts)");
  add_wait_after_flags(desc, flags.wait);
  add_lock_flags(desc, flags.lock);
}

DeployOptions::DeployOptions(DeployFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void DeployOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void DeployOptions::validate() const {
  check_config_input_flags(flags_.filename, flags_.env_file, flags_.config_dir);
  if (!flags_.name.empty() && !kube::is_dns1123_label(flags_.name))
    throw UsageError("--name " + flags_.name + " is not a valid InferServiceSet name (a DNS-1123 label)");
  flags_.output.validate();
  check_wait_after_flags(flags_.wait, dry_run_);
  if (flags_.adopt && dry_run_ == DryRun::Client)
    throw UsageError("--adopt takes over objects on the cluster: preview it with --dry-run=server");
}

namespace {

std::string object_name(const json::object& obj) {
  return std::string(obj.at("metadata").at("name").as_string());
}

const kube::GVR& gvr_of(const json::object& obj) {
  const auto* r = kube::gvr::for_kind(obj.at("apiVersion").as_string(), obj.at("kind").as_string());
  if (!r) throw std::logic_error("rendered an object of unknown kind " + std::string(obj.at("kind").as_string()));
  return *r;
}

}  // namespace

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
  render_options_.service_id =
      config_->job_id + "_" +
      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count());
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

void DeployOptions::check_existing_baseline(const baseline::Baseline& existing, Printer& printer) const {
  const std::string& where = existing.where;
  const std::string mode = existing.deploy_mode();
  if (mode != config::to_string(config_->deploy_mode)) {
    throw CommandError("deploy_mode cannot change after deploy: the baseline in " + where + " has " + mode +
                       ", the config has " + std::string(config::to_string(config_->deploy_mode)) +
                       "; delete the deployment and deploy again");
  }
  const std::string& live_name = existing.recorded_workload;
  const std::string new_name = render::workload_name(*config_, render_options_);
  if (!live_name.empty() && live_name != new_name) {
    // Name what runs: an InferServiceSet, or (multi_deployment, single_container) the labelled Deployments.
    const std::string what = baseline::runs_deployments(mode) ? "the deployments of " : "InferServiceSet ";
    throw CommandError("the baseline in " + where + " belongs to " + what + live_name + ", not " + new_name +
                       ": pass --name " + live_name + " (renaming would leave the old service running)");
  }

  // A redeploy replaces the baseline whole (as re-applying deploy.py's files did): say what it changes, above
  // all instance counts that a scale had set.
  boost::system::error_code ec;
  const json::value old_doc = existing.raw ? json::parse(*existing.raw, ec) : json::value();
  if (!existing.raw || ec || !old_doc.is_object()) {
    printer.warning("the baseline in " + where + " is not valid JSON; deploy replaces it");
    return;
  }
  const auto changed = util::diff_paths(policy::comparable(old_doc), policy::comparable(config_->doc));
  if (changed.empty()) return;
  std::string msg = "deploy replaces the baseline in " + where + ", which differs at:";
  for (const auto& path : changed) msg += "\n  " + path;
  // PD-hybrid is the presence of hybrid_instances_num (config::parse_user_config).
  boost::system::error_code absent;
  const bool was_hybrid = old_doc.find_pointer("/motor_deploy_config/hybrid_instances_num", absent) != nullptr;
  if (was_hybrid != config_->hybrid()) {
    msg += std::string("\n  (the workload switches from ") + (was_hybrid ? "PD-hybrid" : "prefill/decode") +
           " to " + (config_->hybrid() ? "PD-hybrid" : "prefill/decode") + " instances)";
  } else {
    for (const auto& [path, role] : {std::pair{policy::kPrefillInstancesPath, "prefill"},
                                     std::pair{policy::kDecodeInstancesPath, "decode"},
                                     std::pair{policy::kHybridInstancesPath, "union"}}) {
      if (std::find(changed.begin(), changed.end(), path) != changed.end())
        msg += std::string("\n  (") + role + " instances change: use kubectl mindie scale to change counts alone)";
    }
  }
  printer.warning(msg);
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

void DeployOptions::check_nodes(kube::Client& client, Printer& printer) const {
  std::vector<std::string> resources;
  for (const auto& p : hardware::hardware_profiles())
    if (std::find(resources.begin(), resources.end(), p.npu_resource) == resources.end())
      resources.push_back(p.npu_resource);
  const auto demands = node_fit::npu_demands(objects_, resources);
  if (demands.empty()) return;
  std::vector<node_fit::NodeSupply> nodes;
  try {
    client.list_each(kube::gvr::kNodes, "", "", 500, "", [&](json::object& node) {
      nodes.push_back(node_fit::node_supply(node, resources));
    });
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    printer.warning("cannot check that the engine pods fit the nodes: listing nodes is forbidden (" +
                    e.status_message() + "); pods that fit no node stay Pending (kubectl mindie status explains "
                    "them); ask for list on nodes, or pass --skip-node-check to skip this check");
    return;
  }
  const auto short_roles = node_fit::pack(demands, nodes);
  if (short_roles.empty()) return;
  std::string msg = "the engine pods do not fit the cluster's nodes (counting allocatable NPUs, not what runs "
                    "there now); nothing was written:";
  for (const auto& s : short_roles) msg += "\n* " + s.message();
  msg += "\nlower the instance or pod counts, add or label nodes, or pass --skip-node-check to deploy anyway";
  throw CommandError(msg);
}

std::vector<std::string> DeployOptions::missing_scripts() const {
  std::vector<std::string> missing;
  for (const auto& key : deployer_scripts::needed(*config_))
    if (!render_options_.scripts.count(key)) missing.push_back(key);
  return missing;
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
  return "controller";  // the controller and its ServiceAccount, ClusterRole and ClusterRoleBinding
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
    const fs::path file = fs::path(flags_.output_dir) / (group + ".yaml");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw CommandError("cannot write " + file.string());
  }
}

void DeployOptions::run(kube::Client& client, Printer& printer) {
  read_inputs();  // before any request (when the caller has not): a bad file sends nothing
  NamespaceLock lock(client, printer, config_->job_id, "deploy", lock_wait_, dry_run_ == DryRun::None);
  try {
    run_once(client, printer, lock);
  } catch (const Replan&) {
    // Another command held the lock since our first read: what was read may be its half-done change. Plan again
    // from fresh reads, holding the lock now.
    DeployOptions fresh(flags_, namespace_flag_);
    fresh.complete();
    fresh.read_inputs();
    fresh.run_once(client, printer, lock);
  }
  lock.done();
}

void DeployOptions::run_once(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  lock_ = &lock;
  if (!scripts_notice_.empty()) printer.warning(scripts_notice_);
  for (const auto& notice : config_->notices) printer.warning(notice);
  const auto scripts_message = [&](const std::vector<std::string>& missing) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    return "the pods run " + names + " from configmap/" + baseline::kConfigMapName +
           ", which would not hold them: pass --scripts-dir DIR (the folder of PyMotor's deployer scripts)";
  };
  if (dry_run_ == DryRun::Client) {
    // Without the cluster we cannot know whether motor-config already holds the scripts.
    if (const auto missing = missing_scripts(); !missing.empty())
      printer.warning(scripts_message(missing) + " unless the cluster's motor-config already holds them");
    for (const auto& w : deployer_scripts::script_warnings(*config_, render_options_.scripts)) printer.warning(w);
    if (!flags_.output_dir.empty()) write_output_dir();
    for (const auto& obj : objects_) {
      printer.result(gvr_of(obj), object_name(obj), "serverside-applied", dry_run_, obj);
    }
    return;
  }

  if (config_->deploy_mode == config::DeployMode::InferServiceSet &&
      !client.has_group_version("mindcluster.huawei.com", "v1")) {
    throw CommandError("the server does not serve mindcluster.huawei.com/v1 (InferServiceSet): install MindCluster "
                       "infer-operator first; nothing was written");
  }
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.force = flags_.force_conflicts;
  opts.field_manager = render::kFieldManager;

  const auto existing = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, baseline::kConfigMapName);
  const std::optional<AdoptionPlan> takeover = plan_takeover(client, existing);
  // Client-side apply's fields are handed over below; a forced apply then owns every field deploy.py set.
  if (takeover) opts.force = true;
  if (existing) {
    const baseline::Baseline stored = baseline::read_baseline(*existing, config_->job_id);
    check_existing_baseline(stored, printer);
    keep_stored_files(stored);
  }
  if (const auto missing = missing_scripts(); !missing.empty())
    throw CommandError(scripts_message(missing) + "; nothing was written");
  for (const auto& w : deployer_scripts::script_warnings(*config_, render_options_.scripts)) printer.warning(w);
  check_operator_rules(client, printer, existing.has_value());
  if (!flags_.skip_node_check) check_nodes(client, printer);
  if (!flags_.output_dir.empty()) write_output_dir();  // after keep_stored_files: the files show what is sent
  if (existing && !opts.dry_run) {
    // A redeploy can meet field conflicts on the live InferServiceSet (someone else changed it): find them with a
    // server dry run before the baseline is rewritten, so a refusal leaves everything as it was.
    kube::WriteOptions probe = opts;
    probe.dry_run = true;
    apply_object(client, objects_.back(), probe);
  }

  // The baseline as read: its resourceVersion guards the baseline write and is recorded in the intent.
  std::optional<json::object> baseline_read = existing;
  change::Intent intent = plan_intent(baseline_read);
  lock.before_write(intent);
  std::vector<std::string> written;
  if (takeover) {
    if (!takeover->empty())
      printer.warning("adopting what another tool (deploy.py) made in namespace " + config_->job_id + ":" +
                      takeover->describe());
    try {
      hand_over_fields(client, *takeover, opts, [&](const ForeignObject& o) {
        written.push_back(o.text() + " (field ownership)");
        printer.result(*o.gvr, o.name, "adopted", dry_run_, {});
      });
      // The hand-over patched motor-config's field ownership (a new resourceVersion): guard against the state it
      // left, provided its data is still what was read.
      if (existing && !opts.dry_run) {
        baseline_read = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, baseline::kConfigMapName);
        const json::value* was = existing->if_contains("data");
        const json::value* now = baseline_read ? baseline_read->if_contains("data") : nullptr;
        if (now == nullptr || was == nullptr || *now != *was)
          throw CommandError("configmap/" + std::string(baseline::kConfigMapName) + " in namespace " +
                             config_->job_id + " was changed by someone else while deploy --adopt took it over");
        intent = plan_intent(baseline_read);
      }
    } catch (...) {
      if (written.empty() || opts.dry_run) throw;
      lock.settle();  // field ownership only: the baseline and the workload are deploy.py's still, and agree
      std::string state = "deploy --adopt stopped after handing over the fields of:";
      for (const auto& w : written) state += "\n  " + w;
      state += "\nnothing else was changed; fix the cause above and re-run: " + rerun_command();
      throw PartialFailure(std::current_exception(), state);
    }
  }
  std::vector<change::Step> steps;
  for (const auto& obj : objects_) steps.push_back(object_step(client, obj, baseline_read, opts, printer));
  LockFence fence(lock, intent);
  change::Runner runner(fence, wording(opts.dry_run));
  try {
    runner.run(steps);
  } catch (...) {
    // Only the hand-over of an adoption was written: deploy.py's baseline and workload still agree.
    if (!written.empty() && runner.written().empty() && !opts.dry_run)
      throw PartialFailure(std::current_exception(), "deploy --adopt handed over the fields of what deploy.py made, "
                                                     "then stopped; nothing else was changed; re-run: " +
                                                         rerun_command());
    throw;
  }

  // First what the operator now remembers (the PodGroup cleanup below may fail after the writes are done).
  if (!opts.dry_run) record_gang_instances(client, config_->job_id, objects_.back(), gang_changes_, false, opts, printer);
  if (!gang_scale_in_.empty())
    for (const auto& pg : remove_stale_pod_groups(client, config_->job_id, render::workload_name(*config_, render_options_),
                                                  gang_scale_in_, opts, "deploy wrote every object"))
      printer.result(kube::gvr::kPodGroups, pg, "deleted", dry_run_, {});

  // deploy.py's objects that ours replace under other names: removed once ours are written (the controller's
  // ServiceAccount is bound by our ClusterRoleBinding by now).
  if (takeover)
    for (const auto& o : takeover->remove) {
      try {
        client.remove(*o.gvr, o.ns, o.name, opts);
      } catch (const kube::ApiError& e) {
        if (e.is_not_found()) continue;
        throw PartialFailure(std::current_exception(),
                             "deploy wrote every object but could not delete " + o.text() +
                                 ", deploy.py's, which kubectl-mindie's objects replace; re-run: " + rerun_command());
      }
      printer.result(*o.gvr, o.name, "deleted", dry_run_, {});
    }

  // multi_deployment, single_container: what the baseline no longer has would keep running unseen — engine
  // Deployments of instances beyond the counts (a redeploy with lower counts than a scale had set; the coordinator
  // reads the counts from the baseline) and components turned off (kv-pool, kv-conductor, mf-store with their
  // Services), and Services PyMotor 7d15c04 renamed (§U6: mindie-motor-coordinator-service, the single_container
  // "<job_id>-single-container" Service). Engines go highest index first, as scale deletes them; then the rest.
  // A renamed Service that is not ours (deploy.py's) is left, with a warning.
  const bool deployments_mode = baseline::runs_deployments(config::to_string(config_->deploy_mode));
  const std::string workload = render::workload_name(*config_, render_options_);
  if (existing && deployments_mode) {
    std::set<std::pair<std::string, std::string>> wanted;  // resource, name
    for (const auto& obj : objects_) wanted.emplace(gvr_of(obj).resource, object_name(obj));
    for (const auto& [r, name] : stale_workload_objects(client, config_->job_id, workload, wanted)) {
      try {
        client.remove(*r, config_->job_id, name, opts);
      } catch (const kube::ApiError& e) {
        if (e.is_not_found()) continue;
        throw PartialFailure(std::current_exception(),
                             "deploy wrote every object but could not delete " + r->kind_dot_group() + "/" + name +
                                 ", which the baseline no longer has; re-run: " + rerun_command());
      }
      printer.result(*r, name, "deleted", dry_run_, {});
    }
  }
  if (deployments_mode && !takeover)  // an adoption removed them
    for (const auto& w : foreign_renamed_services(client, config_->job_id, workload, render::renamed_services(*config_)))
      printer.warning(w);
}

change::Step DeployOptions::object_step(kube::Client& client, const json::object& obj,
                                       const std::optional<json::object>& baseline_read,
                                       const kube::WriteOptions& opts, Printer& printer) const {
  const kube::GVR& r = gvr_of(obj);
  const bool is_baseline = obj.at("kind") == "ConfigMap";
  change::Step step;
  step.name = r.kind_dot_group() + "/" + object_name(obj);
  step.verb = "serverside-applied";
  step.write = [this, &client, &obj, &baseline_read, opts, &printer, &r, is_baseline] {
    json::object stored = is_baseline ? apply_baseline(client, obj, baseline_read, opts) : apply_object(client, obj, opts);
    printer.result(r, object_name(obj), "serverside-applied", dry_run_, std::move(stored));
  };
  // Only the baseline is read back (a lost reply): a workload object without an answer counts as maybe written,
  // which changes nothing, since deploy goes only forward and every apply is idempotent.
  if (is_baseline)
    step.applied = [this, &client, &baseline_read] {
      const std::optional<bool> written = baseline_written(client, baseline_read);
      if (!written) throw CommandError("configmap/" + std::string(baseline::kConfigMapName) + " could not be read back");
      return *written;
    };
  return step;  // no undo: the next command applies the workload from the baseline (recover())
}

change::Wording DeployOptions::wording(bool dry_run) const {
  change::Wording w;
  w.change = "deploy";
  w.dry_run = dry_run;
  w.recovery = "the baseline in configmap/" + std::string(baseline::kConfigMapName) + " may describe a workload "
               "that is not (yet) live; its record stays in lease/" + kLockLeaseName + ": the next kubectl-mindie "
               "command in namespace " + config_->job_id + " applies the workload from the baseline first; or fix the "
               "cause above and re-run: " + rerun_command();
  return w;
}

void DeployOptions::check_operator_rules(kube::Client& client, Printer& printer, bool redeploy) {
  const std::string& ns = config_->job_id;
  // nodePorts: one taken anywhere in the cluster stops the role for good (the operator creates Services first).
  if (const auto claims = render::node_port_claims(*config_, render_options_); !claims.empty()) {
    std::optional<json::object> services;
    try {
      services = client.list(kube::gvr::kServices, "", "", 500);
    } catch (const kube::ApiError& e) {
      if (e.code() != 403) throw;
      std::string ports, keys;
      for (const auto& c : claims) {
        ports += (ports.empty() ? "" : ", ") + std::to_string(c.port);
        keys += (keys.empty() ? "" : ", ") + c.key;
      }
      printer.warning("cannot check that nodePort" + std::string(claims.size() > 1 ? "s " : " ") + ports +
                      (claims.size() > 1 ? " are" : " is") + " free: listing Services in all namespaces is "
                      "forbidden (" + e.status_message() + "); a port another Service holds keeps the role from "
                      "starting (set " + keys + " to choose another)");
    }
    if (services) {
      const json::array& items = services->at("items").as_array();
      std::vector<render::NodePortClaim> to_check;
      for (const auto& c : claims) {
        // infer-operator never updates a role Service: a live one keeps its port whatever the config says now.
        const auto live = operator_rules::own_node_port(c, items);
        if (config_->deploy_mode == config::DeployMode::InferServiceSet && live && *live != c.port) {
          printer.warning("service/" + c.service + " keeps nodePort " + std::to_string(*live) + ", not " +
                          std::to_string(c.port) + ": infer-operator never updates a role Service; to move it, "
                          "delete it (kubectl delete service -n " + ns + " " + c.service + ") and deploy again, "
                          "or set " + c.key + " to " + std::to_string(*live));
          continue;
        }
        to_check.push_back(c);
      }
      const auto conflicts = operator_rules::node_port_conflicts(to_check, items);
      if (!conflicts.empty()) {
        std::string msg, keys;
        for (const auto& c : conflicts) {
          msg += (msg.empty() ? "" : "\n") + std::string("nodePort ") + std::to_string(c.claim.port) + " of service/" +
                 c.claim.service + " in namespace " + c.claim.ns + " is already allocated to service/" +
                 c.holder_name + " in namespace " + c.holder_ns + " (" + c.claim.key + ")";
          if (keys.find(c.claim.key) == std::string::npos) keys += (keys.empty() ? "" : ", ") + c.claim.key;
        }
        throw CommandError(msg + "\nset " + keys + " to a free port (30000..32767); nothing was written");
      }
    }
  }
  if (config_->deploy_mode != config::DeployMode::InferServiceSet) return;
  const json::object& iss = objects_.back();

  // Gang-scheduled roles need Volcano's PodGroup CRD, or the operator refuses them (rules A3).
  if (const auto gang = operator_rules::gang_roles(iss);
      !gang.empty() && !client.has_group_version(kube::gvr::kPodGroups.group, kube::gvr::kPodGroups.version)) {
    std::string roles;
    for (const auto& r : gang) roles += (roles.empty() ? "" : ", ") + r;
    const bool several = gang.size() > 1;
    throw CommandError("role" + std::string(several ? "s " : " ") + roles + (several ? " run" : " runs") +
                       " more than one pod per instance, so " + (several ? "they are" : "it is") +
                       " gang-scheduled, and infer-operator refuses " + (several ? "them" : "it") + " unless Volcano's "
                       "PodGroup CRD (podgroups.scheduling.volcano.sh, " + kube::gvr::kPodGroups.api_version() +
                       ") is established when the operator starts: the server does not serve it; install Volcano "
                       "(then restart infer-operator); nothing was written");
  }
  if (!redeploy) return;

  // What the operator fixed when it created the live InstanceSets (rules D3), and the workloads it never updates.
  const std::string selector = "infer.huawei.com/inferservice-name=" + render::workload_name(*config_, render_options_) + "-0";
  // Each list may be forbidden to a user who may still deploy: then the check it serves is skipped, with a warning.
  const auto list_or_warn = [&](const kube::GVR& r, const std::string& check) -> std::optional<json::object> {
    try {
      return client.list(r, ns, selector);
    } catch (const kube::ApiError& e) {
      if (e.code() != 403) throw;
      printer.warning("cannot list " + r.resource + " in namespace " + ns + " (" + e.status_message() + "): " + check);
      return std::nullopt;
    }
  };
  const auto listed_sets = list_or_warn(kube::gvr::kInstanceSets,
                                        "not checked whether this deploy changes what the live InstanceSets fixed at "
                                        "creation (infer-operator would not carry that out)");
  if (!listed_sets || listed_sets->at("items").as_array().empty()) return;
  const json::object& sets = *listed_sets;
  // Gang roles this deploy scales in: their removed instances' PodGroups go once everything is written (D1).
  for (const auto& [role, wanted] : render::desired_role_replicas(*config_)) {
    if (!operator_rules::is_gang_role(iss, role)) continue;
    for (const auto& s : sets.at("items").as_array()) {
      if (util::str(util::find(&s, {"metadata", "labels", "infer.huawei.com/instanceset-name"})) != role) continue;
      const std::int64_t live = util::num(util::find(&s, {"spec", "replicas"}));
      if (live > wanted) gang_scale_in_[role] = wanted;
      if (live != wanted) gang_changes_.push_back({role, 0, live, wanted, true});
    }
  }
  refuse_gang_rebuild_loop(client, ns, iss, gang_changes_, false);
  if (const auto fixed = operator_rules::fixed_at_creation_changes(iss, sets.at("items").as_array()); !fixed.empty()) {
    std::string msg;
    for (const auto& f : fixed)
      msg += (msg.empty() ? "" : "\n") + std::string("role ") + f.role + ": this deploy changes " + f.what + " from \"" +
             f.live + "\" to \"" + f.wanted + "\", but infer-operator fixes instanceset/" + f.instance_set +
             "'s labels and annotations when it creates it: its new instances would keep \"" + f.live + "\"";
    throw CommandError(msg + "\ndelete the deployment (kubectl mindie delete -n " + ns + ") and deploy again; nothing "
                             "was written");
  }
  json::array workloads;
  for (const kube::GVR* r : {&kube::gvr::kStatefulSets, &kube::gvr::kDeployments}) {
    const auto listed = list_or_warn(*r, "which running instances keep an earlier pod template is unknown");
    if (!listed) return;
    append_with_kind(workloads, listed->at("items").as_array(), r->kind);
  }
  for (const auto& [role, old] : operator_rules::instances_on_other_templates(iss, workloads)) {
    const bool is_gang = operator_rules::is_gang_role(iss, role);
    printer.warning("role " + role + ": " + std::to_string(old.size()) + " running instance" +
                    (old.size() > 1 ? "s keep" : " keeps") +
                    " an earlier pod template: infer-operator applies pod template changes only to instances it "
                    "creates from now on; to recreate one from the new template, " +
                    operator_rules::recreate_advice(ns, role, is_gang, old));
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
                       render::kFieldManager + " (PyMotor's deploy.py writes it so). deploy would write over:" +
                       plan.describe() +
                       "\nre-run with --adopt to take it over (labels, field ownership, motor-config's records), after "
                       "which scale, status and delete work on it; nothing was written");
  return plan;
}

json::object DeployOptions::apply_object(kube::Client& client, const json::object& obj,
                                         const kube::WriteOptions& opts) const {
  // Fields of kubectl-mindie's own scale or update-config are taken back by force, but only while the lock is ours:
  // they may be those of a rival that took the lock over while this deploy stalled.
  return apply_taking_back_own_fields(client, gvr_of(obj), obj, opts, [this] {
    if (lock_ != nullptr) lock_->confirm();
  });
}

std::vector<std::string> DeployOptions::baseline_keys() const {
  std::vector<std::string> keys;
  for (const auto& [k, v] : objects_.front().at("data").as_object()) keys.emplace_back(k);  // motor-config first
  std::sort(keys.begin(), keys.end());
  return keys;
}

change::Intent DeployOptions::plan_intent(const std::optional<json::object>& existing) const {
  const json::object& cm = objects_.front();  // render: motor-config comes first
  change::DeployIntent d;
  d.mode = config::to_string(config_->deploy_mode);
  d.workload = render::workload_name(*config_, render_options_);
  if (existing)
    d.baseline_resource_version =
        kube::resource_version_of(*existing, "configmap/" + std::string(baseline::kConfigMapName));
  d.baseline_digest = baseline::data_digest(cm.at("data").as_object());
  d.baseline_keys = baseline_keys();
  d.adopt = flags_.adopt;
  d.force_conflicts = flags_.force_conflicts;
  // The counts it changes, for status and the recovery line ("prefill 1 → 2").
  if (existing) {
    const baseline::Baseline stored = baseline::read_baseline(*existing, config_->job_id);
    if (stored.config && stored.config->hybrid() == config_->hybrid()) {
      change::CountChange counts{{}, counts_of(*stored.config), counts_of(*config_)};
      for (const char* role : {"prefill", "decode", "union", "encode"})
        if (counts.from.of(role) != counts.to.of(role)) counts.roles.emplace_back(role);
      if (!counts.roles.empty()) d.counts = std::move(counts);
    }
  }
  change::Intent intent{std::move(d)};
  intent.supersedes = stands_for_;
  return intent;
}

json::object DeployOptions::apply_baseline(kube::Client& client, const json::object& obj,
                                           const std::optional<json::object>& existing,
                                           const kube::WriteOptions& opts) const {
  if (!existing) return apply_object(client, obj, opts);
  json::object guarded = obj;
  const json::value read_rv(kube::resource_version_of(*existing, "configmap/" + std::string(baseline::kConfigMapName)));
  guarded["metadata"].as_object()["resourceVersion"] = read_rv;
  try {
    return apply_object(client, guarded, opts);
  } catch (const kube::ApiError& e) {
    // A conflict without causes is the resourceVersion precondition (field conflicts name their fields).
    if (!e.is_conflict() || !e.causes().empty()) throw;
  }
  const auto live = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, baseline::kConfigMapName);
  const json::value* live_data = live ? live->if_contains("data") : nullptr;
  if (live_data != nullptr && live_data->is_object() &&
      baseline::data_digest(live_data->as_object(), baseline_keys()) ==
          baseline::data_digest(obj.at("data").as_object()))
    return *live;  // what this deploy writes: its own apply, retried after a lost reply, met itself
  // A conflict: the runner confirms the lock before anything else (a rival that took it over wrote this).
  throw change::PreconditionFailed("configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + config_->job_id +
                     " was changed by someone else since this deploy read it (resourceVersion " +
                     std::string(read_rv.as_string()) + ", now " +
                     (live ? std::string(live->at("metadata").at("resourceVersion").as_string()) : "deleted") +
                     "), outside kubectl-mindie's lock: the baseline was not written; re-run deploy to plan against "
                     "what it holds now");
}

std::optional<bool> DeployOptions::baseline_written(kube::Client& client,
                                                   const std::optional<json::object>& read) const {
  try {
    const auto live = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, baseline::kConfigMapName);
    const json::value* data = live ? live->if_contains("data") : nullptr;
    if (data == nullptr || !data->is_object()) return false;
    // Written: it holds what this deploy writes, and it is not the object read (which may hold the same data).
    return baseline::data_digest(data->as_object(), baseline_keys()) ==
               baseline::data_digest(objects_.front().at("data").as_object()) &&
           (!read || live->at("metadata").at("resourceVersion") != read->at("metadata").at("resourceVersion"));
  } catch (const std::exception&) {
    return std::nullopt;  // unknown: say so, and keep the intent for the next command (never settled)
  }
}

void DeployOptions::read_baseline_inputs(const baseline::Baseline& stored) {
  config_ = stored.user();
  env_ = stored.env();
  if (stored.overrides_raw)
    render_options_.overrides = overrides::parse_overrides(
        *stored.overrides_raw, "configmap/" + std::string(baseline::kConfigMapName) + " " + baseline::kOverridesKey);
  render_options_.scripts = stored.scripts;
  render_options_.service_id = stored.service_id.empty() ? config_->job_id : stored.service_id;
  render_options_.service_set_name = stored.recorded_workload;
  render_objects();
  inputs_read_ = true;
}

/// The lock finishes or reverts an interrupted deploy through this (cmd/lock.h, register_recovery).
const bool kRecoveryRegistered = register_recovery("deploy", &DeployOptions::recover);

std::string DeployOptions::recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                   const change::Intent& recorded, const std::string& what) {
  const auto& intent = std::get<change::DeployIntent>(recorded.change);
  const std::string change = change::count_change_text(intent);
  const std::string head = "recovered " + what + ": " + (change.empty() ? "" : change + ", ");
  const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  const json::value* data = cm ? cm->if_contains("data") : nullptr;
  std::vector<std::string> keys;  // the keys it wrote (all of motor-config's when the intent does not say)
  if (intent.baseline_keys) {
    keys = *intent.baseline_keys;
  } else if (data != nullptr && data->is_object()) {
    for (const auto& [key, v] : data->get_object()) keys.emplace_back(key);
  }
  const bool written = data != nullptr && data->is_object() &&
                       baseline::data_digest(data->as_object(), keys) == intent.baseline_digest;
  const bool unmoved = cm ? cm->at("metadata").at("resourceVersion") == json::value(intent.baseline_resource_version)
                          : intent.baseline_resource_version.empty();
  if (!written && unmoved) {
    // It stood for an earlier intent (it superseded one, or it is a recovery's): that one is still to recover.
    if (recorded.supersedes) {
      const json::object& earlier = *recorded.supersedes;
      return head + "its baseline had not been written; " +
             recover_interrupted_change(client, lock, ns, earlier, intent_left_by({}, earlier));
    }
    if (!cm) return head + "dropped: nothing of it had been written";
    return head + "dropped: the baseline had not been written, and the workload is written after it";
  }
  if (!cm) return head + "nothing to do: the deployment is gone (configmap/" + baseline::kConfigMapName + ")";
  if (!has_our_records(*cm))
    return "Warning: found the record of " + what + ", but configmap/" + baseline::kConfigMapName +
           " is not kubectl-mindie's (no label " + render::kManagedByLabel + "); removed the record, changed nothing";
  // Whatever was written, the workload made from the baseline as it is now agrees with it.
  DeployFlags flags;
  flags.skip_node_check = true;  // it runs already, or was checked by the deploy that wrote the baseline
  flags.adopt = intent.adopt;
  flags.force_conflicts = intent.force_conflicts;
  DeployOptions o(flags, ns);
  o.complete();
  o.read_baseline_inputs(baseline::read_baseline(*cm, ns));
  // Its own intent stands for this one: cut short before its baseline write, this one is recovered again.
  o.stands_for_ = change::to_record(recorded);
  if (json::serialize(*o.stands_for_).size() > 16 * 1024) o.stands_for_->erase("supersedes");
  std::ostream quiet(nullptr);  // the line returned says what happened; the deploy's own output would repeat it
  Printer printer(quiet, quiet, "");
  o.run_once(client, printer, lock);
  return head + (written ? "completed: the workload was applied from the baseline it had written"
                         : "completed: the workload was applied from the baseline in configmap/" +
                               std::string(baseline::kConfigMapName));
}

namespace {

/// deploy: DeployOptions, or StormDeployOptions with --framework aibrix.
class DeployInvocation : public Invocation {
 public:
  explicit DeployInvocation(po::options_description& desc) {
    add_deploy_flags(desc, flags_);
    add_framework_flags(desc, framework_, "deploy");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      StormDeployOptions o(flags_, global.kube.namespace_);
      o.complete();
      o.validate();
      o.read_inputs();
      if (!o.needs_server()) {
        OfflineTransport offline;
        kube::Client client(offline);
        // No watch either: --wait is refused with --dry-run.
        o.run(client, printer, [] { return std::make_unique<OfflineTransport>(); });
        return;
      }
      Session session(global, std::cerr, kLockRequestBound);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
      return;
    }
    DeployOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    o.read_inputs();
    if (!o.needs_server()) {
      OfflineTransport offline;
      kube::Client client(offline);
      o.run(client, printer);
      return;
    }
    Session session(global, std::cerr, kLockRequestBound);
    o.run(session.client(), printer);
    wait_after(session, flags_.wait, o.target_namespace(), printer);
  }

 private:
  DeployFlags flags_;
  FrameworkFlags framework_;  ///< --framework aibrix: the AIBrix StormService path (cmd/aibrix.h)
};

}  // namespace

Command deploy_command() {
  return {"deploy",
          "Validate user_config.json and deploy it (motor-config baseline, RBAC, the workload)",
          "kubectl mindie deploy (-f user_config.json [-e env.json] | --config-dir DIR) [flags]",
          "Validate the config completely, then write the motor-config ConfigMap (the baseline), the controller's\n"
          "RBAC and the workload by server-side apply: an InferServiceSet (deploy_mode infer_service_set, the\n"
          "default), Deployments and Services (multi_deployment) or one Deployment and Service (single_container).\n"
          "The namespace is motor_deploy_config.job_id. Before the first write it checks what infer-operator would\n"
          "refuse: a nodePort another Service holds, gang-scheduled roles without Volcano's PodGroup CRD, and on a\n"
          "redeploy a change of what live InstanceSets fixed at creation; and that the engine pods fit the\n"
          "allocatable NPUs of the nodes their nodeSelector matches (--skip-node-check skips that). A namespace\n"
          "another tool deployed (motor-config without kubectl-mindie's records, e.g. PyMotor's deploy.py) is refused\n"
          "unless --adopt, which takes its objects over and deletes those ours replace.",
          "  # Deploy from a folder holding user_config.json and env.json, with PyMotor's deployer folder\n"
          "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer\n\n"
          "  # Print the objects without contacting the cluster\n"
          "  kubectl mindie deploy -f user_config.json --dry-run=client -o yaml\n\n"
          "  # Preview taking over a namespace PyMotor's deploy.py deployed\n"
          "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer --adopt --dry-run=server\n\n"
          "  # Take it over: labels, field ownership, motor-config's records\n"
          "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer --adopt\n\n"
          "  # Deploy an AIBrix StormService and its Services (stormservice.yaml)\n"
          "  kubectl mindie deploy --framework aibrix -f stormservice.yaml\n",
          DeployFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<DeployInvocation>(desc);
          },
          changing_exit_codes("a conflict over fields another manager owns, the operator's CRD or a node check "
                              "failing, --wait timing out (naming every pod not ready)")};
}

}  // namespace mindie::cmd
