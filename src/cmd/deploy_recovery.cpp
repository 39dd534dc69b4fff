#include <ostream>

#include "cmd/deploy.h"
#include "cmd/node_port_claims.h"
#include "mindie/overrides.h"
#include "util/strings.h"

namespace mindie::cmd {

namespace json = boost::json;

std::optional<std::vector<render::NodePortClaim>> DeployOptions::baseline_claims(const json::object& cm,
                                                                                 const std::string& ns) {
  try {
    DeployOptions o(DeployFlags{}, ns);
    o.complete();
    o.read_baseline_inputs(baseline::read_baseline(cm, ns));
    return render::node_port_claims(*o.config_, o.render_options_);
  } catch (const std::exception&) {
    return std::nullopt;
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

// The workload is rendered again from motor-config as it is now (the user_config.json, env.json, overrides and scripts
// it stores) and applied, as a deploy of those files would, so that the workload and the baseline agree. Dropped,
// with nothing sent, when the baseline was not written (motor-config's data digest is not the intent's and its
// resourceVersion is the one read) and the intent supersedes no earlier one ("supersedes").
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
    // Killed after its first writes, the nodePort claims: the deployment in the namespace keeps those its baseline
    // names (none without one), the others are released; all are kept when the baseline no longer renders (a claim
    // left over frees with the deployment).
    const auto kept = cm ? baseline_claims(*cm, ns) : std::vector<render::NodePortClaim>{};
    const auto released = kept ? release_claims_but(client, ns, *kept) : std::vector<std::string>{};
    const std::string claims = released.empty()
                                   ? ""
                                   : " but its nodePort claims, released (" + util::join(released, ", ") + ")";
    if (!cm) return head + "dropped: nothing of it had been written" + claims;
    return head + "dropped: the baseline had not been written, and the workload is written after it" +
           (claims.empty() ? "" : ";" + claims.substr(4));
  }
  if (!cm) return head + "nothing to do: the deployment is gone (configmap/" + baseline::kConfigMapName + ")";
  if (!has_our_records(*cm))
    return "Warning: found the record of " + what + ", but configmap/" + baseline::kConfigMapName +
           " is not kubectl-mindie's (no label " + render::kManagedByLabel + "); removed the record, changed nothing";
  // Whatever was written, the workload made from the baseline as it is now agrees with it.
  DeployFlags flags;
  flags.skip_node_check = true;  // it runs already, or was checked by the deploy that wrote the baseline
  flags.adopt = intent.adopt;
  flags.prune = true;  // the interrupted deploy passed the removal check (or --prune confirmed it) before writing
  flags.force_conflicts = intent.force_conflicts;
  DeployOptions o(flags, ns);
  o.complete();
  o.read_baseline_inputs(baseline::read_baseline(*cm, ns));
  o.revision_author_ = author_of(recorded);  // the revision it records names who began the deploy
  // Its own intent stands for this one: cut short before its baseline write, this one is recovered again.
  o.superseded_intent_ = change::to_record(recorded);
  if (json::serialize(*o.superseded_intent_).size() > 16 * 1024) o.superseded_intent_->erase("supersedes");
  std::ostream quiet(nullptr);  // the line returned says what happened; the deploy's own output would repeat it
  Printer printer(quiet, quiet, "");
  o.run_once(client, printer, lock);
  return head + (written ? "completed: the workload was applied from the baseline it had written"
                         : "completed: the workload was applied from the baseline in configmap/" +
                               std::string(baseline::kConfigMapName));
}

}  // namespace mindie::cmd
