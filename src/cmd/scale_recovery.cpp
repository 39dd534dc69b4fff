// scale's recovery of a scale left unfinished (ScaleOptions::recover, cmd/scale.h).
#include <iostream>
#include <map>

#include "cmd/multi_deployment.h"
#include "cmd/scale_steps.h"

namespace mindie::cmd {

namespace json = boost::json;

std::string ScaleOptions::recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                  const change::Intent& recorded, const std::string& what) {
  const auto& intent = std::get<change::ScaleIntent>(recorded.change);
  const InstanceCounts* from = &intent.counts.from;
  const InstanceCounts* to = &intent.counts.to;
  const std::vector<std::string>& roles = intent.counts.roles;
  const std::string head = "recovered " + what + ": " + change::count_change_text(intent) + ", ";

  const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (!cm) return head + "nothing to do: the deployment is gone (configmap/" + baseline::kConfigMapName + ")";
  const baseline::Baseline stored = baseline::read_baseline(*cm, ns);
  const InstanceCounts now = counts_of(stored.user());
  const bool unmoved = now == *from &&
                       cm->at("metadata").at("resourceVersion") == json::value(intent.baseline_resource_version);

  // How much of the scale the live workload shows: every role still at what was live when the intent was
  // recorded (live_from; the baseline's counts when absent) means nothing was applied.
  const auto was_live = [&](const std::string& role) {
    const auto it = intent.live_from.find(role);
    return it != intent.live_from.end() ? it->second : from->of(role);
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
  flags.skip_node_check = true;  // checked when the scale began; what it added runs or waits already
  for (const auto& role : roles) {
    const int n = goal.of(role);
    if (role == "prefill") flags.prefill = n;
    else if (role == "decode") flags.decode = n;
    else if (role == "union") flags.hybrid = n;
    else flags.encode = n;
  }
  ScaleOptions o(flags, ns);
  o.complete(ns);
  o.validate();
  o.lock_ = &lock;
  o.author_ = author_of(recorded);  // the revision it records names who began the scale
  std::ostream quiet(nullptr);      // the line returned says what happened; the scale's own output would repeat it
  Printer printer(quiet, quiet, "");
  o.run_once(client, printer);
  return head + (finish ? "completed" : "reverted: the baseline changed since (it says " + counts_text(now) + ")");
}

}  // namespace mindie::cmd
