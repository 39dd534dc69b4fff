#include "cmd/storm_common.h"

#include <unistd.h>

#include <iostream>
#include <set>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "aibrix/storm_status.h"
#include "cmd/aibrix.h"
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
  desc.add_options()("role", po::value(&flags.role),
                     "--framework aibrix: the role to scale (prefill, decode, routing)")(
      "replicas", po::value<int>()->notifier([&flags](int v) { flags.replicas = v; }),
      "--framework aibrix: the role's new replica count (1..64)")(
      "allow-restart", po::bool_switch(&flags.allow_restart),
      "--framework aibrix: scale even when AIBrix recreates the running pods of roles whose pod template changes");
}

bool use_aibrix(const FrameworkFlags& flags) {
  if (flags.framework == "aibrix") return true;
  if (flags.framework != "mindie")
    throw UsageError("invalid value \"" + flags.framework + "\" for --framework: mindie or aibrix");
  for (auto [given, name] :
       {std::pair{!flags.app.empty(), "--app"}, std::pair{!flags.role.empty(), "--role"},
        std::pair{flags.replicas.has_value(), "--replicas"}, std::pair{flags.allow_restart, "--allow-restart"}})
    if (given) throw UsageError(std::string(name) + " needs --framework aibrix");
  return false;
}

}  // namespace mindie::cmd

namespace mindie::cmd::storm {

namespace json = boost::json;
namespace ab = mindie::aibrix;
using util::find;
using util::str;

namespace {

/// True when `live` holds every field of `wanted` (objects: each key, recursively; arrays: each item at its index;
/// other values: equal), as a server-side apply of `wanted` leaves it: the server's own additions do not count.
bool holds(const json::value& live, const json::value& wanted) {
  if (const json::object* w = wanted.if_object()) {
    const json::object* l = live.if_object();
    if (l == nullptr) return false;
    for (const auto& [key, value] : *w) {
      const json::value* field = l->if_contains(key);
      if (field == nullptr || !holds(*field, value)) return false;
    }
    return true;
  }
  if (const json::array* w = wanted.if_array()) {
    const json::array* l = live.if_array();
    if (l == nullptr || l->size() < w->size()) return false;
    for (std::size_t i = 0; i < w->size(); ++i)
      if (!holds((*l)[i], (*w)[i])) return false;
    return true;
  }
  return live == wanted;
}

json::array to_array(std::vector<json::object> objects) {
  json::array out;
  for (auto& o : objects) out.push_back(std::move(o));
  return out;
}

}  // namespace

std::string metadata_field(const json::object& obj, std::string_view key) {
  const json::value* md = obj.if_contains("metadata");
  return str(md != nullptr ? find(md, {key}) : nullptr);
}

std::string name_of(const json::object& obj) { return metadata_field(obj, "name"); }

std::string name_of(const json::value& obj) { return obj.is_object() ? name_of(obj.get_object()) : std::string(); }

std::string storm_ref(const std::string& app) { return kStormServices.kind_dot_group() + "/" + app; }

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

std::vector<json::object> find_storms(kube::Client& client, const std::string& ns, const std::string& app) {
  std::vector<json::object> out;
  if (!app.empty()) {
    if (auto found = client.get_if_exists(kStormServices, ns, app)) out.push_back(std::move(*found));
    return out;
  }
  json::object list = client.list(kStormServices, ns, std::string(ab::kManagedByLabel) + "=" + ab::kManagedByValue);
  for (auto& item : list["items"].as_array()) out.push_back(std::move(item.as_object()));
  return out;
}

std::optional<json::object> only_storm(kube::Client& client, const std::string& ns, const std::string& app) {
  std::vector<json::object> found = find_storms(client, ns, app);
  if (found.empty()) return std::nullopt;
  if (found.size() > 1) {
    std::string names;
    for (const auto& f : found) names += (names.empty() ? "" : ", ") + name_of(f);
    throw CommandError("several StormServices in namespace " + ns + " (" + names + "): pass --app NAME");
  }
  return std::move(found.front());
}

json::object find_storm(kube::Client& client, const std::string& ns, const std::string& app) {
  std::optional<json::object> found = only_storm(client, ns, app);
  if (!found && !app.empty()) throw CommandError(storm_ref(app) + " not found in namespace " + ns);
  if (!found) throw CommandError("no StormService deployed by kubectl-mindie in namespace " + ns);
  return std::move(*found);
}

std::vector<std::string> role_names(const json::object& storm_service) {
  const json::value v = storm_service;
  std::vector<std::string> out;
  if (const json::value* roles = find(&v, {"spec", "template", "spec", "roles"}); roles && roles->is_array())
    for (const auto& r : roles->get_array())
      if (std::string name = str(find(&r, {"name"})); !name.empty()) out.push_back(std::move(name));
  return out;
}

void take_lock(NamespaceLock& lock) {
  try {
    lock.before_write();
  } catch (const PlanAgain&) {
  }
}

kube::WriteOptions write_options(DryRun dry_run, bool force) {
  kube::WriteOptions opts;
  opts.dry_run = dry_run == DryRun::Server;
  opts.force = force;
  opts.field_manager = render::kFieldManager;
  return opts;
}

change::Wording wording(const std::string& change, const std::string& rerun, DryRun dry_run) {
  change::Wording w;
  w.change = change;
  w.dry_run = dry_run != DryRun::None;
  w.recovery =
      "each of its writes converges when sent again, and no other command finishes an AIBrix change: fix "
      "the cause above and re-run: " +
      rerun;
  return w;
}

change::Step apply_step(kube::Client& client, Printer& printer, NamespaceLock& lock, const kube::GVR& r,
                        json::object obj, const kube::WriteOptions& opts, DryRun dry_run) {
  const std::string name = name_of(obj);
  change::Step step;
  step.name = r.kind_dot_group() + "/" + name;
  step.verb = "serverside-applied";
  step.write = [&client, &printer, &lock, r, obj, opts, dry_run, name] {
    // A conflict with our own earlier fields may be a rival's that took the lock over: confirm it before forcing.
    json::object stored = apply_taking_back_own_fields(client, r, obj, opts, [&lock] { lock.confirm(); });
    printer.result(r, name, "serverside-applied", dry_run, std::move(stored));
  };
  step.applied = [&client, &printer, r, obj, dry_run, name] {
    auto live = client.get_if_exists(r, metadata_field(obj, "namespace"), name);
    if (!live || !holds(*live, obj)) return false;
    printer.result(r, name, "serverside-applied", dry_run, std::move(*live));
    return true;
  };
  return step;
}

change::Step delete_step(kube::Client& client, Printer& printer, const kube::GVR& r, json::object read,
                         const std::string& verb, const kube::WriteOptions& opts, DryRun dry_run) {
  const std::string ns = metadata_field(read, "namespace");
  const std::string name = name_of(read);
  const std::string uid = metadata_field(read, "uid");
  change::Step step;
  step.name = r.kind_dot_group() + "/" + name;
  step.verb = verb;
  // -o json|yaml lists what was deleted as read (a LIST's items carry no kind).
  read["apiVersion"] = r.api_version();
  read["kind"] = r.kind;
  const auto note = [&printer, r, name, verb, dry_run, read] { printer.result(r, name, verb, dry_run, read); };
  step.write = [&client, r, ns, name, uid, opts, dry_run, note] {
    if (dry_run != DryRun::Client) {
      try {
        client.remove_exact(r, ns, name, uid, "", opts);
      } catch (const kube::ApiError& e) {
        if (e.is_not_found()) return;  // gone meanwhile: what the delete wanted
        throw;
      }
    }
    note();
  };
  // A delete whose answer was lost: gone, being deleted, or replaced by another object of the name.
  step.applied = [&client, r, ns, name, uid, note] {
    const auto live = client.get_if_exists(r, ns, name);
    const bool gone = !live || !metadata_field(*live, "deletionTimestamp").empty() ||
                      metadata_field(*live, "uid") != uid;
    if (gone) note();
    return gone;
  };
  return step;
}

json::array list_services(kube::Client& client, const std::string& ns, const std::string& app) {
  json::object list = client.list(kube::gvr::kServices, ns, ab::services_selector(app));
  return std::move(list.at("items").as_array());
}

std::vector<change::Step> service_steps(kube::Client& client, Printer& printer, NamespaceLock& lock,
                                        const std::string& ns, const std::string& app,
                                        const std::vector<json::object>& services, const kube::WriteOptions& opts,
                                        DryRun dry_run) {
  std::vector<change::Step> steps;
  std::set<std::string> wanted;
  for (const auto& svc : services) {
    wanted.insert(name_of(svc));
    steps.push_back(apply_step(client, printer, lock, kube::gvr::kServices, svc, opts, dry_run));
  }
  for (auto& item : list_services(client, ns, app)) {
    const std::string name = name_of(item);
    if (name.empty() || wanted.count(name) != 0 || !item.is_object()) continue;
    steps.push_back(
        delete_step(client, printer, kube::gvr::kServices, std::move(item.as_object()), "pruned", opts, dry_run));
  }
  return steps;
}

std::vector<kube::WatchTarget> storm_targets(const std::string& ns, const std::string& app) {
  return {{kStormServices, ns, "", "metadata.name=" + app}, {kube::gvr::kPods, ns, ab::pods_selector(app), ""}};
}

void wait_ready(Printer& printer, const std::string& ns, const std::string& app, std::chrono::milliseconds timeout,
                const kube::Informer::TransportFactory& new_transport) {
  printer.flush();
  printer.out() << std::flush;  // what changed is visible before the wait begins
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  kube::Informer informer(new_transport, storm_targets(ns, app));
  informer.start();
  std::ostream* progress = isatty(STDERR_FILENO) ? &std::cerr : nullptr;
  for (;;) {
    const auto objects = informer.objects(0);
    if (objects.empty()) throw CommandError(storm_ref(app) + " is gone from namespace " + ns);
    const ab::StormStatusInputs inputs{objects.front(), to_array(informer.objects(1)), {}, {}};
    const ab::StormStatus report = ab::build_storm_status(ns, inputs, std::chrono::system_clock::now());
    if (report.ready) {
      if (progress) *progress << "\r\x1b[K" << std::flush;
      printer.summary(storm_ref(app) + " ready");
      return;
    }
    if (progress) *progress << "\r\x1b[K" << ab::storm_progress_line(report) << std::flush;
    if (!informer.wait_for_change(deadline)) {
      if (progress) *progress << '\n';
      std::string msg = "timed out waiting for " + storm_ref(app) + " to be ready:";
      for (const auto& u : report.unready) msg += "\n  " + u;
      throw CommandError(msg);
    }
  }
}

}  // namespace mindie::cmd::storm
