#include "cmd/deploy_steps.h"

#include <algorithm>
#include <set>

#include "cmd/deploy.h"
#include "cmd/deploy_checks.h"
#include "cmd/gang_instances.h"
#include "cmd/multi_deployment.h"
#include "cmd/node_port_claims.h"
#include "cmd/pod_groups.h"
#include "cmd/scale.h"
#include "mindie/baseline_policy.h"

namespace mindie::cmd {

namespace json = boost::json;

std::string object_name(const json::object& obj) { return std::string(obj.at("metadata").at("name").as_string()); }

const kube::GVR& gvr_of(const json::object& obj) {
  const auto* r = kube::gvr::for_kind(obj.at("apiVersion").as_string(), obj.at("kind").as_string());
  if (!r) throw std::logic_error("rendered an object of unknown kind " + std::string(obj.at("kind").as_string()));
  return *r;
}

change::Step DeployOptions::object_step(kube::Client& client, const json::object& obj,
                                        const std::optional<json::object>& baseline_read,
                                        const kube::WriteOptions& opts, Printer& printer,
                                        json::object& written_baseline) const {
  const kube::GVR& r = gvr_of(obj);
  const bool is_baseline = obj.at("kind") == "ConfigMap";
  change::Step step;
  step.name = r.kind_dot_group() + "/" + object_name(obj);
  step.verb = "serverside-applied";
  step.write = [this, &client, &obj, &baseline_read, opts, &printer, &r, is_baseline, &written_baseline] {
    json::object stored = is_baseline ? apply_baseline(client, obj, baseline_read, opts)
                                      : apply_object(client, obj, opts);
    if (is_baseline) written_baseline = stored;
    printer.result(r, object_name(obj), "serverside-applied", dry_run_, std::move(stored));
  };
  // Only the baseline is read back (a lost reply): a workload object without an answer counts as maybe written,
  // which changes nothing, since deploy goes only forward and every apply is idempotent.
  if (is_baseline)
    step.applied = [this, &client, &baseline_read] {
      const std::optional<bool> written = baseline_written(client, baseline_read);
      if (!written)
        throw CommandError("configmap/" + std::string(baseline::kConfigMapName) + " could not be read back");
      return *written;
    };
  return step;  // no undo: the next command applies the workload from the baseline (recover())
}

change::Wording DeployOptions::wording(bool dry_run) const {
  change::Wording w;
  w.change = "deploy";
  w.dry_run = dry_run;
  w.recovery = "the baseline in configmap/" + std::string(baseline::kConfigMapName) +
               " may describe a workload "
               "that is not (yet) live; its record stays in lease/" +
               kLockLeaseName +
               ": the next kubectl-mindie "
               "command in namespace " +
               config_->job_id +
               " applies the workload from the baseline first; or fix the "
               "cause above and re-run: " +
               rerun_command();
  return w;
}

json::object DeployOptions::apply_object(kube::Client& client, const json::object& obj,
                                         const kube::WriteOptions& opts) const {
  // Fields of kubectl-mindie's own scale or update-config are taken back by force, but only while the lock is ours:
  // they may be those of a rival that took the lock over while this deploy stalled.
  return apply_taking_back_own_fields(client, gvr_of(obj), obj, opts, [this] {
    if (lock_ != nullptr) lock_->confirm();
  });
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
  throw change::PreconditionFailed(
      "configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + config_->job_id +
      " was changed by someone else since this deploy read it (resourceVersion " + std::string(read_rv.as_string()) +
      ", now " + (live ? std::string(live->at("metadata").at("resourceVersion").as_string()) : "deleted") +
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
    return std::nullopt;  // unknown: say so, and keep the intent for the next command (never cleared)
  }
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
    d.baseline_resource_version = kube::resource_version_of(*existing,
                                                            "configmap/" + std::string(baseline::kConfigMapName));
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
  intent.supersedes = superseded_intent_;
  return intent;
}

void DeployOptions::hand_over(kube::Client& client, Printer& printer, NamespaceLock& lock, const Prepared& prepared,
                              std::optional<json::object>& baseline_read, change::Intent& intent,
                              std::vector<std::string>& handed_over) const {
  const AdoptionPlan& takeover = *prepared.takeover;
  const std::optional<json::object>& existing = prepared.existing;
  if (!takeover.empty())
    printer.warning("adopting what another tool (deploy.py) made in namespace " + config_->job_id + ":" +
                    takeover.describe());
  try {
    hand_over_fields(client, takeover, prepared.opts, [&](const ForeignObject& o) {
      handed_over.push_back(o.text() + " (field ownership)");
      printer.result(*o.gvr, o.name, "adopted", dry_run_, {});
    });
    // The hand-over patched motor-config's field ownership (a new resourceVersion): guard against the state it
    // left, provided its data is still what was read.
    if (existing && !prepared.opts.dry_run) {
      baseline_read = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, baseline::kConfigMapName);
      const json::value* was = existing->if_contains("data");
      const json::value* now = baseline_read ? baseline_read->if_contains("data") : nullptr;
      if (now == nullptr || was == nullptr || *now != *was)
        throw CommandError("configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + config_->job_id +
                           " was changed by someone else while deploy --adopt took it over");
      intent = plan_intent(baseline_read);
    }
  } catch (...) {
    if (handed_over.empty() || prepared.opts.dry_run) throw;
    lock.nothing_to_recover();  // field ownership only: the baseline and the workload are deploy.py's still, and agree
    std::string state = "deploy --adopt stopped after handing over the fields of:";
    for (const auto& w : handed_over) state += "\n  " + w;
    state += "\nnothing else was changed; fix the cause above and re-run: " + rerun_command();
    throw PartialFailure(std::current_exception(), state);
  }
}

void DeployOptions::finish(kube::Client& client, Printer& printer, const Prepared& prepared) const {
  const kube::WriteOptions& opts = prepared.opts;
  const std::string workload = render::workload_name(*config_, render_options_);
  // First what the operator now remembers (the PodGroup cleanup below may fail after the writes are done).
  if (!opts.dry_run)
    record_gang_instances(client, config_->job_id, objects_.back(), gang_changes_, false, opts, printer);
  if (!gang_scale_in_.empty())
    for (const auto& pg :
         remove_stale_pod_groups(client, config_->job_id, workload, gang_scale_in_, opts, "deploy wrote every object"))
      printer.result(kube::gvr::kPodGroups, pg, "deleted", dry_run_, {});
  if (prepared.takeover) remove_replaced(client, printer, prepared);
  remove_stale(client, printer, prepared);
  release_moved_claims(client, prepared);
  const bool deployments_mode = baseline::runs_deployments(config::to_string(config_->deploy_mode));
  if (deployments_mode && !prepared.takeover)  // an adoption removed them
    for (const auto& w :
         foreign_renamed_services(client, config_->job_id, workload, render::renamed_services(*config_)))
      printer.warning(w);
  // Said last, once every write is done: what runs on an earlier template now, and how to roll it (issue 31).
  if (const std::string line = earlier_templates_line(earlier_templates_, config_->job_id); !line.empty())
    printer.warning(line);
}

void DeployOptions::release_moved_claims(kube::Client& client, const Prepared& prepared) const {
  if (!prepared.existing) return;
  const baseline::Baseline stored = baseline::read_baseline(*prepared.existing, config_->job_id);
  if (!stored.config) return;
  const auto now = render::node_port_claims(*config_, render_options_);
  std::vector<int> moved;
  for (const auto& was : render::node_port_claims(*stored.config, render_options_))
    if (std::none_of(now.begin(), now.end(), [&](const auto& c) { return c.port == was.port; }))
      moved.push_back(was.port);
  if (moved.empty()) return;
  confirm_lock();
  release_claims(client, config_->job_id, moved, prepared.opts);
}

void DeployOptions::confirm_lock() const {
  // The clean-up after the last step deletes: a process stopped since then may have lost the lock, and a rival
  // holding it now may have written what these deletes would remove.
  if (lock_ != nullptr) lock_->confirm();
}

void DeployOptions::remove_replaced(kube::Client& client, Printer& printer, const Prepared& prepared) const {
  // deploy.py's objects that ours replace under other names: removed once ours are written (the controller's
  // ServiceAccount is bound by our ClusterRoleBinding by now).
  for (const auto& o : prepared.takeover->remove) {
    confirm_lock();
    try {
      client.remove(*o.gvr, o.ns, o.name, prepared.opts);
    } catch (const kube::ApiError& e) {
      if (e.is_not_found()) continue;
      throw PartialFailure(std::current_exception(),
                           "deploy wrote every object but could not delete " + o.text() +
                               ", deploy.py's, which kubectl-mindie's objects replace; re-run: " + rerun_command());
    }
    printer.result(*o.gvr, o.name, "deleted", dry_run_, {});
  }
}

void DeployOptions::remove_stale(kube::Client& client, Printer& printer, const Prepared& prepared) const {
  // multi_deployment, single_container: what the baseline no longer has would keep running unseen — engine
  // Deployments of instances beyond the counts (a redeploy with lower counts than a scale had set; the coordinator
  // reads the counts from the baseline) and components turned off (kv-pool, kv-conductor, mf-store with their
  // Services), and Services PyMotor 7d15c04 renamed (§U6: mindie-motor-coordinator-service, the single_container
  // "<job_id>-single-container" Service). Engines go highest index first, as scale deletes them; then the rest.
  // A renamed Service that is not ours (deploy.py's) is left, with a warning (finish()).
  if (!prepared.existing || !baseline::runs_deployments(config::to_string(config_->deploy_mode))) return;
  std::set<std::pair<std::string, std::string>> wanted;  // resource, name
  for (const auto& obj : objects_) wanted.emplace(gvr_of(obj).resource, object_name(obj));
  const std::string workload = render::workload_name(*config_, render_options_);
  for (const auto& [r, name] : stale_workload_objects(client, config_->job_id, workload, wanted)) {
    confirm_lock();
    try {
      client.remove(*r, config_->job_id, name, prepared.opts);
    } catch (const kube::ApiError& e) {
      if (e.is_not_found()) continue;
      throw PartialFailure(std::current_exception(),
                           "deploy wrote every object but could not delete " + r->kind_dot_group() + "/" + name +
                               ", which the baseline no longer has; re-run: " + rerun_command());
    }
    printer.result(*r, name, "deleted", dry_run_, {});
  }
}

}  // namespace mindie::cmd
