#include "cmd/delete.h"
#include "cmd/node_port_claims.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "cmd/adopt.h"
#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/status.h"
#include "cmd/wait.h"
#include "kube/names.h"
#include "mindie/render.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_delete_flags(po::options_description& desc, DeleteFlags& flags) {
  desc.add_options()
      ("dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
       "none, client (only print what would be deleted) or server (send with dryRun=All)")
      ("wait", po::bool_switch(&flags.wait), "Wait until the workload and its pods are gone")
      ("timeout", po::value(&flags.timeout)->default_value("10m"), "How long --wait waits (30s, 10m, 1h)");
  flags.output.bind(desc);
  add_lock_flags(desc, flags.lock);
}

namespace {

const std::string kRbacPrefix = "mindie-motor-controller-";  // render.cpp: "<service account>-<namespace>"
constexpr const char* kInstanceLabel = "app.kubernetes.io/instance";

const json::object* object_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

std::string label(const json::object& obj, const std::string& key) {
  const auto* md = object_at(obj, "metadata");
  const auto* labels = md ? object_at(*md, "labels") : nullptr;
  const json::value* v = labels ? labels->if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

bool has_owner(const json::object& obj) {
  const auto* md = object_at(obj, "metadata");
  const json::value* refs = md ? md->if_contains("ownerReferences") : nullptr;
  return refs && refs->is_array() && !refs->as_array().empty();
}

std::string metadata_string(const json::object& obj, std::string_view key) {
  const auto* md = object_at(obj, "metadata");
  const json::value* v = md ? md->if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string name_of(const json::object& obj) { return metadata_string(obj, "name"); }

// Items of a LIST; a collection the server does not serve (CRD not installed: 404) is empty.
json::array list_items(kube::Client& client, const kube::GVR& r, const std::string& ns, const std::string& selector) {
  try {
    json::object list = client.list(r, ns, selector);
    json::value* items = list.if_contains("items");
    return items && items->is_array() ? std::move(items->get_array()) : json::array();
  } catch (const kube::ApiError& e) {
    if (e.code() == 404) return {};
    throw;
  }
}

// Why a cluster-scoped RBAC object is not this deployment's own ("" = it is).
std::string foreign_rbac(const json::object& obj, const std::string& ns, const std::string& workload) {
  if (!managed_by_us(obj))
    return "not labelled app.kubernetes.io/managed-by=kubectl-mindie";
  const std::string instance = label(obj, kInstanceLabel);
  if (!workload.empty() && instance != workload)
    return "its label " + std::string(kInstanceLabel) + " is \"" + instance + "\", not \"" + workload + "\"";
  if (const json::value* subjects = obj.if_contains("subjects"); subjects && subjects->is_array()) {
    for (const auto& s : subjects->as_array()) {
      const auto* so = s.is_object() ? &s.get_object() : nullptr;
      const json::value* sns = so ? so->if_contains("namespace") : nullptr;
      if (!sns || !sns->is_string() || sns->as_string() != ns)
        return "it binds subjects outside namespace " + ns;
    }
  }
  return "";
}

}  // namespace

DeletePlan plan_delete(kube::Client& client, const std::string& ns) {
  DeletePlan plan;
  plan.ns = ns;
  plan.config_map = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  if (plan.config_map) {
    require_ours(*plan.config_map, ns, "delete", "nothing was deleted");
    // Written before the annotations existed: the baseline names them (a broken baseline leaves labels only).
    const baseline::Baseline stored = baseline::read_baseline(*plan.config_map, ns);
    plan.workload = stored.recorded_workload;
    plan.deploy_mode = stored.recorded_mode;
    if (stored.config) {
      if (plan.workload.empty()) plan.workload = render::default_service_set_name(*stored.config);
      if (plan.deploy_mode.empty()) plan.deploy_mode = std::string(config::to_string(stored.config->deploy_mode));
    }
    if (plan.workload.empty()) plan.workload = label(*plan.config_map, kInstanceLabel);
    // A hand-edited annotation must never reach a request path or a selector.
    if (!plan.workload.empty() && !kube::is_dns1123_label(plan.workload))
      throw CommandError("configmap/" + std::string(baseline::kConfigMapName) + " records workload name \"" +
                         plan.workload + "\", which is not a DNS-1123 label; nothing was deleted");
  }

  // Namespaced objects: by label (the namespace holds one deployment: its job_id), the recorded workload name
  // narrowing the selector when known. Owned objects (the operator's workloads, ReplicaSets) go with their owner.
  std::string selector = kManagedBySelector;
  if (!plan.workload.empty()) selector += "," + std::string(kInstanceLabel) + "=" + plan.workload;
  std::set<std::pair<std::string, std::string>> seen;  // resource, name
  const auto add = [&](const kube::GVR& r, const json::object& obj, const std::string& target_ns) {
    if (seen.emplace(r.resource + "." + r.group, name_of(obj)).second)
      plan.targets.push_back({r, target_ns, name_of(obj), "", metadata_string(obj, "uid"), ""});
  };
  // The workload first: its deletion stops the operator from recreating what follows.
  std::int64_t services = 1;
  if (!plan.workload.empty()) {
    std::optional<json::object> iss;
    try {
      iss = client.get_if_exists(kube::gvr::kInferServiceSets, ns, plan.workload);
    } catch (const kube::ApiError& e) {
      if (e.code() != 404) throw;  // a 404 without the object's name: the CRD is not installed
    }
    if (iss && managed_by_us(*iss)) {
      add(kube::gvr::kInferServiceSets, *iss, ns);
      services = status::service_count(iss);
    }
  }
  for (const kube::GVR* r : {&kube::gvr::kInferServiceSets, &kube::gvr::kDeployments, &kube::gvr::kServices,
                             &kube::gvr::kServiceAccounts}) {
    for (const auto& item : list_items(client, *r, ns, selector)) {
      const auto& obj = item.as_object();
      if (!has_owner(obj)) add(*r, obj, ns);
    }
  }

  // Cluster-scoped RBAC: deploy names it after the namespace; only this deployment's own is deleted.
  for (const kube::GVR* r : {&kube::gvr::kClusterRoleBindings, &kube::gvr::kClusterRoles}) {
    const std::string name = kRbacPrefix + ns;
    const auto obj = client.get_if_exists(*r, "", name);
    if (!obj) continue;
    const std::string why = foreign_rbac(*obj, ns, plan.workload);
    plan.targets.push_back({*r, "", name, why, metadata_string(*obj, "uid"), metadata_string(*obj, "resourceVersion")});
  }
  // The nodePorts deploy claimed cluster-wide (cmd/node_port_claims.h), found by the namespace they name.
  for (const auto& item : list_items(client, kube::gvr::kClusterRoles, "", std::string(kClaimedByLabel) + "=" + ns)) {
    const auto& obj = item.as_object();
    plan.targets.push_back({kube::gvr::kClusterRoles, "", name_of(obj), "", metadata_string(obj, "uid"),
                            metadata_string(obj, "resourceVersion")});
  }

  // What --wait waits for: the workload and its Deployments, and every pod of either.
  // multi_deployment and single_container have no InferServiceSet (and the cluster may not serve the CRD): their
  // Deployments and pods carry the labels of `selector`, below.
  if (!plan.workload.empty() && !baseline::runs_deployments(plan.deploy_mode)) {
    plan.gone.push_back({kube::gvr::kInferServiceSets, ns, "", "metadata.name=" + plan.workload});
    plan.gone.push_back({kube::gvr::kPods, ns, status::service_selector(plan.workload, services), ""});
  }
  plan.gone.push_back({kube::gvr::kDeployments, ns, selector, ""});
  plan.gone.push_back({kube::gvr::kPods, ns, selector, ""});
  return plan;
}

DeleteOptions::DeleteOptions(DeleteFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void DeleteOptions::validate() {
  if (namespace_flag_.empty())
    throw UsageError("-n NAMESPACE is required: delete removes the deployment of one namespace (its job_id)");
  check_namespace_syntax(namespace_flag_);
  flags_.output.validate();
  WaitAfterFlags w{flags_.wait, flags_.timeout};
  timeout_ = check_wait_after_flags(w, dry_run_);
}

void DeleteOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

bool DeleteOptions::remove(kube::Client& client, const DeleteTarget& t) const {
  if (dry_run_ == DryRun::Client) return client.get_if_exists(t.gvr, t.ns, t.name).has_value();
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  try {
    if (t.uid.empty()) client.remove(t.gvr, t.ns, t.name, opts);
    else client.remove_exact(t.gvr, t.ns, t.name, t.uid, t.resource_version, opts);
  } catch (const kube::ApiError& e) {
    if (e.is_not_found()) return false;  // gone meanwhile (or a re-run): idempotent
    throw;
  }
  return true;
}

change::Step DeleteOptions::delete_step(kube::Client& client, const DeleteTarget& t, Printer& printer,
                                        std::vector<std::string>& deleted) const {
  change::Step step;
  step.name = t.gvr.kind_dot_group() + "/" + t.name;
  step.verb = "deleted";
  const auto note = [this, &printer, &deleted, t, name = step.name] {
    printer.mutation(t.gvr, t.name, "deleted", dry_run_);
    deleted.push_back(name);
  };
  step.write = [this, &client, t, note] {
    if (remove(client, t)) note();
  };
  // A delete whose answer was lost: gone, being deleted, or replaced by another object of the name.
  step.applied = [&client, t, note] {
    const auto live = client.get_if_exists(t.gvr, t.ns, t.name);
    const auto* md = live ? object_at(*live, "metadata") : nullptr;
    const bool gone = md == nullptr || md->contains("deletionTimestamp") ||
                      (!t.uid.empty() && metadata_string(*live, "uid") != t.uid);
    if (gone) note();
    return gone;
  };
  return step;  // no undo: a delete cannot be taken back; a delete stopped half-way is finished by the next command
}

void DeleteOptions::wait_gone(const std::vector<kube::WatchTarget>& gone,
                              const kube::Informer::TransportFactory& new_transport, NamespaceLock& lock) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  kube::Informer informer(new_transport, gone);
  informer.start();
  const auto left = [&] {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < gone.size(); ++i)
      for (const auto& obj : informer.objects(i)) names.push_back(gone[i].gvr.kind_dot_group() + "/" + name_of(obj));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  };
  for (;;) {
    const auto remaining = left();
    if (remaining.empty()) return;
    // Woken every second to see a noted Ctrl-C (the namespace lock's InterruptGuard holds signals back) and to
    // renew the lock when due: it is held through the wait.
    check_interrupt("while waiting for the deletion of the deployment in namespace " + namespace_flag_ +
                    ": the deletions were sent; configmap/" + baseline::kConfigMapName + " (the record) is kept: "
                    "re-run kubectl mindie delete -n " + namespace_flag_ + " --wait to finish");
    const auto wake = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    if (!informer.wait_for_change(wake)) {
      if (std::chrono::steady_clock::now() < deadline) {
        lock.renew();  // held through the wait, its intent kept (the record is deleted after it)
        continue;
      }
      const auto still = left();
      if (still.empty()) return;
      std::string message = "timed out waiting for the deletion of the deployment in namespace " + namespace_flag_ +
                            "; still there:";
      for (const auto& n : still) message += "\n* " + n;
      message += "\nconfigmap/" + std::string(baseline::kConfigMapName) + " (the record) is kept: re-run kubectl mindie "
                 "delete -n " + namespace_flag_ + " --wait once they are gone";
      throw CommandError(message);
    }
  }
}

void DeleteOptions::run(kube::Client& client, Printer& printer, const kube::Informer::TransportFactory& new_transport) {
  NamespaceLock lock(client, printer, namespace_flag_, "delete", lock_wait_, dry_run_ == DryRun::None);
  Deleted done;
  try {
    done = run_once(client, printer, new_transport, lock);
  } catch (const Replan&) {
    done = run_once(client, printer, new_transport, lock);  // another command held the lock since the plan: again
  }
  // The lock's Lease goes with the deployment: nothing of it is left (a failure above keeps the Lease and the
  // intent, for the next command to finish the delete).
  lock.done(/*remove=*/true);
  if (done.objects == 0 && !done.config_map) printer.out() << "No resources found in " << namespace_flag_ << " namespace.\n";
}

/// The lock finishes or reverts an interrupted delete through this (cmd/lock.h, register_recovery).
const bool kRecoveryRegistered = register_recovery("delete", &DeleteOptions::recover);

std::string DeleteOptions::recover(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                   const json::object& intent, const std::string& what) {
  // Nothing deleted yet (every target it named is there, none being deleted): a delete killed before its first
  // delete is dropped, not carried out by whatever command comes next.
  if (const auto* t = intent.if_contains("targets"); t != nullptr && t->is_array() && !t->get_array().empty()) {
    bool untouched = true;
    for (const auto& v : t->get_array()) {
      const json::object* o = v.if_object();
      const auto field = [&](const char* k) {
        const json::value* f = o != nullptr ? o->if_contains(k) : nullptr;
        return f != nullptr && f->is_string() ? std::string(f->get_string()) : std::string();
      };
      const kube::GVR* r = kube::gvr::for_kind(field("apiVersion"), field("kind"));
      const std::string name = field("name"), target_ns = field("namespace");
      // Only this deployment's namespace (or cluster-scoped RBAC) and valid names reach a request path.
      if (r == nullptr || !kube::is_dns1123_subdomain(name) || (!target_ns.empty() && target_ns != ns)) {
        untouched = false;
        break;
      }
      const auto live = client.get_if_exists(*r, target_ns, name);
      const auto* md = live ? object_at(*live, "metadata") : nullptr;
      if (md == nullptr || md->contains("deletionTimestamp")) {
        untouched = false;
        break;
      }
    }
    if (untouched) return "recovered " + what + ": dropped: nothing of it had been deleted";
  }
  DeleteOptions o(DeleteFlags{}, ns);
  o.complete();
  o.validate();
  std::ostream quiet(nullptr);  // the line returned says what happened
  Printer printer(quiet, quiet, "");
  const Deleted d = o.run_once(client, printer, {}, lock);
  if (d.objects == 0 && !d.config_map) return "recovered " + what + ": nothing was left to delete";
  return "recovered " + what + ": finished, deleted what was left of the deployment (" +
         std::to_string(d.objects) + (d.objects == 1 ? " object" : " objects") + ")";
}

DeleteOptions::Deleted DeleteOptions::run_once(kube::Client& client, Printer& printer,
                                               const kube::Informer::TransportFactory& new_transport,
                                               NamespaceLock& lock) {
  const std::string& ns = namespace_flag_;
  DeletePlan plan = plan_delete(client, ns);
  // Recorded before the first delete: a delete stopped half-way is finished by the next command (recover()), one
  // that deleted nothing yet is dropped (what it would delete, all of which is still there).
  json::array targets;
  for (const auto& t : plan.targets)
    if (t.kept_reason.empty())
      targets.push_back({{"apiVersion", t.gvr.api_version()}, {"kind", t.gvr.kind}, {"namespace", t.ns}, {"name", t.name}});
  if (plan.config_map)
    targets.push_back({{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"namespace", ns}, {"name", baseline::kConfigMapName}});
  const json::object intent{{"workload", plan.workload}, {"mode", plan.deploy_mode}, {"targets", std::move(targets)}};
  // An unfinished change is superseded (a delete removes it all) before anything else, even with nothing to delete;
  // a Lease left with nothing else of the deployment is taken to be deleted with it.
  if (lock.unfinished_change_seen() || (plan.targets.empty() && !plan.config_map && lock.lease_seen()))
    lock.before_write(intent);
  std::vector<std::string> deleted;
  change::Wording wording;
  wording.change = "delete";
  wording.dry_run = dry_run_ != DryRun::None;
  wording.recovery = "configmap/" + std::string(baseline::kConfigMapName) + " (the record of the deployment) is "
                     "kept; the record of this delete stays in lease/" + kLockLeaseName + ": the next kubectl-mindie "
                     "command in namespace " + ns + " finishes it (a deploy supersedes it); fix the cause above and "
                     "re-run: kubectl mindie delete -n " + ns;
  LockFence fence(lock, intent);
  change::Runner runner(fence, wording);
  std::vector<change::Step> steps;
  for (const auto& t : plan.targets) {
    if (t.kept_reason.empty()) steps.push_back(delete_step(client, t, printer, deleted));
    else printer.warning(t.gvr.kind_dot_group() + "/" + t.name + " kept: " + t.kept_reason);
  }
  runner.run(steps);
  // The record goes last, after the workload is gone when waiting: a delete that stops early can be re-run.
  if (flags_.wait && dry_run_ == DryRun::None) wait_gone(plan.gone, new_transport, lock);
  if (plan.config_map)
    runner.run({delete_step(client,
                            {kube::gvr::kConfigMaps, ns, baseline::kConfigMapName, "",
                             metadata_string(*plan.config_map, "uid"),
                             metadata_string(*plan.config_map, "resourceVersion")},
                            printer, deleted)});
  return {deleted.size(), plan.config_map.has_value()};
}

namespace {

/// delete: DeleteOptions, or StormDeleteOptions with --framework aibrix.
class DeleteInvocation : public Invocation {
 public:
  explicit DeleteInvocation(po::options_description& desc) {
    add_delete_flags(desc, flags_);
    add_framework_flags(desc, framework_, "delete");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      StormDeleteOptions o(framework_, flags_, global.kube.namespace_);
      o.complete();
      o.validate();
      Session session(global, std::cerr, kLockRequestBound);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
      return;
    }
    DeleteOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    Session session(global, std::cerr, kLockRequestBound);
    o.run(session.client(), printer, [&session] { return session.new_transport(); });
  }

 private:
  DeleteFlags flags_;
  FrameworkFlags framework_;
};

}  // namespace

Command delete_command() {
  return {"delete",
          "Delete what deploy created in a namespace (motor-config last)",
          "kubectl mindie delete -n NS [--wait] [--timeout 10m] [--dry-run=server|client] [flags]",
          "Delete what deploy created in namespace NS: the workload (found by the names recorded in motor-config and\n"
          "by the label app.kubernetes.io/managed-by=kubectl-mindie), the controller's ServiceAccount, its cluster\n"
          "RBAC when it is this deployment's own, and the motor-config ConfigMap last, so an interrupted delete can\n"
          "be run again. Objects already gone are skipped.",
          "  # Delete the deployment in mindie-demo\n"
          "  kubectl mindie delete -n mindie-demo\n\n"
          "  # Delete and wait until its pods are gone\n"
          "  kubectl mindie delete -n mindie-demo --wait --timeout 5m\n\n"
          "  # Show what would be deleted\n"
          "  kubectl mindie delete -n mindie-demo --dry-run=client\n\n"
          "  # Delete an AIBrix StormService and its Services, and wait for its pods to go\n"
          "  kubectl mindie delete --framework aibrix -n vllm-test --app qwen3-pd --wait\n",
          DeleteFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<DeleteInvocation>(desc);
          }};
}

}  // namespace mindie::cmd
