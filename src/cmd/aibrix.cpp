#include "cmd/aibrix.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "aibrix/storm_status.h"
#include "cmd/lock.h"
#include "cmd/wait.h"
#include "kube/names.h"
#include "mindie/render.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;
namespace ab = mindie::aibrix;

const kube::GVR kStormServices{ab::kGroup, ab::kVersion, ab::kPlural, ab::kKind, true};

void add_framework_flags(po::options_description& desc, FrameworkFlags& flags, const std::string& command) {
  if (command != "deploy" && command != "scale" && command != "status" && command != "delete") return;
  desc.add_options()("framework", po::value(&flags.framework)->default_value("mindie"),
                     "mindie (InferServiceSet, default) or aibrix (AIBrix StormService)");
  if (command == "deploy") return;
  desc.add_options()("app", po::value(&flags.app), "--framework aibrix: the StormService name (app_name)");
  if (command != "scale") return;
  desc.add_options()("role", po::value(&flags.role), "--framework aibrix: the role to scale (prefill, decode, routing)")(
      "replicas", po::value<int>()->notifier([&flags](int v) { flags.replicas = v; }),
      "--framework aibrix: the role's new replica count (1..64)");
}

bool use_aibrix(const FrameworkFlags& flags) {
  if (flags.framework == "aibrix") return true;
  if (flags.framework != "mindie")
    throw UsageError("invalid value \"" + flags.framework + "\" for --framework: mindie or aibrix");
  for (auto [given, name] : {std::pair{!flags.app.empty(), "--app"}, std::pair{!flags.role.empty(), "--role"},
                             std::pair{flags.replicas.has_value(), "--replicas"}})
    if (given) throw UsageError(std::string(name) + " needs --framework aibrix");
  return false;
}

namespace {

using util::find;
using util::num;
using util::str;

std::string name_of(const json::object& obj) { return str(find(&obj.at("metadata"), {"name"})); }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

/// "the server does not serve ..." before anything is written: without the CRD every request would fail with a
/// bare 404 that does not say AIBrix is missing.
void require_crd(kube::Client& client, const std::string& nothing_done) {
  if (!client.has_group_version(ab::kGroup, ab::kVersion))
    throw CommandError(std::string("the server does not serve ") + ab::kApiVersion +
                       " (StormService): install AIBrix first; " + nothing_done);
}

void check_app(const std::string& app) {
  if (app.empty()) throw UsageError("--app NAME is required with --framework aibrix (the StormService name)");
  if (!kube::is_dns1035_label(app))
    throw UsageError("--app " + app + " is not a valid StormService name (a DNS-1035 label)");
}

/// Applies `services` and deletes the app's Services (services_selector) that are not among them: Services of
/// replicas scaled away, or of a routing role removed. Prints each change.
void apply_and_prune_services(kube::Client& client, Printer& printer, const std::string& ns, const std::string& app,
                              const std::vector<json::object>& services, const kube::WriteOptions& opts,
                              DryRun dry_run, bool print_objects) {
  std::set<std::string> wanted;
  for (const auto& svc : services) {
    wanted.insert(name_of(svc));
    const json::object stored = apply_taking_back_own_fields(client, kube::gvr::kServices, svc, opts);
    if (print_objects) printer.object(stored);
    else printer.mutation(kube::gvr::kServices, name_of(svc), "serverside-applied", dry_run);
  }
  const json::object list = client.list(kube::gvr::kServices, ns, ab::services_selector(app));
  for (const auto& item : list.at("items").as_array()) {
    const std::string name = str(find(&item, {"metadata", "name"}));
    if (name.empty() || wanted.count(name)) continue;
    try {
      client.remove(kube::gvr::kServices, ns, name, opts);
    } catch (const kube::ApiError& e) {
      if (!e.is_not_found()) throw;  // gone meanwhile: what pruning wanted
      continue;
    }
    if (!print_objects) printer.mutation(kube::gvr::kServices, name, "pruned", dry_run);
  }
}

json::array take(json::object list) { return std::move(list.at("items").as_array()); }

/// The watch targets of one StormService: the object itself (by name) and its pods.
std::vector<kube::WatchTarget> storm_targets(const std::string& ns, const std::string& app) {
  return {{kStormServices, ns, "", "metadata.name=" + app}, {kube::gvr::kPods, ns, ab::pods_selector(app), ""}};
}

json::array to_array(std::vector<json::object> objects) {
  json::array out;
  for (auto& o : objects) out.push_back(std::move(o));
  return out;
}

/// Waits until StormService `app` is ready as ab::build_storm_status says, through a watch of the object and
/// its pods (no polling). Throws CommandError on timeout naming what is not ready, or when the StormService goes.
void wait_storm_ready(const std::string& ns, const std::string& app, std::chrono::milliseconds timeout,
                      const kube::Informer::TransportFactory& new_transport) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  kube::Informer informer(new_transport, storm_targets(ns, app));
  informer.start();
  std::ostream* progress = isatty(STDERR_FILENO) ? &std::cerr : nullptr;
  for (;;) {
    const auto objects = informer.objects(0);
    if (objects.empty())
      throw CommandError("stormservice." + std::string(ab::kGroup) + "/" + app + " is gone from namespace " + ns);
    const ab::StormStatusInputs inputs{objects.front(), to_array(informer.objects(1)), {}, {}};
    const ab::StormStatus report = ab::build_storm_status(ns, inputs, std::chrono::system_clock::now());
    if (report.ready) {
      if (progress) *progress << "\r\x1b[K" << std::flush;
      return;
    }
    if (progress) *progress << "\r\x1b[K" << ab::storm_progress_line(report) << std::flush;
    if (!informer.wait_for_change(deadline)) {
      if (progress) *progress << '\n';
      std::string msg = "timed out waiting for stormservice." + std::string(ab::kGroup) + "/" + app + " to be ready:";
      for (const auto& u : report.unready) msg += "\n  " + u;
      throw CommandError(msg);
    }
  }
}

}  // namespace

// ----------------------------------------------------------------------------------------------------------------
// deploy

StormDeployOptions::StormDeployOptions(DeployFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

namespace {

// Takes the namespace lock (NamespaceLock) at once: a Storm command reads what it plans from only after this, so
// a Replan (someone held the lock since it was observed, or an interrupted change was recovered) has nothing to
// redo.
void take_lock(NamespaceLock& lock) {
  try {
    lock.before_write();
  } catch (const Replan&) {
  }
}

}  // namespace

void StormDeployOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void StormDeployOptions::validate() {
  if (flags_.filename.empty()) throw UsageError("must specify -f stormservice.yaml with --framework aibrix");
  for (auto [given, name] : {std::pair{!flags_.env_file.empty(), "-e"}, std::pair{!flags_.config_dir.empty(), "--config-dir"},
                             std::pair{!flags_.scripts_dir.empty(), "--scripts-dir"}, std::pair{!flags_.name.empty(), "--name"},
                             std::pair{!flags_.overrides.empty(), "--overrides"},
                             std::pair{!flags_.output_dir.empty(), "--output-dir"}, std::pair{flags_.adopt, "--adopt"}})
    if (given) throw UsageError(std::string(name) + " is not supported with --framework aibrix");
  flags_.output.validate();
  timeout_ = check_wait_after_flags(flags_.wait, dry_run_);
  check_namespace_syntax(namespace_flag_);
}

void StormDeployOptions::read_inputs() {
  if (inputs_read_) return;
  const ab::StormConfig cfg = ab::parse_storm_config(read_file(flags_.filename), flags_.filename);
  if (!namespace_flag_.empty() && namespace_flag_ != cfg.app_namespace)
    throw UsageError("the namespace from the command line (--namespace " + namespace_flag_ +
                     ") does not match app_namespace (" + cfg.app_namespace + ") of " + flags_.filename +
                     ": drop -n or make them equal");
  app_ = cfg.app_name;
  app_namespace_ = cfg.app_namespace;
  objects_ = ab::render_storm_service(cfg);
  inputs_read_ = true;
}

void StormDeployOptions::run(kube::Client& client, Printer& printer,
                             const kube::Informer::TransportFactory& new_transport) {
  read_inputs();  // before any request (when the caller has not): a bad file sends nothing
  const json::object& storm = objects_.front();
  const std::vector<json::object> services(objects_.begin() + 1, objects_.end());
  const bool print_objects = printer.format() == "json" || printer.format() == "yaml";

  if (dry_run_ == DryRun::Client) {
    for (const auto& obj : objects_) {
      const kube::GVR& r = obj.at("kind").as_string() == ab::kKind ? kStormServices : kube::gvr::kServices;
      if (print_objects) printer.object(obj);
      else printer.mutation(r, name_of(obj), "serverside-applied", dry_run_);
    }
    return;
  }

  require_crd(client, "nothing was written");
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.force = flags_.force_conflicts;
  opts.field_manager = render::kFieldManager;

  std::optional<NamespaceLock> lock;
  lock.emplace(client, printer, app_namespace_, "deploy", lock_wait_, dry_run_ == DryRun::None);
  take_lock(*lock);
  const json::object stored = apply_taking_back_own_fields(client, kStormServices, storm, opts);
  if (print_objects) printer.object(stored);
  else printer.mutation(kStormServices, app_, "serverside-applied", dry_run_);
  try {
    apply_and_prune_services(client, printer, app_namespace_, app_, services, opts, dry_run_, print_objects);
  } catch (...) {
    if (opts.dry_run) throw;
    // Every apply is idempotent: re-running converges. The StormService runs; only its Services may lag.
    throw PartialFailure(std::current_exception(),
                         "stormservice." + std::string(ab::kGroup) + "/" + app_ +
                             " was applied but its Services were not all applied or pruned; fix the cause above "
                             "and re-run: kubectl mindie deploy --framework aibrix -f " + flags_.filename);
  }
  lock->done();
  lock.reset();  // a Ctrl-C during the wait ends it at once
  if (flags_.wait.wait) {
    printer.flush();
    printer.out() << std::flush;
    wait_storm_ready(app_namespace_, app_, timeout_, new_transport);
    if (!print_objects) printer.out() << kStormServices.kind_dot_group() << "/" << app_ << " ready\n";
  }
}

// ----------------------------------------------------------------------------------------------------------------
// scale

StormScaleOptions::StormScaleOptions(FrameworkFlags framework, ScaleFlags flags, std::string namespace_flag)
    : framework_(std::move(framework)), flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormScaleOptions::validate() {
  const FrameworkFlags& fw = framework_;
  check_app(fw.app);
  check_namespace_syntax(namespace_flag_);
  if (flags_.prefill || flags_.decode || !flags_.filename.empty())
    throw UsageError("--prefill, --decode and -f are for --framework mindie; use --role ROLE --replicas N");
  if (fw.role.empty() || !fw.replicas) throw UsageError("must specify --role ROLE and --replicas N");
  if (fw.role != "prefill" && fw.role != "decode" && fw.role != "routing")
    throw UsageError("--role " + fw.role + " is not a StormService role: prefill, decode or routing");
  if (*fw.replicas < 1 || *fw.replicas > ab::kMaxRoleReplicas)
    throw UsageError("--replicas " + std::to_string(*fw.replicas) + " is out of range: 1.." +
                     std::to_string(ab::kMaxRoleReplicas));
  flags_.output.validate();
  if (dry_run_ == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by scale (it needs the live object): use --dry-run=server");
  timeout_ = check_wait_after_flags(flags_.wait, dry_run_);
}

void StormScaleOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void StormScaleOptions::run(kube::Client& client, Printer& printer,
                            const kube::Informer::TransportFactory& new_transport) {
  const std::string& ns = namespace_;
  const std::string& app = framework_.app;
  const std::string& role = framework_.role;
  const std::string what = "stormservice." + std::string(ab::kGroup) + "/" + app;
  require_crd(client, "nothing was changed");
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  std::optional<NamespaceLock> lock;
  lock.emplace(client, printer, ns, "scale", lock_wait_, dry_run_ == DryRun::None);
  take_lock(*lock);

  // Read, plan, patch with test guards; a 422 means the object changed between the read and the patch (a test op
  // failed): nothing was applied, so re-read and re-plan, a bounded number of times (never a blind overwrite).
  ab::ScalePlan plan;
  json::object result;
  for (int attempt = 1;; ++attempt) {
    json::object live = client.get(kStormServices, ns, app);
    try {
      plan = ab::plan_scale(live, role, *framework_.replicas);
    } catch (const std::invalid_argument& e) {
      throw CommandError(what + " cannot be scaled: " + e.what() + "; nothing was changed");
    }
    if (plan.patch.empty()) {
      result = std::move(live);
      break;
    }
    if (attempt == 1 && !plan.restarted_roles.empty())
      printer.warning("scaling " + role + " from " + std::to_string(plan.from) + " to " +
                      std::to_string(plan.to) + " changes the pod template of role(s) " +
                      joined(plan.restarted_roles) + ": AIBrix recreates their running pods");
    try {
      result = client.patch(kStormServices, ns, app, kube::PatchType::Json, plan.patch, opts);
      break;
    } catch (const kube::ApiError& e) {
      if (!e.is_invalid()) throw;
      if (attempt >= kBaselineWriteAttempts)
        throw CommandError(what + " kept changing while it was scaled (" + std::to_string(attempt) +
                           " attempts; server said: " + e.status_message() + "): nothing was changed; run the "
                           "command again");
    }
  }
  const bool print_objects = printer.format() == "json" || printer.format() == "yaml";
  if (print_objects) printer.object(result);
  else printer.mutation(kStormServices, app, "scaled", dry_run_);
  try {
    apply_and_prune_services(client, printer, ns, app, plan.services, opts, dry_run_, print_objects);
  } catch (...) {
    if (opts.dry_run) throw;
    throw PartialFailure(std::current_exception(),
                         what + " now has " + role + " replicas " + std::to_string(plan.to) +
                             " but its Services were not all applied or pruned; re-run the same command to "
                             "converge");
  }
  lock->done();
  lock.reset();  // a Ctrl-C during the wait ends it at once
  if (flags_.wait.wait) {
    printer.flush();
    printer.out() << std::flush;
    wait_storm_ready(ns, app, timeout_, new_transport);
    if (printer.format().empty()) printer.out() << kStormServices.kind_dot_group() << "/" << app << " ready\n";
  }
}

// ----------------------------------------------------------------------------------------------------------------
// status

StormStatusOptions::StormStatusOptions(FrameworkFlags framework, StatusFlags flags, std::string namespace_flag)
    : framework_(std::move(framework)), flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormStatusOptions::validate() const {
  if (!framework_.app.empty()) check_app(framework_.app);
  check_namespace_syntax(namespace_flag_);
  if (flags_.watch) throw UsageError("--watch is not supported with --framework aibrix yet");
  flags_.output.validate();
}

void StormStatusOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void StormStatusOptions::run(kube::Client& client, Printer& printer) {
  const std::string& ns = namespace_;
  require_crd(client, "no StormService to show");
  std::string app = framework_.app;
  ab::StormStatusInputs inputs;
  if (app.empty()) {
    // Detect: the one StormService kubectl-mindie deployed in the namespace.
    json::array found = take(client.list(kStormServices, ns, std::string(ab::kManagedByLabel) + "=" + ab::kManagedByValue));
    if (found.empty()) throw CommandError("no StormService deployed by kubectl-mindie in namespace " + ns);
    if (found.size() > 1) {
      std::vector<std::string> names;
      for (const auto& f : found) names.push_back(str(find(&f, {"metadata", "name"})));
      throw CommandError("several StormServices in namespace " + ns + " (" + joined(names) + "): pass --app NAME");
    }
    inputs.storm_service = found.front().as_object();
    app = str(find(&found.front(), {"metadata", "name"}));
  } else {
    auto ss = client.get_if_exists(kStormServices, ns, app);
    if (!ss) throw CommandError("stormservice." + std::string(ab::kGroup) + "/" + app + " not found in namespace " + ns);
    inputs.storm_service = std::move(*ss);
  }
  inputs.pods = take(client.list(kube::gvr::kPods, ns, ab::pods_selector(app)));
  inputs.services = take(client.list(kube::gvr::kServices, ns, ab::services_selector(app)));
  // Normal events too: kubelet's Killing about an earlier pod of the same name is the evidence of a recreation.
  inputs.events = take(client.list(kube::gvr::kEvents, ns, "", 500, "involvedObject.kind=Pod"));
  const ab::StormStatus report = ab::build_storm_status(ns, inputs, std::chrono::system_clock::now());
  if (flags_.output.format() == "json" || flags_.output.format() == "yaml") {
    printer.object(report.to_json());
  } else {
    printer.out() << ab::render_storm_status(report, flags_.output.format() == "wide");
  }
}

// ----------------------------------------------------------------------------------------------------------------
// delete

StormDeleteOptions::StormDeleteOptions(FrameworkFlags framework, DeleteFlags flags, std::string namespace_flag)
    : framework_(std::move(framework)), flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormDeleteOptions::validate() {
  check_app(framework_.app);
  if (namespace_flag_.empty())
    throw UsageError("-n NAMESPACE is required: delete never falls back to the kubeconfig's namespace");
  check_namespace_syntax(namespace_flag_);
  flags_.output.validate();
  if (flags_.wait && dry_run_ != DryRun::None) throw UsageError("--wait cannot be used with --dry-run");
  timeout_ = parse_duration(flags_.timeout, "--timeout");
}

void StormDeleteOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void StormDeleteOptions::run(kube::Client& client, Printer& printer,
                             const kube::Informer::TransportFactory& new_transport) {
  const std::string& ns = namespace_flag_;
  const std::string& app = framework_.app;
  require_crd(client, "nothing was deleted");
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  std::optional<NamespaceLock> lock;
  lock.emplace(client, printer, ns, "delete", lock_wait_, dry_run_ == DryRun::None);
  take_lock(*lock);
  const auto exists = client.get_if_exists(kStormServices, ns, app);
  const json::array services = take(client.list(kube::gvr::kServices, ns, ab::services_selector(app)));
  if (!exists && services.empty())
    throw CommandError("stormservice." + std::string(ab::kGroup) + " \"" + app + "\" not found in namespace " + ns +
                       " (and no Services of it): nothing to delete");
  std::vector<std::string> deleted;
  const auto remove = [&](const kube::GVR& r, const std::string& name) {
    if (dry_run_ != DryRun::Client) {
      try {
        client.remove(r, ns, name, opts);
      } catch (const kube::ApiError& e) {
        if (e.is_not_found()) return;  // gone meanwhile: delete is idempotent
        if (deleted.empty() || opts.dry_run) throw;
        std::string state = "delete stopped after deleting:";
        for (const auto& d : deleted) state += "\n  " + d;
        throw PartialFailure(std::current_exception(), state + "\nfix the cause above and re-run: kubectl mindie "
                                                              "delete --framework aibrix -n " + ns + " --app " + app);
      }
    }
    deleted.push_back(r.kind_dot_group() + "/" + name);
    printer.mutation(r, name, "deleted", dry_run_);
  };
  // The StormService first: its pods go with it (ownerReferences); the Services are plain objects of ours.
  if (exists) remove(kStormServices, app);
  for (const auto& svc : services) remove(kube::gvr::kServices, str(find(&svc, {"metadata", "name"})));
  lock->done();  // the Lease stays: other apps of the namespace may use it
  lock.reset();  // a Ctrl-C during the wait ends it at once
  if (!flags_.wait || dry_run_ != DryRun::None) return;
  printer.flush();
  printer.out() << std::flush;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  kube::Informer informer(new_transport, storm_targets(ns, app));
  informer.start();
  for (;;) {
    const std::size_t left = informer.objects(0).size() + informer.objects(1).size();
    if (left == 0) return;
    if (!informer.wait_for_change(deadline)) {
      std::string msg = "timed out waiting for the deletion of stormservice." + std::string(ab::kGroup) + "/" + app +
                        "; still present:";
      for (std::size_t t = 0; t < 2; ++t)
        for (const auto& o : informer.objects(t))
          msg += "\n  " + std::string(t == 0 ? kStormServices.kind_dot_group() : "pod") + "/" + name_of(o);
      throw CommandError(msg);
    }
  }
}

}  // namespace mindie::cmd
