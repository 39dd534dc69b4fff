// scale's writes as change steps (the baseline, the InferServiceSet's role replicas, engine Deployments), their
// read-backs and the wording of a failure (cmd/scale.h, cmd/scale_steps.h).
#include "cmd/scale_steps.h"

#include <algorithm>
#include <map>
#include <memory>

#include "kube/retry_on_conflict.h"
#include "mindie/baseline_policy.h"
#include "mindie/render.h"
#include "util/json_text.h"

namespace mindie::cmd {

namespace json = boost::json;

std::string counts_text(const InstanceCounts& c) {
  const std::string encode = c.encode ? ", encode " + std::to_string(c.encode) : "";
  if (c.hybrid) return "union " + std::to_string(c.hybrid) + encode;
  return "prefill " + std::to_string(c.prefill) + ", decode " + std::to_string(c.decode) + encode;
}

std::string counts_flags(const InstanceCounts& c, bool encode) {
  const std::string e = encode ? " --encode " + std::to_string(c.encode) : "";
  if (c.hybrid) return "--hybrid " + std::to_string(c.hybrid) + e;
  return "--prefill " + std::to_string(c.prefill) + " --decode " + std::to_string(c.decode) + e;
}

int baseline_count(const config::UserConfig& b, std::string_view role) {
  return role == "prefill"  ? b.p_instances
         : role == "decode" ? b.d_instances
         : role == "encode" ? b.e_instances
                            : b.hybrid_instances;
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

bool roles_as_read(const json::object& live, std::vector<scale::RoleChange> changes) {
  for (auto& c : changes) c.to = c.from;
  return already_applied(live, changes);
}

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

std::string ScaleOptions::new_baseline_text(const config::UserConfig& base, const InstanceCounts& target) const {
  if (proposed_) {
    const auto bad = policy::disallowed_changes(base.doc, proposed_->doc,
                                                {policy::kPrefillInstancesPath, policy::kDecodeInstancesPath,
                                                 policy::kHybridInstancesPath, policy::kEncodeInstancesPath});
    if (!bad.empty()) {
      std::string msg = "scale may change only " + std::string(policy::kPrefillInstancesPath) + ", " +
                        policy::kDecodeInstancesPath + ", " + policy::kHybridInstancesPath + " and " +
                        policy::kEncodeInstancesPath + "; " + flags_.filename + " also differs from the baseline at:";
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
  intent_ = {mode,
             workload,
             {roles, counts_of(base), target},
             live,
             kube::resource_version_of(cm, "configmap/" + std::string(baseline::kConfigMapName))};
}

bool ScaleOptions::baseline_says(kube::Client& client, const InstanceCounts& target, json::object* read) const {
  auto cm = client.get(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName);
  const config::UserConfig now = baseline::read_baseline(cm, namespace_).user();
  const bool says = counts_of(now) == target && (!proposed_ || now.raw == proposed_->raw);
  if (says && read != nullptr) *read = std::move(cm);
  return says;
}

json::object ScaleOptions::write_baseline(kube::Client& client, json::object cm, const config::UserConfig& read,
                                          const InstanceCounts& target, const kube::WriteOptions& opts) const {
  return kube::retry_on_conflict(kBaselineWriteAttempts, [&](int attempt) {
    if (attempt > 1) {
      // Changed since it was read: by a rival that took the lock over (then nothing more may be written), or by
      // an edit from outside kubectl-mindie, or it is this write's own first try whose reply was lost.
      lock_->confirm();
      cm = client.get(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName);
    }
    const config::UserConfig current = baseline::read_baseline(cm, namespace_).user();
    // A retried write whose first try was stored (its answer lost) meets a 409: the re-read then already
    // holds our counts, which is success, not a rival scale.
    if (attempt > 1 && counts_of(current) == target && (!proposed_ || current.raw == proposed_->raw)) return cm;
    if (counts_of(current) != counts_of(read)) {
      throw CommandError(
          "the baseline's instance counts changed while scaling (another scale ran at the same "
          "time): now " +
          counts_text(counts_of(current)));
    }
    const std::string raw = new_baseline_text(current, target);
    if (raw == current.raw) return cm;
    // The resourceVersion turns this merge patch into a compare-and-swap on the baseline just read.
    const json::object patch{
        {"metadata",
         {{"resourceVersion", kube::resource_version_of(cm, "configmap/" + std::string(baseline::kConfigMapName))}}},
        {"data", {{baseline::kBaselineKey, raw}}}};
    before_write();
    return client.patch(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName, kube::PatchType::Merge, patch,
                        opts);
  });
}

change::Step ScaleOptions::baseline_step(kube::Client& client, const json::object& cm, const config::UserConfig& read,
                                         const InstanceCounts& target, const kube::WriteOptions& opts,
                                         json::object& after) const {
  change::Step step;
  step.name = "configmap/" + std::string(baseline::kConfigMapName);
  step.verb = "configured";
  step.write = [this, &client, cm, &read, target, opts, &after] {
    after = write_baseline(client, cm, read, target, opts);
  };
  // Its reply lost but applied: the ConfigMap read back is what the revision step records and -o json shows.
  step.applied = [this, &client, target, &after] { return baseline_says(client, target, &after); };
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
      throw change::PreconditionFailed(what +
                                       " changed since it was read (another scale or an edit of its roles): "
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
    return observed() + "\nconfigmap/" + std::string(baseline::kConfigMapName) + " (the baseline) still says " + counts;
  };
  w.recovery = "the workload and the baseline may disagree until the next kubectl-mindie command in namespace " +
               namespace_ + " finishes or reverts the scale; to choose, run one of:\n  kubectl mindie scale -n " +
               namespace_ + " " + counts_flags(target, base.encode) +
               "   # keep the new counts\n  kubectl mindie scale -n " + namespace_ + " " +
               counts_flags(counts_of(base), base.encode) + "   # return to the baseline";
  return w;
}

}  // namespace mindie::cmd
