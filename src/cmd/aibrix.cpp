#include "cmd/aibrix.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "cmd/wait.h"
#include "mindie/render.h"
#include "kube/pod_state.h"
#include "util/json_path.h"
#include "util/time.h"

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
  if (!config::is_dns1123_label(app) || !std::isalpha(static_cast<unsigned char>(app[0])))
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

/// "waiting for APP: prefill 1/2 decode 1/1" from a report.
std::string progress_line(const json::object& report) {
  std::string line = "waiting for " + std::string(report.at("stormService").as_string()) + ":";
  for (const auto& r : report.at("roles").as_array())
    line += " " + std::string(r.at("name").as_string()) + " " + std::to_string(r.at("readyReplicas").as_int64()) +
            "/" + std::to_string(r.at("replicas").as_int64());
  return line;
}

/// Waits until StormService `app` is ready as build_storm_status_report says, through a watch of the object and
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
    StormStatusInputs inputs{objects.front(), to_array(informer.objects(1)), {}, {}};
    const json::object report = build_storm_status_report(ns, inputs, std::chrono::system_clock::now());
    if (report.at("ready").as_bool()) {
      if (progress) *progress << "\r\x1b[K" << std::flush;
      return;
    }
    if (progress) *progress << "\r\x1b[K" << progress_line(report) << std::flush;
    if (!informer.wait_for_change(deadline)) {
      if (progress) *progress << '\n';
      std::string msg = "timed out waiting for stormservice." + std::string(ab::kGroup) + "/" + app + " to be ready:";
      for (const auto& u : report.at("unready").as_array()) msg += "\n  " + std::string(u.as_string());
      throw CommandError(msg);
    }
  }
}

// ----------------------------------------------------------------------------------------------------------------
// deploy

void deploy(const DeployFlags& flags, const GlobalFlags& global, Printer& printer) {
  // Validation, all before any request.
  if (flags.filename.empty()) throw UsageError("must specify -f stormservice.yaml with --framework aibrix");
  for (auto [given, name] : {std::pair{!flags.env_file.empty(), "-e"}, std::pair{!flags.config_dir.empty(), "--config-dir"},
                             std::pair{!flags.scripts_dir.empty(), "--scripts-dir"}, std::pair{!flags.name.empty(), "--name"},
                             std::pair{!flags.overrides.empty(), "--overrides"},
                             std::pair{!flags.output_dir.empty(), "--output-dir"}})
    if (given) throw UsageError(std::string(name) + " is not supported with --framework aibrix");
  Printer::check_object_format(flags.output);
  const DryRun dry_run = parse_dry_run(flags.dry_run);
  const auto timeout = check_wait_after_flags(flags.wait, dry_run);
  check_namespace_syntax(global.kube.namespace_);
  const ab::StormConfig cfg = ab::parse_storm_config(read_file(flags.filename), flags.filename);
  if (!global.kube.namespace_.empty() && global.kube.namespace_ != cfg.app_namespace)
    throw UsageError("the namespace from the command line (--namespace " + global.kube.namespace_ +
                     ") does not match app_namespace (" + cfg.app_namespace + ") of " + flags.filename +
                     ": drop -n or make them equal");
  const std::vector<json::object> objects = ab::render_storm_service(cfg);
  const json::object& storm = objects.front();
  const std::vector<json::object> services(objects.begin() + 1, objects.end());
  const bool print_objects = printer.format() == "json" || printer.format() == "yaml";

  if (dry_run == DryRun::Client) {
    for (const auto& obj : objects) {
      const kube::GVR& r = obj.at("kind").as_string() == ab::kKind ? kStormServices : kube::gvr::kServices;
      if (print_objects) printer.object(obj);
      else printer.mutation(r, name_of(obj), "serverside-applied", dry_run);
    }
    return;
  }

  Session session(global, std::cerr);
  kube::Client& client = session.client();
  require_crd(client, "nothing was written");
  kube::WriteOptions opts;
  opts.dry_run = dry_run == DryRun::Server;
  opts.force = flags.force_conflicts;
  opts.field_manager = render::kFieldManager;

  const json::object stored = apply_taking_back_own_fields(client, kStormServices, storm, opts);
  if (print_objects) printer.object(stored);
  else printer.mutation(kStormServices, cfg.app_name, "serverside-applied", dry_run);
  try {
    apply_and_prune_services(client, printer, cfg.app_namespace, cfg.app_name, services, opts, dry_run,
                             print_objects);
  } catch (...) {
    if (opts.dry_run) throw;
    // Every apply is idempotent: re-running converges. The StormService runs; only its Services may lag.
    throw PartialFailure(std::current_exception(),
                         "stormservice." + std::string(ab::kGroup) + "/" + cfg.app_name +
                             " was applied but its Services were not all applied or pruned; fix the cause above "
                             "and re-run: kubectl mindie deploy --framework aibrix -f " + flags.filename);
  }
  if (flags.wait.wait) {
    printer.flush();
    std::cout << std::flush;
    wait_storm_ready(cfg.app_namespace, cfg.app_name, timeout, [&session] { return session.new_transport(); });
    if (!print_objects) std::cout << kStormServices.kind_dot_group() << "/" << cfg.app_name << " ready\n";
  }
}

// ----------------------------------------------------------------------------------------------------------------
// scale

void scale(const FrameworkFlags& fw, const ScaleFlags& flags, const GlobalFlags& global, Printer& printer) {
  check_app(fw.app);
  check_namespace_syntax(global.kube.namespace_);
  if (flags.prefill || flags.decode || !flags.filename.empty())
    throw UsageError("--prefill, --decode and -f are for --framework mindie; use --role ROLE --replicas N");
  if (fw.role.empty() || !fw.replicas) throw UsageError("must specify --role ROLE and --replicas N");
  if (fw.role != "prefill" && fw.role != "decode" && fw.role != "routing")
    throw UsageError("--role " + fw.role + " is not a StormService role: prefill, decode or routing");
  if (*fw.replicas < 1 || *fw.replicas > ab::kMaxRoleReplicas)
    throw UsageError("--replicas " + std::to_string(*fw.replicas) + " is out of range: 1.." +
                     std::to_string(ab::kMaxRoleReplicas));
  Printer::check_object_format(flags.output);
  const DryRun dry_run = parse_dry_run(flags.dry_run);
  if (dry_run == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by scale (it needs the live object): use --dry-run=server");
  const auto timeout = check_wait_after_flags(flags.wait, dry_run);

  Session session(global, std::cerr);
  kube::Client& client = session.client();
  const std::string ns = global.kube.namespace_.empty() ? session.rest_config().namespace_ : global.kube.namespace_;
  const std::string app = fw.app;
  const std::string what = "stormservice." + std::string(ab::kGroup) + "/" + app;
  require_crd(client, "nothing was changed");
  kube::WriteOptions opts;
  opts.dry_run = dry_run == DryRun::Server;
  opts.field_manager = render::kFieldManager;

  // Read, plan, patch with test guards; a 422 means the object changed between the read and the patch (a test op
  // failed): nothing was applied, so re-read and re-plan, a bounded number of times (never a blind overwrite).
  ab::ScalePlan plan;
  json::object result;
  for (int attempt = 1;; ++attempt) {
    json::object live = client.get(kStormServices, ns, app);
    try {
      plan = ab::plan_scale(live, fw.role, *fw.replicas);
    } catch (const std::invalid_argument& e) {
      throw CommandError(what + " cannot be scaled: " + e.what() + "; nothing was changed");
    }
    if (plan.patch.empty()) {
      result = std::move(live);
      break;
    }
    if (attempt == 1 && !plan.restarted_roles.empty())
      printer.warning("scaling " + fw.role + " from " + std::to_string(plan.from) + " to " +
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
  else printer.mutation(kStormServices, app, "scaled", dry_run);
  try {
    apply_and_prune_services(client, printer, ns, app, plan.services, opts, dry_run, print_objects);
  } catch (...) {
    if (opts.dry_run) throw;
    throw PartialFailure(std::current_exception(),
                         what + " now has " + fw.role + " replicas " + std::to_string(plan.to) +
                             " but its Services were not all applied or pruned; re-run the same command to "
                             "converge");
  }
  if (flags.wait.wait) {
    printer.flush();
    std::cout << std::flush;
    wait_storm_ready(ns, app, timeout, [&session] { return session.new_transport(); });
    if (printer.format().empty()) std::cout << kStormServices.kind_dot_group() << "/" << app << " ready\n";
  }
}

// ----------------------------------------------------------------------------------------------------------------
// status

void status(const FrameworkFlags& fw, const StatusFlags& flags, const GlobalFlags& global, Printer& printer) {
  if (!fw.app.empty()) check_app(fw.app);
  check_namespace_syntax(global.kube.namespace_);
  if (flags.watch) throw UsageError("--watch is not supported with --framework aibrix yet");
  if (!flags.output.empty() && flags.output != "json" && flags.output != "yaml")
    throw UsageError("unable to match a printer suitable for the output format \"" + flags.output +
                     "\", allowed formats are: json,yaml");
  Session session(global, std::cerr);
  kube::Client& client = session.client();
  const std::string ns = global.kube.namespace_.empty() ? session.rest_config().namespace_ : global.kube.namespace_;
  require_crd(client, "no StormService to show");
  std::string app = fw.app;
  StormStatusInputs inputs;
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
  const json::object report = build_storm_status_report(ns, inputs, std::chrono::system_clock::now());
  if (flags.output == "json" || flags.output == "yaml") {
    printer.object(report);
  } else {
    printer.out() << render_storm_status(report);
  }
}

// ----------------------------------------------------------------------------------------------------------------
// delete

void remove_app(const FrameworkFlags& fw, const DeleteFlags& flags, const GlobalFlags& global, Printer& printer) {
  check_app(fw.app);
  if (global.kube.namespace_.empty())
    throw UsageError("-n NAMESPACE is required: delete never falls back to the kubeconfig's namespace");
  check_namespace_syntax(global.kube.namespace_);
  if (!flags.output.empty() && flags.output != "name")
    throw UsageError("unable to match a printer suitable for the output format \"" + flags.output +
                     "\", allowed formats are: name");
  const DryRun dry_run = parse_dry_run(flags.dry_run);
  if (flags.wait && dry_run != DryRun::None) throw UsageError("--wait cannot be used with --dry-run");
  const auto timeout = parse_duration(flags.timeout, "--timeout");

  Session session(global, std::cerr);
  kube::Client& client = session.client();
  const std::string ns = global.kube.namespace_, app = fw.app;
  require_crd(client, "nothing was deleted");
  kube::WriteOptions opts;
  opts.dry_run = dry_run == DryRun::Server;
  const auto exists = client.get_if_exists(kStormServices, ns, app);
  const json::array services = take(client.list(kube::gvr::kServices, ns, ab::services_selector(app)));
  if (!exists && services.empty())
    throw CommandError("stormservice." + std::string(ab::kGroup) + " \"" + app + "\" not found in namespace " + ns +
                       " (and no Services of it): nothing to delete");
  std::vector<std::string> deleted;
  const auto remove = [&](const kube::GVR& r, const std::string& name) {
    if (dry_run != DryRun::Client) {
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
    printer.mutation(r, name, "deleted", dry_run);
  };
  // The StormService first: its pods go with it (ownerReferences); the Services are plain objects of ours.
  if (exists) remove(kStormServices, app);
  for (const auto& svc : services) remove(kube::gvr::kServices, str(find(&svc, {"metadata", "name"})));
  if (!flags.wait || dry_run != DryRun::None) return;
  printer.flush();
  std::cout << std::flush;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  kube::Informer informer([&session] { return session.new_transport(); }, storm_targets(ns, app));
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

// ----------------------------------------------------------------------------------------------------------------
// status report (pure)

}  // namespace

json::object build_storm_status_report(const std::string& ns, const StormStatusInputs& inputs,
                                       std::chrono::system_clock::time_point now_tp) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(now_tp.time_since_epoch()).count();
  const json::object& ss = inputs.storm_service;
  const json::value ssv = ss;
  const std::string app = str(find(&ssv, {"metadata", "name"}));
  const std::int64_t generation = num(find(&ssv, {"metadata", "generation"}), 1);
  const json::value* observed = find(&ssv, {"status", "observedGeneration"});
  bool ready = observed && num(observed) >= generation;

  // Earlier pods per name, from events about a pod of that name with another uid than the live one.
  std::map<std::string, std::string> live_uid;
  for (const auto& p : inputs.pods) live_uid[str(find(&p, {"metadata", "name"}))] = str(find(&p, {"metadata", "uid"}));
  std::map<std::string, std::set<std::string>> earlier;     // pod name -> earlier uids
  std::map<std::string, std::pair<std::int64_t, std::string>> earlier_event;  // pod name -> (time, text)
  std::map<std::string, std::pair<std::int64_t, std::string>> warning;        // live pod -> latest warning
  for (const auto& e : inputs.events) {
    if (str(find(&e, {"involvedObject", "kind"})) != "Pod") continue;
    const std::string name = str(find(&e, {"involvedObject", "name"})), uid = str(find(&e, {"involvedObject", "uid"}));
    const auto live = live_uid.find(name);
    if (live == live_uid.end()) continue;
    std::string when = str(find(&e, {"lastTimestamp"}));
    if (when.empty()) when = str(find(&e, {"eventTime"}));
    const std::int64_t t = util::parse_rfc3339(when).value_or(0);
    const std::string source = str(find(&e, {"source", "component"})).empty()
                                   ? str(find(&e, {"reportingComponent"}))
                                   : str(find(&e, {"source", "component"}));
    const std::string text = (source.empty() ? "" : source + " ") + str(find(&e, {"reason"})) + ": " +
                             str(find(&e, {"message"}));
    if (!uid.empty() && uid != live->second) {
      earlier[name].insert(uid);
      if (t >= earlier_event[name].first) earlier_event[name] = {t, text};
    } else if (str(find(&e, {"type"})) == "Warning" && t >= warning[name].first) {
      warning[name] = {t, text};
    }
  }

  json::array roles_out, rescheduling, unready;
  const json::value* roles = find(&ssv, {"spec", "template", "spec", "roles"});
  std::map<std::string, const json::value*> role_status;
  if (const auto* rs = find(&ssv, {"status", "roleStatuses"}); rs && rs->is_array())
    for (const auto& r : rs->as_array()) role_status[str(find(&r, {"name"}))] = &r;
  std::set<std::string> role_names;
  if (roles && roles->is_array()) {
    for (const auto& role : roles->as_array()) {
      const std::string name = str(find(&role, {"name"}));
      role_names.insert(name);
      const std::int64_t replicas = num(find(&role, {"replicas"}), 1);
      const std::int64_t group = std::max<std::int64_t>(1, num(find(&role, {"podGroupSize"}), 1));
      const std::string min_avail =
          str(find(&role, {"template", "metadata", "annotations", ab::kMinAvailableAnnotation}));
      // replica -> pods, by AIBrix's labels.
      std::map<std::int64_t, std::vector<const json::value*>> by_replica;
      for (const auto& p : inputs.pods) {
        const json::value* labels = find(&p, {"metadata", "labels"});
        if (str(find(labels, {ab::kRoleNameLabel})) != name) continue;
        const std::string idx = str(find(labels, {ab::kRoleReplicaIndexLabel}));
        std::int64_t r = -1;
        if (!idx.empty() && idx.size() < 6 && std::all_of(idx.begin(), idx.end(), ::isdigit)) r = std::stoll(idx);
        by_replica[r].push_back(&p);
      }
      for (std::int64_t r = 0; r < replicas; ++r) by_replica[r];  // every wanted replica is listed
      std::int64_t pods = 0, ready_pods = 0, restarts_total = 0, recreated = 0, ready_replicas = 0;
      json::array groups;
      for (auto& [r, members] : by_replica) {
        std::sort(members.begin(), members.end(), [](const json::value* a, const json::value* b) {
          const std::string ga = str(find(a, {"metadata", "labels", ab::kPodGroupIndexLabel}));
          const std::string gb = str(find(b, {"metadata", "labels", ab::kPodGroupIndexLabel}));
          if (ga.size() != gb.size()) return ga.size() < gb.size();
          return ga != gb ? ga < gb : str(find(a, {"metadata", "name"})) < str(find(b, {"metadata", "name"}));
        });
        json::array pods_out;
        std::int64_t group_ready = 0;
        for (const json::value* p : members) {
          const std::string pod_name = str(find(p, {"metadata", "name"}));
          const kube::PodState state = kube::read_pod_state(*p, now);
          // A pod being deleted counts as gone: its replica is not ready.
          const bool is_ready = state.ready && !state.terminating;
          const std::int64_t restarts = state.restarts;
          const std::string last_exit = state.last_exit();
          const std::string gidx = str(find(p, {"metadata", "labels", ab::kPodGroupIndexLabel}));
          const std::string where = "pod " + pod_name + " (role " + name + ", replica " + std::to_string(r) +
                                    (gidx.empty() ? "" : ", pod " + gidx) + ")";
          const auto e = earlier.find(pod_name);
          const std::int64_t earlier_count = e == earlier.end() ? 0 : static_cast<std::int64_t>(e->second.size());
          if (earlier_count) {
            ++recreated;
            rescheduling.push_back(json::string(where + ": recreated: " + std::to_string(earlier_count) +
                                                " earlier pod" + (earlier_count > 1 ? "s" : "") + " of this name (" +
                                                earlier_event[pod_name].second + ")"));
          }
          if (restarts)
            rescheduling.push_back(json::string(where + ": " + std::to_string(restarts) + " restarts" +
                                                (last_exit.empty() ? "" : ", last exit " + last_exit)));
          if (!is_ready) {
            std::string line = where + ": " + state.reason;
            if (auto w = warning.find(pod_name); w != warning.end()) line += " [" + w->second.second + "]";
            unready.push_back(json::string(line));
          }
          ++pods;
          ready_pods += is_ready;
          group_ready += is_ready;
          restarts_total += restarts;
          pods_out.push_back(
              {{"name", pod_name},
               {"podGroupIndex", gidx.empty() ? json::value(nullptr) : json::value(std::stoll("0" + gidx))},
               {"phase", state.phase},
               {"status", state.status},
               {"ready", is_ready},
               {"restarts", restarts},
               {"createdAt", state.created_at},
               {"ageSeconds", state.age_seconds ? json::value(*state.age_seconds) : json::value(nullptr)},
               {"node", state.node},
               {"reason", state.reason},
               {"recreated", earlier_count > 0},
               {"earlierPods", earlier_count},
               {"lastEvent", earlier_count ? json::value(earlier_event[pod_name].second)
                                           : warning.count(pod_name) ? json::value(warning[pod_name].second)
                                                                     : json::value(nullptr)}});
        }
        const bool wanted = r >= 0 && r < replicas;
        const bool group_ok = wanted && static_cast<std::int64_t>(members.size()) == group && group_ready == group;
        ready_replicas += group_ok;
        if (!wanted && !members.empty()) {
          ready = false;
          unready.push_back(json::string("role " + name + " replica " + std::to_string(r) + ": " +
                                         std::to_string(members.size()) + " pod(s) beyond the spec's " +
                                         std::to_string(replicas) + " replicas (being removed)"));
        } else if (wanted && static_cast<std::int64_t>(members.size()) != group) {
          unready.push_back(json::string("role " + name + " replica " + std::to_string(r) + ": " +
                                         std::to_string(members.size()) + " of " + std::to_string(group) + " pods"));
        }
        groups.push_back({{"replica", r}, {"ready", group_ok}, {"pods", std::move(pods_out)}});
      }
      if (ready_replicas != replicas) ready = false;
      const auto st = role_status.find(name);
      const json::value* rs = st == role_status.end() ? nullptr : st->second;
      roles_out.push_back({{"name", name},
                           {"replicas", replicas},
                           {"podGroupSize", group},
                           {"minAvailable", min_avail.empty() ? json::value(nullptr) : json::value(min_avail)},
                           {"statusReplicas", rs ? json::value(num(find(rs, {"replicas"}))) : json::value(nullptr)},
                           {"statusReadyReplicas",
                            rs ? json::value(num(find(rs, {"readyReplicas"}))) : json::value(nullptr)},
                           {"readyReplicas", ready_replicas},
                           {"desiredPods", replicas * group},
                           {"pods", pods},
                           {"readyPods", ready_pods},
                           {"restarts", restarts_total},
                           {"recreatedPods", recreated},
                           {"groups", std::move(groups)}});
    }
  }
  // Pods of a role the spec no longer has.
  for (const auto& p : inputs.pods) {
    const std::string role = str(find(&p, {"metadata", "labels", ab::kRoleNameLabel}));
    if (!role_names.count(role)) {
      ready = false;
      unready.push_back(json::string("pod " + str(find(&p, {"metadata", "name"})) + " of role " + role +
                                     ", which the spec no longer has"));
    }
  }

  // Services: what render_services wants for the live object against what exists.
  json::array expected, missing, extra;
  std::set<std::string> present, wanted;
  for (const auto& s : inputs.services) present.insert(str(find(&s, {"metadata", "name"})));
  try {
    for (const auto& s : ab::render_services(ss)) wanted.insert(name_of(s));
  } catch (const std::invalid_argument&) {  // a StormService not shaped as rendered: no Services expected
  }
  for (const auto& n : wanted) {
    expected.push_back(json::string(n));
    if (!present.count(n)) missing.push_back(json::string(n));
  }
  for (const auto& n : present)
    if (!wanted.count(n)) extra.push_back(json::string(n));

  return {{"apiVersion", "kubectl-mindie/v1"},
          {"kind", "StormServiceStatus"},
          {"namespace", ns},
          {"stormService", app},
          {"generation", generation},
          {"observedGeneration", observed ? json::value(num(observed)) : json::value(nullptr)},
          {"ready", ready},
          {"roles", std::move(roles_out)},
          {"services", {{"expected", std::move(expected)}, {"missing", std::move(missing)}, {"extra", std::move(extra)}}},
          {"rescheduling", std::move(rescheduling)},
          {"unready", std::move(unready)}};
}

std::string render_storm_status(const json::object& report) {
  std::ostringstream out;
  const auto s = [](const json::value& v) { return v.is_string() ? std::string(v.as_string()) : std::string(); };
  const auto n = [](const json::value& v) {
    return v.is_int64() ? std::to_string(v.as_int64()) : v.is_null() ? std::string("-") : std::string();
  };
  out << "StormService " << s(report.at("stormService")) << " in namespace " << s(report.at("namespace")) << ": "
      << (report.at("ready").as_bool() ? "ready" : "not ready") << " (generation " << n(report.at("generation"))
      << ", observed " << n(report.at("observedGeneration")) << ")\n\n";
  out << std::left << std::setw(10) << "ROLE" << std::setw(10) << "REPLICAS" << std::setw(8) << "READY"
      << std::setw(11) << "GROUPSIZE" << std::setw(8) << "PODS" << std::setw(10) << "RESTARTS" << std::setw(11)
      << "RECREATED" << "MINAVAILABLE\n";
  for (const auto& r : report.at("roles").as_array()) {
    out << std::setw(10) << s(r.at("name")) << std::setw(10) << n(r.at("replicas")) << std::setw(8)
        << n(r.at("readyReplicas")) << std::setw(11) << n(r.at("podGroupSize")) << std::setw(8)
        << (n(r.at("readyPods")) + "/" + n(r.at("desiredPods"))) << std::setw(10) << n(r.at("restarts"))
        << std::setw(11) << n(r.at("recreatedPods"))
        << (r.at("minAvailable").is_null() ? "-" : s(r.at("minAvailable"))) << '\n';
  }
  out << '\n';
  for (const auto& r : report.at("roles").as_array()) {
    out << "role " << s(r.at("name")) << '\n';
    for (const auto& g : r.at("groups").as_array()) {
      out << "  replica " << n(g.at("replica")) << (g.at("ready").as_bool() ? "  ready" : "  not ready") << '\n';
      for (const auto& p : g.at("pods").as_array()) {
        out << "    " << std::setw(44) << s(p.at("name")) << ' ' << std::setw(18) << s(p.at("status")) << " restarts "
            << n(p.at("restarts")) << "  age "
            << (p.at("ageSeconds").is_null() ? std::string("-") : util::human_duration(p.at("ageSeconds").as_int64()))
            << (p.at("recreated").as_bool() ? "  recreated" : "") << '\n';
      }
    }
  }
  const auto& svc = report.at("services").as_object();
  out << "\nServices: " << svc.at("expected").as_array().size() << " expected";
  for (const char* k : {"missing", "extra"}) {
    const auto& list = svc.at(k).as_array();
    if (list.empty()) continue;
    out << ", " << k << ":";
    for (const auto& v : list) out << ' ' << s(v);
  }
  out << '\n';
  for (const auto& line : report.at("rescheduling").as_array()) out << "rescheduling: " << s(line) << '\n';
  for (const auto& line : report.at("unready").as_array()) out << "not ready: " << s(line) << '\n';
  return out.str();
}

void run_aibrix(const std::string& command, const FrameworkFlags& framework, const DeployFlags& deploy_flags,
                const ScaleFlags& scale_flags, const StatusFlags& status_flags, const DeleteFlags& delete_flags,
                const GlobalFlags& global, Printer& printer) {
  if (command == "deploy") deploy(deploy_flags, global, printer);
  else if (command == "scale") scale(framework, scale_flags, global, printer);
  else if (command == "status") status(framework, status_flags, global, printer);
  else if (command == "delete") remove_app(framework, delete_flags, global, printer);
  else throw UsageError("--framework aibrix is not supported by " + command);
}

}  // namespace mindie::cmd
