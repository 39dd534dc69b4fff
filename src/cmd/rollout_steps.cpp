// rollout restart's Deployment steps, the record an interrupted rollout leaves, and how any later command takes back
// what it changed for the while (cmd/rollout_restart.h).
#include <ctime>

#include "cmd/gang_instances.h"
#include "cmd/lock.h"
#include "cmd/logs_streams.h"
#include "cmd/rollout_restart.h"
#include "mindie/operator_rules.h"
#include "mindie/render.h"
#include "mindie/scale_plan.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// kubectl rollout restart's annotation on the pod template (k8s.io/kubectl pkg/polymorphichelpers/objectrestarter.go).
constexpr const char* kRestartedAt = "kubectl.kubernetes.io/restartedAt";

/// The strategy --no-surge gives a Deployment: one pod replaced at a time, none added, so that a full NPU pool
/// still rolls (the default maxSurge 25% adds a pod that finds no NPUs and stays Pending).
const json::value& no_surge_strategy() {
  static const json::value s = {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 1}}}};
  return s;
}

json::value strategy_of(const json::object& deployment) {
  const json::value v = deployment;
  const json::value* s = util::find(&v, {"spec", "strategy"});
  return s ? *s : json::value(json::object());
}

void set_strategy(kube::Client& client, const std::string& ns, const std::string& name, const json::value& strategy) {
  kube::WriteOptions opts;
  opts.field_manager = render::kFieldManager;
  client.patch(kube::gvr::kDeployments, ns, name, kube::PatchType::Json,
               json::array{{{"op", "add"}, {"path", "/spec/strategy"}, {"value", strategy}}}, opts);
}

bool strategy_is(kube::Client& client, const std::string& ns, const std::string& name, const json::value& strategy) {
  const auto live = client.get_if_exists(kube::gvr::kDeployments, ns, name);
  return live && strategy_of(*live) == strategy;
}

}  // namespace

void RolloutRestart::deployment_steps(NamespaceLock& lock, const std::string& name, bool restart) {
  if (!request_.surge) {
    const json::value before = strategy_of(client_.get(kube::gvr::kDeployments, ns_, name));
    intent_.strategies[name] = json::serialize(before);
    run_step(lock, {kube::gvr::kDeployments.kind_dot_group() + "/" + name, "configured",
                    [this, name] { set_strategy(client_, ns_, name, no_surge_strategy()); },
                    [this, name] { return strategy_is(client_, ns_, name, no_surge_strategy()); },
                    [this, name, before] { set_strategy(client_, ns_, name, before); }});
  }
  if (!restart) return;  // its template changed already: the deployment controller rolls it
  std::time_t now = std::time(nullptr);
  const std::string at = util::utc_text(static_cast<std::int64_t>(now), "%Y-%m-%dT%H:%M:%SZ");
  kube::WriteOptions opts;
  opts.field_manager = render::kFieldManager;
  const json::object patch = {{"spec", {{"template", {{"metadata", {{"annotations", {{kRestartedAt, at}}}}}}}}}};
  run_step(lock,
           {kube::gvr::kDeployments.kind_dot_group() + "/" + name,
            "restarted",
            [this, name, patch, opts] {
              client_.patch(kube::gvr::kDeployments, ns_, name, kube::PatchType::Merge, patch, opts);
            },
            [this, name, at] {
              const auto live = client_.get_if_exists(kube::gvr::kDeployments, ns_, name);
              const json::value v = live ? json::value(*live) : json::value();
              return util::str(util::find(&v, {"spec", "template", "metadata", "annotations", kRestartedAt})) == at;
            },
            {}});  // a restart is not taken back: the pods it replaced are gone
}

void RolloutRestart::restore_strategy(NamespaceLock& lock, const std::string& name) {
  const auto it = intent_.strategies.find(name);
  if (it == intent_.strategies.end()) return;
  const json::value before = json::parse(it->second);
  run_step(lock, {kube::gvr::kDeployments.kind_dot_group() + "/" + name, "configured",
                  [this, name, before] { set_strategy(client_, ns_, name, before); },
                  [this, name, before] { return strategy_is(client_, ns_, name, before); },
                  [this, name] { set_strategy(client_, ns_, name, no_surge_strategy()); }});
  intent_.strategies.erase(it);
}

bool RolloutRestart::pause_requested() {
  const json::value lease = client_.get(kube::gvr::kLeases, ns_, kLockLeaseName);
  const json::value* asked = util::find(&lease, {"metadata", "annotations", kRolloutPauseAnnotation});
  const std::string holder = util::str(util::find(&lease, {"spec", "holderIdentity"}));
  return asked != nullptr && !holder.empty() && util::str(asked) == holder;
}

void RolloutRestart::pause(NamespaceLock& lock) {
  const auto surged = intent_.surged;
  for (const auto& [role, before] : surged) {
    surge_step(lock, role, before + 1, before);
    intent_.surged.erase(role);
  }
  lock.before_write(change::Intent{intent_});
  printer_.summary("the rollout in namespace " + ns_ + " paused after replacing " +
                   std::to_string(intent_.done.size()) + " instance" + (intent_.done.size() == 1 ? "" : "s") +
                   ": kubectl mindie rollout resume -n " + ns_ + " continues it, rollout abort forgets it");
}

void request_pause(kube::Client& client, const std::string& ns) {
  for (int attempt = 0;; ++attempt) {
    const json::value lease = client.get_if_exists(kube::gvr::kLeases, ns, kLockLeaseName).value_or(json::object());
    const std::string holder = util::str(util::find(&lease, {"spec", "holderIdentity"}));
    const json::value* text = util::find(&lease, {"metadata", "annotations", kLockIntentAnnotation});
    json::error_code ec;
    const json::value record = text && text->is_string() ? json::parse(text->get_string(), ec) : json::value();
    if (holder.empty() || ec || !record.is_object() || change::known_command(record.get_object()) != "rollout")
      throw CommandError("no rollout is running in namespace " + ns + " (rollout resume continues one that stopped)");
    const json::object patch = {{"metadata",
                                 {{"resourceVersion", util::str(util::find(&lease, {"metadata", "resourceVersion"}))},
                                  {"annotations", {{kRolloutPauseAnnotation, holder}}}}}};
    try {
      client.patch(kube::gvr::kLeases, ns, kLockLeaseName, kube::PatchType::Merge, patch);
      return;
    } catch (const kube::ApiError& e) {
      if (!e.is_conflict() || attempt >= 4) throw;  // the rollout renewed its lease meanwhile: read it again
    }
  }
}

std::optional<change::RolloutIntent> recorded_rollout(kube::Client& client, const std::string& ns) {
  const auto lease = client.get_if_exists(kube::gvr::kLeases, ns, kLockLeaseName);
  if (!lease) return std::nullopt;
  const json::value v = *lease;
  const json::value* text = util::find(&v, {"metadata", "annotations", kLockIntentAnnotation});
  if (text == nullptr || !text->is_string()) return std::nullopt;
  json::error_code ec;
  const json::value record = json::parse(text->get_string(), ec);
  if (ec || !record.is_object() || change::known_command(record.get_object()) != "rollout") return std::nullopt;
  try {
    return std::get<change::RolloutIntent>(change::parse_intent(record.get_object()).change);
  } catch (const change::UnreadableIntent&) {
    return std::nullopt;
  }
}

namespace {

/// Removes role `role`'s temporary instance when the role still runs `before` + 1; what it did, "" nothing.
std::string remove_surge(kube::Client& client, Printer& printer, const std::string& ns, const std::string& iss_name,
                         const std::string& role, int before) {
  const auto iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, iss_name);
  if (!iss) return "";
  const auto changes = scale::plan_role_changes(*iss, {{role, before}});
  if (changes.empty() || changes.front().from != before + 1) return "";
  kube::WriteOptions opts;
  opts.field_manager = render::kFieldManager;
  client.patch(kube::gvr::kInferServiceSets, ns, iss_name, kube::PatchType::Json, scale::build_replicas_patch(changes),
               opts);
  record_gang_instances(client, ns, *iss, changes, false, opts, printer);
  return "removed the temporary instance of role " + role;
}

}  // namespace

std::vector<std::string> RolloutRestart::pod_group_names(const std::string& role, std::int64_t index) const {
  std::vector<std::string> names;
  for (std::int64_t service = 0; service < services_; ++service)
    names.push_back(operator_rules::pod_group_prefix(intent_.workload, static_cast<int>(service), role) +
                    std::to_string(index));
  return names;
}

void RolloutRestart::drop_pod_groups(NamespaceLock& lock) {
  const kube::GVR& r = kube::gvr::kPodGroups;
  for (const std::string& name : intent_.pod_groups) {
    const auto live = client_.get_if_exists(r, ns_, name);
    if (!live) continue;
    const std::string uid = util::str(util::find(&live->at("metadata"), {"uid"}));
    run_step(lock, {r.kind_dot_group() + "/" + name,
                    "deleted",
                    [this, name, uid] {
                      try {
                        client_.remove_exact(kube::gvr::kPodGroups, ns_, name, uid, "");
                      } catch (const kube::ApiError& e) {
                        if (!e.is_not_found()) throw;
                      }
                    },
                    [this, name, uid] {
                      const auto now = client_.get_if_exists(kube::gvr::kPodGroups, ns_, name);
                      return !now || util::str(util::find(&now->at("metadata"), {"uid"})) != uid;
                    },
                    {}});  // infer-operator makes it again, from the current template, with the instance
    printer_.mutation(r, name, "deleted", DryRun::None);
  }
}

void RolloutRestart::surge_step(NamespaceLock& lock, const std::string& role, std::int64_t from, std::int64_t to) {
  const std::string name = intent_.workload;
  const json::object iss = client_.get(kube::gvr::kInferServiceSets, ns_, name);
  const auto changes = scale::plan_role_changes(iss, {{role, static_cast<int>(to)}});
  if (changes.empty() || changes.front().from != from)
    throw CommandError("role " + role + " of inferserviceset." + kube::gvr::kInferServiceSets.group + "/" + name +
                       " no longer runs " + std::to_string(from) + " instances: it changed while the rollout ran");
  kube::WriteOptions opts;
  opts.field_manager = render::kFieldManager;
  const auto set = [this, name, opts](const json::array& patch) {
    client_.patch(kube::gvr::kInferServiceSets, ns_, name, kube::PatchType::Json, patch, opts);
  };
  const std::size_t index = changes.front().index;
  run_step(lock, {kube::gvr::kInferServiceSets.kind_dot_group() + "/" + name, "scaled",
                  [set, changes] { set(scale::build_replicas_patch(changes)); },
                  [this, name, index, to] {
                    const json::value live = client_.get(kube::gvr::kInferServiceSets, ns_, name);
                    const auto* roles = util::find(&live, {"spec", "template", "roles"});
                    return roles && roles->is_array() && index < roles->as_array().size() &&
                           util::num(util::find(&roles->as_array()[index], {"replicas"}), 1) == to;
                  },
                  [set, changes] { set(scale::build_undo_patch(changes)); }});
  if (to < from) record_gang_instances(client_, ns_, iss, changes, false, opts, printer_);
  printer_.notice("role " + role + ": " +
                  (to > from ? "added a temporary instance" : "removed the temporary instance") + " (replicas " +
                  std::to_string(from) + " -> " + std::to_string(to) + ")");
}

std::string RolloutRestart::instance_pods(const std::string& role, std::int64_t index) const {
  return log_selector({ns_, intent_.workload, false, services_, role, index});
}

std::string settle_rollout(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                           const change::RolloutIntent& intent) {
  std::string did;
  const auto add = [&did](const std::string& s) {
    if (!s.empty()) did += (did.empty() ? "" : ", ") + s;
  };
  Printer& printer = lock.printer();
  add(restore_operator(client, lock, ns, intent));
  for (const auto& [role, before] : intent.surged) {
    lock.renew();
    add(remove_surge(client, printer, ns, intent.workload, role, before));
  }
  for (const auto& [name, text] : intent.strategies) {
    json::error_code ec;
    const json::value before = json::parse(text, ec);
    if (ec || !client.get_if_exists(kube::gvr::kDeployments, ns, name)) continue;
    lock.renew();
    set_strategy(client, ns, name, before);
    add("put back the strategy of deployment/" + name);
  }
  const std::string replaced = std::to_string(intent.done.size()) + " instance" + (intent.done.size() == 1 ? "" : "s") +
                               " had been replaced";
  return (did.empty() ? "" : did + "; ") + replaced + " (kubectl mindie rollout restart -n " + ns + " rolls the rest)";
}

namespace {

const bool kRecoveryRegistered = register_recovery("rollout", [](kube::Client& client, NamespaceLock& lock,
                                                                 const std::string& ns, const change::Intent& intent,
                                                                 const std::string& what) {
  return "recovered " + what + ": " + settle_rollout(client, lock, ns, std::get<change::RolloutIntent>(intent.change));
});

}  // namespace

}  // namespace mindie::cmd
