#include "cmd/scale.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cmd/adopt.h"
#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/gang_instances.h"
#include "cmd/multi_deployment.h"
#include "cmd/pod_groups.h"
#include "mindie/baseline_policy.h"
#include "mindie/operator_rules.h"
#include "mindie/overrides.h"
#include "mindie/render.h"
#include "mindie/scale_plan.h"
#include "util/json_text.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_scale_flags(po::options_description& desc, ScaleFlags& flags) {
  desc.add_options()
      ("prefill", po::value<int>()->notifier([&flags](int v) { flags.prefill = v; }), "Prefill instances (1..16)")
      ("decode", po::value<int>()->notifier([&flags](int v) { flags.decode = v; }), "Decode instances (1..16)")
      ("hybrid", po::value<int>()->notifier([&flags](int v) { flags.hybrid = v; }),
       "PD-hybrid (union role) instances (1..16)")
      ("encode", po::value<int>()->notifier([&flags](int v) { flags.encode = v; }),
       "Encode instances (0..16; multi_deployment with motor_deploy_config.e_instances_num)")
      ("filename,f", po::value(&flags.filename), "user_config.json differing from the baseline only in counts")
      ("dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
       "none or server (send with dryRun=All); client, the bare flag's value, is refused: it needs the live "
       "object")
      ("operator-restarted", po::bool_switch(&flags.operator_restarted),
       "infer-operator was restarted after the pods of the gang role's removed instances were gone: scale such a "
       "role out onto them (refused otherwise: the operator would rebuild them in a loop)");
  flags.output.bind(desc);
  add_wait_after_flags(desc, flags.wait);
  add_lock_flags(desc, flags.lock);
}

ScaleOptions::ScaleOptions(ScaleFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void ScaleOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  const bool counts = flags_.prefill || flags_.decode || flags_.hybrid || flags_.encode;
  if (!counts && flags_.filename.empty())
    throw UsageError("must specify --prefill and/or --decode (or --hybrid for PD-hybrid, --encode for encode "
                     "instances), or -f FILE");
  if (counts && !flags_.filename.empty())
    throw UsageError("--prefill/--decode/--hybrid/--encode and -f cannot be used together");
  if (flags_.encode && (*flags_.encode < 0 || *flags_.encode > 16))
    throw UsageError("--encode " + std::to_string(*flags_.encode) + " is out of range: encode instances are 0..16");
  if (flags_.hybrid && (flags_.prefill || flags_.decode))
    throw UsageError("--hybrid cannot be combined with --prefill/--decode: a PD-hybrid deployment runs one union "
                     "role instead of prefill and decode");
  for (auto [flag, v] : {std::pair{"--prefill", flags_.prefill}, std::pair{"--decode", flags_.decode},
                         std::pair{"--hybrid", flags_.hybrid}}) {
    if (v && (*v < 1 || *v > 16))
      throw UsageError(std::string(flag) + " " + std::to_string(*v) + " is out of range: instances are 1..16");
  }
  flags_.output.validate();
  if (dry_run_ == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by scale (it needs the live object): use --dry-run=server");
  check_wait_after_flags(flags_.wait, dry_run_);
}

void ScaleOptions::complete(const std::string& context_namespace) {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void ScaleOptions::read_proposed() {
  if (flags_.filename.empty()) return;
  proposed_ = config::parse_user_config(read_file(flags_.filename), flags_.filename);
  check_namespace_flag(namespace_flag_, proposed_->job_id);
  namespace_ = proposed_->job_id;
}

namespace {

json::object counts_json(const InstanceCounts& c) {
  return {{"prefill", c.prefill}, {"decode", c.decode}, {"hybrid", c.hybrid}, {"encode", c.encode}};
}

}  // namespace

json::object instance_counts_json(const config::UserConfig& c) {
  return counts_json({c.p_instances, c.d_instances, c.hybrid_instances, c.e_instances});
}

namespace {

InstanceCounts counts_of(const config::UserConfig& c) {
  return {c.p_instances, c.d_instances, c.hybrid_instances, c.e_instances};
}

std::string counts_text(const InstanceCounts& c) {
  const std::string encode = c.encode ? ", encode " + std::to_string(c.encode) : "";
  if (c.hybrid) return "union " + std::to_string(c.hybrid) + encode;
  return "prefill " + std::to_string(c.prefill) + ", decode " + std::to_string(c.decode) + encode;
}

// The scale flags that set `c`, for recovery commands (`encode`: the deployment has encode instances).
std::string counts_flags(const InstanceCounts& c, bool encode) {
  const std::string e = encode ? " --encode " + std::to_string(c.encode) : "";
  if (c.hybrid) return "--hybrid " + std::to_string(c.hybrid) + e;
  return "--prefill " + std::to_string(c.prefill) + " --decode " + std::to_string(c.decode) + e;
}

// The baseline's count for `role` (prefill, decode, encode or union).
int baseline_count(const config::UserConfig& b, std::string_view role) {
  return role == "prefill" ? b.p_instances
         : role == "decode" ? b.d_instances
         : role == "encode" ? b.e_instances
                            : b.hybrid_instances;
}


// Counts of an intent someone could have written: each 0..16, else nullopt.
std::optional<InstanceCounts> counts_from_json(const json::object& intent, std::string_view key) {
  const json::value* v = intent.if_contains(key);
  if (v == nullptr || !v->is_object()) return std::nullopt;
  InstanceCounts c;
  for (auto [name, field] : {std::pair{"prefill", &c.prefill}, std::pair{"decode", &c.decode},
                             std::pair{"hybrid", &c.hybrid}, std::pair{"encode", &c.encode}}) {
    const json::value* n = v->get_object().if_contains(name);
    if (n == nullptr || !n->is_int64() || n->get_int64() < 0 || n->get_int64() > 16) return std::nullopt;
    *field = static_cast<int>(n->get_int64());
  }
  return c;
}

// The count of `role` (prefill, decode, encode or union) in `c`.
int count_of(const InstanceCounts& c, std::string_view role) {
  return role == "prefill" ? c.prefill : role == "decode" ? c.decode : role == "encode" ? c.encode : c.hybrid;
}

/// True when every role of `changes` in `live` is at its index with its target replicas.
bool already_applied(const json::object& live, const std::vector<scale::RoleChange>& changes) {
  std::map<std::string, int> targets;
  for (const auto& c : changes) targets[c.role] = static_cast<int>(c.to);
  try {
    const auto now = scale::plan_role_changes(live, targets);
    for (std::size_t i = 0; i < now.size(); ++i) {
      const auto& before = *std::find_if(changes.begin(), changes.end(),
                                         [&](const scale::RoleChange& c) { return c.role == now[i].role; });
      if (now[i].index != before.index || now[i].from != now[i].to) return false;
    }
    return true;
  } catch (const scale::PlanError&) {
    return false;
  }
}

/// True when every role of `changes` in `live` runs the replicas it had when read (RoleChange::from).
bool roles_as_read(const json::object& live, std::vector<scale::RoleChange> changes) {
  for (auto& c : changes) c.to = c.from;
  return already_applied(live, changes);
}

/// What the scaled roles of `name` run now, read for a failure report: "inferserviceset.../x now runs prefill 2,
/// decode 1" (someone else may have changed them meanwhile), or that it could not be read.
std::string service_set_now(kube::Client& client, const std::string& ns, const std::string& name,
                            const std::vector<scale::RoleChange>& changes, InstanceCounts live) {
  const std::string what = "inferserviceset." + kube::gvr::kInferServiceSets.group + "/" + name;
  std::map<std::string, int> back;
  for (const auto& c : changes) back[c.role] = static_cast<int>(c.from);
  try {
    for (const auto& c : scale::plan_role_changes(client.get(kube::gvr::kInferServiceSets, ns, name), back)) {
      const int n = static_cast<int>(std::clamp<std::int64_t>(c.from, 0, 1 << 20));
      if (c.role == "prefill") live.prefill = n;
      else if (c.role == "decode") live.decode = n;
      else if (c.role == "encode") live.encode = n;
      else live.hybrid = n;
    }
    return what + " now runs " + counts_text(live);
  } catch (const std::exception&) {
    return what + " is in an unknown state (it could not be read back)";
  }
}

/// What the engine Deployments of `workload` run now, read for a failure report.
std::string engines_now(kube::Client& client, const std::string& ns, const std::string& workload,
                        const std::vector<std::pair<std::string, int>>& targets) {
  try {
    std::map<std::string, int> n;
    for (const auto& d : list_workload_deployments(client, ns, workload, true)) ++n[d.role];
    std::string out;
    for (const auto& [role, count] : targets) out += (out.empty() ? "" : ", ") + role + " " + std::to_string(n[role]);
    return "the engine Deployments now run " + out;
  } catch (const std::exception&) {
    return "the engine Deployments are in an unknown state (they could not be listed)";
  }
}

}  // namespace

std::string ScaleOptions::new_baseline_text(const config::UserConfig& base, const InstanceCounts& target) const {
  if (proposed_) {
    const auto bad = policy::disallowed_changes(
        base.doc, proposed_->doc,
        {policy::kPrefillInstancesPath, policy::kDecodeInstancesPath, policy::kHybridInstancesPath,
         policy::kEncodeInstancesPath});
    if (!bad.empty()) {
      std::string msg = "scale may change only " + std::string(policy::kPrefillInstancesPath) + ", " +
                        policy::kDecodeInstancesPath + ", " + policy::kHybridInstancesPath + " and " +
                        policy::kEncodeInstancesPath + "; " +
                        flags_.filename + " also differs from the baseline at:";
      for (const auto& p : bad) msg += "\n* " + p;
      msg += "\nuse kubectl mindie update-config for allowed settings, or redeploy";
      throw CommandError(msg);
    }
    return proposed_->raw;
  }
  std::string raw = base.raw;
  if (target.prefill != base.p_instances)
    raw = util::replace_json_number(raw, policy::kPrefillInstancesPath, target.prefill);
  if (target.decode != base.d_instances)
    raw = util::replace_json_number(raw, policy::kDecodeInstancesPath, target.decode);
  if (target.hybrid != base.hybrid_instances)
    raw = util::replace_json_number(raw, policy::kHybridInstancesPath, target.hybrid);
  if (target.encode != base.e_instances)  // base.encode: the key is there (checked in run)
    raw = util::replace_json_number(raw, policy::kEncodeInstancesPath, target.encode);
  return raw;
}

void ScaleOptions::plan_intent(const std::string& mode, const std::string& workload,
                               const std::vector<std::string>& roles, const config::UserConfig& base,
                               const InstanceCounts& target, const json::object& cm,
                               const std::map<std::string, int>& live) {
  json::array names;
  for (const auto& r : roles) names.emplace_back(r);
  json::object live_from;
  for (const auto& [role, n] : live) live_from[role] = n;
  intent_ = {{"mode", mode},
             {"workload", workload},
             {"roles", std::move(names)},
             {"live_from", std::move(live_from)},
             {"from", counts_json(counts_of(base))},
             {"to", counts_json(target)},
             {"baseline_resource_version", kube::resource_version_of(cm, "configmap/" + std::string(baseline::kConfigMapName))}};
}

bool ScaleOptions::baseline_says(kube::Client& client, const InstanceCounts& target) const {
  const auto cm = client.get(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName);
  const config::UserConfig now = baseline::read_baseline(cm, namespace_).user();
  return counts_of(now) == target && (!proposed_ || now.raw == proposed_->raw);
}

json::object ScaleOptions::write_baseline(kube::Client& client, json::object cm, const config::UserConfig& read,
                                          const InstanceCounts& target, const kube::WriteOptions& opts) const {
  for (int attempt = 1;; ++attempt) {
    const config::UserConfig current = baseline::read_baseline(cm, namespace_).user();
    // A retried write whose first try was stored (its answer lost) meets a 409: the re-read then already
    // holds our counts, which is success, not a rival scale.
    if (attempt > 1 && counts_of(current) == target && (!proposed_ || current.raw == proposed_->raw)) return cm;
    if (counts_of(current) != counts_of(read)) {
      throw CommandError("the baseline's instance counts changed while scaling (another scale ran at the same "
                         "time): now " + counts_text(counts_of(current)));
    }
    const std::string raw = new_baseline_text(current, target);
    if (raw == current.raw) return cm;
    // The resourceVersion turns this merge patch into a compare-and-swap on the baseline just read.
    const json::object patch{{"metadata", {{"resourceVersion", kube::resource_version_of(cm, "configmap/" + std::string(baseline::kConfigMapName))}}},
                             {"data", {{baseline::kBaselineKey, raw}}}};
    before_write();
    try {
      return client.patch(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName, kube::PatchType::Merge, patch,
                          opts);
    } catch (const kube::ApiError& e) {
      if (!e.is_conflict() || attempt == kBaselineWriteAttempts) throw;
    }
    // Changed since it was read: by a rival that took the lock over (then nothing more may be written), or by an
    // edit from outside kubectl-mindie, or it is this write's own first try whose reply was lost.
    lock_->confirm();
    cm = client.get(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName);
  }
}

change::Step ScaleOptions::baseline_step(kube::Client& client, const json::object& cm, const config::UserConfig& read,
                                         const InstanceCounts& target, const kube::WriteOptions& opts,
                                         json::object& after) const {
  change::Step step;
  step.name = "configmap/" + std::string(baseline::kConfigMapName);
  step.verb = "configured";
  step.write = [this, &client, cm, &read, target, opts, &after] { after = write_baseline(client, cm, read, target, opts); };
  step.applied = [this, &client, target] { return baseline_says(client, target); };
  return step;
}

change::Step ScaleOptions::service_set_step(kube::Client& client, const json::object& iss,
                                            const std::vector<scale::RoleChange>& changes,
                                            const kube::WriteOptions& opts, json::object& result) const {
  const std::string name(iss.at("metadata").at("name").as_string());
  change::Step step;
  step.name = "inferserviceset." + kube::gvr::kInferServiceSets.group + "/" + name;
  step.verb = "scaled";
  step.write = [this, &client, name, changes, opts, &result, what = step.name] {
    try {
      result = client.patch(kube::gvr::kInferServiceSets, namespace_, name, kube::PatchType::Json,
                            scale::build_replicas_patch(changes), opts);
    } catch (const kube::ApiError& e) {
      // 422: a test op failed (the roles changed since they were read), or the server refused the patch itself.
      if (!e.is_invalid()) throw;
      const auto live = client.get_if_exists(kube::gvr::kInferServiceSets, namespace_, name);
      if (live && already_applied(*live, changes)) {  // this patch's own first try, its reply lost
        result = *live;
        return;
      }
      if (!live || roles_as_read(*live, changes)) throw;
      throw change::PreconditionFailed(what + " changed since it was read (another scale or an edit of its roles): "
                                       "nothing was changed; run the command again (server said: " +
                                       e.status_message() + ")");
    }
  };
  step.applied = [this, &client, name, changes, &result] {
    json::object live = client.get(kube::gvr::kInferServiceSets, namespace_, name);
    if (!already_applied(live, changes)) return false;
    result = std::move(live);
    return true;
  };
  step.undo = [this, &client, name, changes, opts] {
    try {
      client.patch(kube::gvr::kInferServiceSets, namespace_, name, kube::PatchType::Json,
                   scale::build_undo_patch(changes), opts);
    } catch (const std::exception&) {
      // An undo without an answer may have been applied: what counts is what a read shows.
      const auto live = client.get(kube::gvr::kInferServiceSets, namespace_, name);
      if (!roles_as_read(live, changes)) throw;
    }
  };
  return step;
}

change::Step ScaleOptions::engine_step(kube::Client& client, const EngineChange& c, const json::object& rendered,
                                       const kube::WriteOptions& opts, std::vector<json::object>& results) const {
  change::Step step;
  step.name = "deployment.apps/" + c.name;
  step.verb = c.create ? "created" : "deleted";
  // The uid of what this change made or removes: a delete never removes a successor's object of the same name.
  auto uid = std::make_shared<std::string>(c.uid);
  const auto apply = [this, &client, rendered, opts, uid, &results](bool keep) {
    json::object made = client.apply(kube::gvr::kDeployments, rendered, opts);
    if (const auto* u = made.at("metadata").as_object().if_contains("uid"); u && u->is_string()) *uid = u->as_string();
    if (keep) results.push_back(std::move(made));
  };
  const auto remove = [this, &client, name = c.name, uid, opts] {
    try {
      client.remove_exact(kube::gvr::kDeployments, namespace_, name, *uid, "", opts);
    } catch (const kube::ApiError& e) {
      if (!e.is_not_found()) throw;  // already gone (a retried request): the goal holds
    }
  };
  auto seen = std::make_shared<json::object>();  // what the last read-back found
  const auto exists = [this, &client, name = c.name, uid, seen] {
    auto live = client.get_if_exists(kube::gvr::kDeployments, namespace_, name);
    if (!live || live->at("metadata").as_object().contains("deletionTimestamp")) return false;
    *uid = std::string(live->at("metadata").at("uid").as_string());
    *seen = std::move(*live);
    return true;
  };
  if (c.create) {
    step.write = [apply] { apply(true); };
    // Its answer lost but created: -o json|yaml shows it as read back, in its place among the results.
    step.applied = [exists, seen, &results] {
      if (!exists()) return false;
      results.push_back(*seen);
      return true;
    };
    step.undo = remove;
  } else {
    step.write = remove;
    step.applied = [exists] { return !exists(); };
    step.undo = [apply] { apply(false); };
  }
  return step;
}

change::Wording ScaleOptions::wording(const config::UserConfig& base, const InstanceCounts& target,
                                      std::function<std::string()> observed) const {
  change::Wording w;
  w.change = "scale";
  w.dry_run = dry_run_ == DryRun::Server;
  w.observed = [observed = std::move(observed), counts = counts_text(counts_of(base))] {
    return observed() + "\nconfigmap/" + std::string(baseline::kConfigMapName) + " (the baseline) still says " +
           counts;
  };
  w.recovery = "the workload and the baseline may disagree until the next kubectl-mindie command in namespace " +
               namespace_ + " finishes or reverts the scale; to choose, run one of:\n  kubectl mindie scale -n " + namespace_ + " " +
               counts_flags(target, base.encode) + "   # keep the new counts\n  kubectl mindie scale -n " +
               namespace_ + " " + counts_flags(counts_of(base), base.encode) + "   # return to the baseline";
  return w;
}

void ScaleOptions::run(kube::Client& client, Printer& printer) {
  read_proposed();  // before any request: a bad -f sends nothing
  NamespaceLock lock(client, printer, namespace_, "scale", lock_wait_, dry_run_ == DryRun::None);
  lock.recover_first();
  lock_ = &lock;
  struct Reset {
    NamespaceLock*& p;
    ~Reset() { p = nullptr; }
  } reset{lock_};  // lock_ never outlives the lock, whatever run_once throws
  try {
    run_once(client, printer);
  } catch (const Replan&) {
    // Another command held the lock since our first read (its change may have been half-done): read and plan
    // again, holding the lock now.
    run_once(client, printer);
  }
  lock.done();
}

void ScaleOptions::run_once(kube::Client& client, Printer& printer) {
  const std::string cm_name = baseline::kConfigMapName;
  std::optional<json::object> cm = client.get_if_exists(kube::gvr::kConfigMaps, namespace_, cm_name);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + namespace_ + " (configmap/" + cm_name +
                       " not found): run kubectl mindie deploy first");
  }
  require_ours(*cm, namespace_, "scale", "nothing was changed");
  const baseline::Baseline stored = baseline::read_baseline(*cm, namespace_);
  const config::UserConfig& base = stored.user();
  const std::string mode = stored.deploy_mode();
  const bool multi = mode == config::to_string(config::DeployMode::MultiDeployment);
  if (mode == config::to_string(config::DeployMode::SingleContainer)) {
    throw CommandError("the deployment in namespace " + namespace_ + " uses deploy_mode single_container: every "
                       "component runs in one pod, which cannot be scaled; to run more instances, delete it "
                       "(kubectl mindie delete -n " + namespace_ + ") and deploy with deploy_mode "
                       "infer_service_set or multi_deployment; nothing was changed");
  }
  if (mode != config::to_string(config::DeployMode::InferServiceSet) && !multi) {
    throw CommandError("the deployment in namespace " + namespace_ + " uses deploy_mode " + mode +
                       ", which this version of kubectl-mindie cannot scale");
  }
  // PD-hybrid runs one union role; which flags apply follows the baseline, never a guess.
  const std::string where = "the deployment in namespace " + namespace_;
  if (proposed_ && proposed_->hybrid() != base.hybrid())
    throw CommandError("scale cannot switch " + where + " between PD-hybrid (hybrid_instances_num) and prefill/decode "
                       "instances: redeploy with kubectl mindie deploy -f " + flags_.filename +
                       " (it replaces the workload); nothing was changed");
  if (base.hybrid() && (flags_.prefill || flags_.decode))
    throw CommandError(where + " runs PD-hybrid (motor_deploy_config.hybrid_instances_num " +
                       std::to_string(base.hybrid_instances) + "): scale its union role with --hybrid N");
  if (!base.hybrid() && flags_.hybrid)
    throw CommandError(where + " runs prefill and decode instances, no PD-hybrid union role: use --prefill/--decode");
  // Encode instances exist in multi_deployment with e_instances_num (PyMotor 7d15c04 U5); scale changes the count,
  // never the topology.
  if (flags_.encode && !base.encode)
    throw CommandError(where + " has no encode instances (they run in deploy_mode multi_deployment with "
                       "motor_deploy_config.e_instances_num): add e_instances_num and e_pod_npu_num to the config "
                       "and redeploy; nothing was changed");
  if (proposed_ && proposed_->encode != base.encode)
    throw CommandError("scale cannot add or remove " + where + "'s encode instances (motor_deploy_config."
                       "e_instances_num present in one file only): redeploy with kubectl mindie deploy -f " +
                       flags_.filename + "; nothing was changed");

  // The target counts. Only the counts may differ from the baseline (checked again on every baseline write).
  const InstanceCounts target =
      proposed_ ? counts_of(*proposed_)
                : InstanceCounts{flags_.prefill.value_or(base.p_instances),
                                 flags_.decode.value_or(base.d_instances),
                                 flags_.hybrid.value_or(base.hybrid_instances),
                                 flags_.encode.value_or(base.e_instances)};
  new_baseline_text(base, target);
  if (multi) {
    run_multi(client, printer, *cm, stored, target);
    return;
  }

  const std::string iss_name = stored.workload_name();
  std::optional<json::object> iss = client.get_if_exists(kube::gvr::kInferServiceSets, namespace_, iss_name);
  if (!iss) {
    throw CommandError("the baseline in namespace " + namespace_ + " names inferserviceset." +
                       kube::gvr::kInferServiceSets.group + "/" + iss_name +
                       ", which does not exist: re-run kubectl mindie deploy");
  }
  // Only the roles asked for are touched (-f names both): a role left out keeps its live replicas even when
  // they drifted, and an HPA-owned role that is not being scaled does not block the other.
  std::map<std::string, int> targets;
  if (base.hybrid()) {
    targets["union"] = target.hybrid;
  } else {
    if (proposed_ || flags_.prefill) targets["prefill"] = target.prefill;
    if (proposed_ || flags_.decode) targets["decode"] = target.decode;
  }
  const auto changes = scale::plan_role_changes(*iss, targets);
  for (const auto& c : changes) {
    const int base_count = baseline_count(base, c.role);
    if (c.from != base_count) {
      printer.warning("role " + c.role + " had drifted: " + std::to_string(c.from) + " live instances, " +
                      std::to_string(base_count) + " in the baseline; both become " + std::to_string(c.to));
    }
  }

  // Before any write: a gang role scaled out onto instances infer-operator would rebuild for ever.
  refuse_gang_rebuild_loop(client, namespace_, *iss, changes, flags_.operator_restarted);

  std::vector<std::string> roles;
  std::map<std::string, int> live_counts;
  for (const auto& [role, n] : targets) roles.push_back(role);
  for (const auto& c : changes) live_counts[c.role] = static_cast<int>(c.from);
  plan_intent(mode, iss_name, roles, base, target, *cm, live_counts);

  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  json::object result = *iss;
  std::vector<change::Step> steps;
  if (!scale::build_replicas_patch(changes).empty())
    steps.push_back(service_set_step(client, *iss, changes, opts, result));
  json::object baseline_after = *cm;
  if (new_baseline_text(base, target) != base.raw)
    steps.push_back(baseline_step(client, *cm, base, target, opts, baseline_after));
  LockFence fence(*lock_, intent_);
  change::Runner runner(fence, wording(base, target, [&] {
    return service_set_now(client, namespace_, iss_name, changes, target);
  }));
  runner.run(steps);

  lock_->settle();  // the workload and the baseline agree from here: nothing left to recover

  // infer-operator leaves the PodGroups of removed gang instances behind and would reuse them unchanged on a later
  // scale-out (infer-operator-rules.md D1): remove them now that the scale is recorded.
  std::vector<std::string> removed_groups;
  std::map<std::string, int> gang_counts;
  bool gang_scale_in = false;
  for (const auto& c : changes)
    if (operator_rules::is_gang_role(*iss, c.role)) {
      gang_counts[c.role] = static_cast<int>(c.to);
      gang_scale_in = gang_scale_in || c.to < c.from;
    }
  // First what the operator now remembers (the PodGroup cleanup below may fail after the scale is done).
  if (!opts.dry_run) record_gang_instances(client, namespace_, *iss, changes, flags_.operator_restarted, opts, printer);
  if (gang_scale_in)
    removed_groups = remove_stale_pod_groups(
        client, namespace_, iss_name, gang_counts, opts,
        "the scale is done (inferserviceset." + kube::gvr::kInferServiceSets.group + "/" + iss_name +
            " and the baseline both say " + counts_text(target) + ")");

  printer.result(kube::gvr::kInferServiceSets, iss_name, "scaled", dry_run_, result);
  printer.shown_object(std::move(baseline_after));
  for (const auto& pg : removed_groups) printer.result(kube::gvr::kPodGroups, pg, "deleted", dry_run_, {});
}

void ScaleOptions::run_multi(kube::Client& client, Printer& printer, const json::object& cm,
                             const baseline::Baseline& stored, const InstanceCounts& target) {
  const config::UserConfig& base = stored.user();
  const std::string cm_name = baseline::kConfigMapName;
  const std::string where = "configmap/" + cm_name + " in namespace " + namespace_;
  // Rendered from the baseline and the overrides deploy stored, never from local files: the pod templates are
  // those of the deploy (PyMotor applied local engine files, which drift from what runs).
  render::RenderOptions ropts;
  ropts.service_set_name = stored.workload_name();
  if (stored.overrides_raw) {
    try {
      ropts.overrides = overrides::parse_overrides(*stored.overrides_raw, where + " " + baseline::kOverridesKey);
    } catch (const validation::ValidationError& e) {
      throw CommandError(std::string(e.what()) + "\nredeploy with --overrides FILE to replace them; nothing was "
                         "changed");
    }
  }
  // Every engine Deployment that may exist (16 instances per role, config's bound), by name.
  config::UserConfig all = base;
  if (base.hybrid())
    all.hybrid_instances = 16;
  else
    all.p_instances = all.d_instances = 16;
  if (base.encode) all.e_instances = 16;
  std::map<std::string, json::object> rendered;
  try {
    for (auto& obj : render::render_multi_workloads(all, ropts))
      rendered.emplace(std::string(obj.at("metadata").at("name").as_string()), std::move(obj));
  } catch (const validation::ValidationError& e) {
    throw CommandError(std::string(e.what()) + "\nthe stored deployment no longer renders; redeploy; nothing was "
                       "changed");
  }

  const std::string& workload = ropts.service_set_name;
  const auto live = list_workload_deployments(client, namespace_, workload, true);
  std::vector<std::pair<std::string, int>> targets;  // prefill first, as printed
  if (proposed_ || flags_.prefill) targets.emplace_back("prefill", target.prefill);
  if (proposed_ || flags_.decode) targets.emplace_back("decode", target.decode);
  if (base.hybrid() && (proposed_ || flags_.hybrid)) targets.emplace_back("union", target.hybrid);
  if (base.encode && (proposed_ || flags_.encode)) targets.emplace_back("encode", target.encode);
  std::vector<EngineChange> steps;
  for (const auto& [role, target] : targets) {
    std::set<int> have;
    int count = 0;
    for (const auto& d : live)
      if (d.role == role) {
        have.insert(d.index);
        ++count;
      }
    const int base_count = baseline_count(base, role);
    if (count != base_count)
      printer.warning("role " + role + " had drifted: " + std::to_string(count) + " live engine Deployments, " +
                      std::to_string(base_count) + " in the baseline; both become " + std::to_string(target));
    // Missing instances below the target are created (a gap left by hand included).
    for (int i = 0; i < target; ++i)
      if (!have.count(i)) steps.push_back({render::engine_deployment_name(base, role, i), true, ""});
    // Scale-in removes the highest indices first; a Deployment without a readable index goes too (it is none of
    // 0..target-1).
    std::vector<const WorkloadDeployment*> extra;
    for (const auto& d : live)
      if (d.role == role && (d.index < 0 || d.index >= target)) extra.push_back(&d);
    std::sort(extra.begin(), extra.end(),
              [](const WorkloadDeployment* a, const WorkloadDeployment* b) { return a->index > b->index; });
    for (const auto* d : extra) steps.push_back({d->name, false, d->uid});
  }

  std::vector<std::string> roles;
  std::map<std::string, int> live_counts;
  for (const auto& [role, n] : targets) {
    roles.push_back(role);
    live_counts[role] = 0;
  }
  for (const auto& d : live)
    if (live_counts.count(d.role)) ++live_counts[d.role];
  plan_intent(stored.deploy_mode(), workload, roles, base, target, cm, live_counts);

  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  std::vector<json::object> results;
  std::vector<change::Step> writes;
  for (const auto& c : steps) {
    auto it = rendered.find(c.name);
    if (it == rendered.end()) throw CommandError("no engine Deployment " + c.name + " renders from the baseline");
    writes.push_back(engine_step(client, c, it->second, opts, results));
  }
  json::object baseline_after = cm;
  if (new_baseline_text(base, target) != base.raw)
    writes.push_back(baseline_step(client, cm, base, target, opts, baseline_after));
  LockFence fence(*lock_, intent_);
  change::Runner runner(fence, wording(base, target, [&] { return engines_now(client, namespace_, workload, targets); }));
  runner.run(writes);
  lock_->settle();  // the engine Deployments and the baseline agree

  std::size_t created = 0;
  for (const auto& c : steps)
    printer.result(kube::gvr::kDeployments, c.name, c.create ? "created" : "deleted", dry_run_,
                   c.create && created < results.size() ? std::move(results[created++]) : json::object());
  if (steps.empty())
    printer.result(kube::gvr::kConfigMaps, cm_name, target != counts_of(base) ? "configured" : "unchanged", dry_run_,
                   std::move(baseline_after));
  else
    printer.shown_object(std::move(baseline_after));
}

/// The lock finishes or reverts an interrupted scale through this (cmd/lock.h, register_recovery).
const bool kRecoveryRegistered = register_recovery("scale", &ScaleOptions::recover);

std::string ScaleOptions::recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                  const json::object& intent, const std::string& what) {
  const auto from = counts_from_json(intent, "from");
  const auto to = counts_from_json(intent, "to");
  std::vector<std::string> roles;
  if (const auto* r = intent.if_contains("roles"); r != nullptr && r->is_array())
    for (const auto& v : r->get_array())
      if (v.is_string() && (v == "prefill" || v == "decode" || v == "union" || v == "encode"))
        roles.emplace_back(v.get_string());
  const json::value* rv = intent.if_contains("baseline_resource_version");
  if (!from || !to || roles.empty() || rv == nullptr || !rv->is_string())
    return "Warning: removed an unreadable record of " + what + " from lease/" + kLockLeaseName;
  const std::string head = "recovered " + what + ": " + intent_change_text(intent) + ", ";

  const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (!cm) return head + "nothing to do: the deployment is gone (configmap/" + baseline::kConfigMapName + ")";
  const baseline::Baseline stored = baseline::read_baseline(*cm, ns);
  const InstanceCounts now = counts_of(stored.user());
  const bool unmoved = now == *from && cm->at("metadata").at("resourceVersion") == *rv;

  // How much of the scale the live workload shows: every role still at what was live when the intent was
  // recorded (live_from; the baseline's counts when absent) means nothing was applied.
  const json::object* live_from = nullptr;
  if (const auto* v = intent.if_contains("live_from"); v != nullptr && v->is_object()) live_from = &v->get_object();
  const auto was_live = [&](const std::string& role) -> int {
    if (live_from != nullptr)
      if (const auto* n = live_from->if_contains(role); n != nullptr && n->is_int64() && n->get_int64() >= 0 &&
                                                        n->get_int64() <= 1 << 20)
        return static_cast<int>(n->get_int64());
    return count_of(*from, role);
  };
  bool untouched = true;
  if (unmoved) {
    if (stored.deploy_mode() == config::to_string(config::DeployMode::MultiDeployment)) {
      std::map<std::string, int> n;
      for (const auto& d : list_workload_deployments(client, ns, stored.workload_name(), true)) ++n[d.role];
      for (const auto& role : roles) untouched = untouched && n[role] == was_live(role);
    } else {
      const auto iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, stored.workload_name());
      if (!iss) return head + "nothing to do: its inferserviceset is gone";
      std::map<std::string, int> back;
      for (const auto& role : roles) back[role] = was_live(role);
      try {
        untouched = already_applied(*iss, scale::plan_role_changes(*iss, back));
      } catch (const scale::PlanError&) {
        untouched = false;
      }
    }
    if (untouched) return head + "dropped: nothing of it had been applied";
  }

  // Finish when the baseline already says the target, or has not moved and part of the scale is live; else the
  // baseline moved (someone changed it since): the live roles return to what it says.
  const bool finish = now == *to || unmoved;
  const InstanceCounts goal = finish ? *to : now;
  ScaleFlags flags;
  for (const auto& role : roles) {
    const int n = count_of(goal, role);
    if (role == "prefill") flags.prefill = n;
    else if (role == "decode") flags.decode = n;
    else if (role == "union") flags.hybrid = n;
    else flags.encode = n;
  }
  ScaleOptions o(flags, ns);
  o.complete(ns);
  o.validate();
  o.lock_ = &lock;
  std::ostream quiet(nullptr);  // the line returned says what happened; the scale's own output would repeat it
  Printer printer(quiet, quiet, "");
  o.run_once(client, printer);
  return head + (finish ? "completed" : "reverted: the baseline changed since (it says " + counts_text(now) + ")");
}

namespace {

/// scale: ScaleOptions, or StormScaleOptions with --framework aibrix.
class ScaleInvocation : public Invocation {
 public:
  explicit ScaleInvocation(po::options_description& desc) {
    add_scale_flags(desc, flags_);
    add_framework_flags(desc, framework_, "scale");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      Session session(global, std::cerr, kLockRequestBound);
      StormScaleOptions o(framework_, flags_, global.kube.namespace_);
      o.complete(session.rest_config().namespace_);
      o.validate();
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
      return;
    }
    // The kubeconfig first: complete() takes its namespace (so a broken kubeconfig is reported before a bad flag,
    // as kubectl scale does). Loading it sends nothing.
    Session session(global, std::cerr, kLockRequestBound);
    ScaleOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer);
    wait_after(session, flags_.wait, o.target_namespace(), printer);
  }

 private:
  ScaleFlags flags_;
  FrameworkFlags framework_;
};

}  // namespace

Command scale_command() {
  return {"scale",
          "Change prefill/decode (or PD-hybrid) instance counts of a running deployment",
          "kubectl mindie scale [-n NS] (--prefill N | --decode M | --hybrid H | -f user_config.json) [flags]",
          "Change instance counts only: JSON-patch spec.template.roles[i].replicas of the live InferServiceSet\n"
          "(guarded by test ops), then the baseline. If the baseline cannot be updated, the patch is undone.\n"
          "multi_deployment: creates or deletes engine Deployments (highest indices first). PD-hybrid deployments\n"
          "(hybrid_instances_num) scale their union role with --hybrid. single_container cannot be scaled.\n"
          "Scaling in a gang-scheduled role deletes the Volcano PodGroups of the removed instances.",
          "  # Three prefill instances, two decode instances\n"
          "  kubectl mindie scale -n mindie-demo --prefill 3 --decode 2\n\n"
          "  # Four instances of a PD-hybrid deployment's union role\n"
          "  kubectl mindie scale -n mindie-demo --hybrid 4\n\n"
          "  # Take the counts from an edited config (nothing else may differ)\n"
          "  kubectl mindie scale -f user_config.json\n\n"
          "  # Two decode replicas of the AIBrix StormService qwen3-pd\n"
          "  kubectl mindie scale --framework aibrix -n vllm-test --app qwen3-pd --role decode --replicas 2\n",
          ScaleFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<ScaleInvocation>(desc);
          },
          changing_exit_codes("no deployment in the namespace, a change scale cannot make (a role it lacks, counts the "
                              "operator refuses), the baseline changed by others on every attempt, --wait timing out "
                              "(naming every pod not ready)")};
}

}  // namespace mindie::cmd
