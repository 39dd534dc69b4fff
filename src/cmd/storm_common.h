// What the --framework aibrix commands (storm_deploy.cpp, storm_scale.cpp, storm_status.cpp, storm_delete.cpp) share:
// the checks before a request, their writes as change::Steps (docs/architecture.md, "The change protocol") and the
// readiness wait.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "change/runner.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "kube/watch.h"

namespace mindie::cmd::storm {

/// metadata.`key` of `obj` ("" when absent).
std::string metadata_field(const boost::json::object& obj, std::string_view key);
/// metadata.name of `obj` ("" when absent or not an object).
std::string name_of(const boost::json::object& obj);
std::string name_of(const boost::json::value& obj);

/// "stormservice.orchestration.aibrix.ai/APP", as the output names it.
std::string storm_ref(const std::string& app);

/// Throws CommandError ("the server does not serve ... install AIBrix first; `nothing_done`") when the StormService
/// CRD is not served: without it every request would fail with a bare 404 that does not say AIBrix is missing.
void require_crd(kube::Client& client, const std::string& nothing_done);

/// --app: required, a DNS-1035 label. Throws UsageError.
void check_app(const std::string& app);

/// The StormServices a command given `app` (--app, or "") acts on in `ns`: the one named `app` (none when it does not
/// exist), else each one kubectl-mindie deployed (its managed-by label).
std::vector<boost::json::object> find_storms(kube::Client& client, const std::string& ns, const std::string& app);

/// The one StormService of find_storms; nullopt when there is none. Throws CommandError when there are several
/// (naming them: pass --app).
std::optional<boost::json::object> only_storm(kube::Client& client, const std::string& ns, const std::string& app);

/// only_storm, which must exist. Throws CommandError when there is none, or several.
boost::json::object find_storm(kube::Client& client, const std::string& ns, const std::string& app);

/// The names of `storm_service`'s roles (spec.template.spec.roles), in its order.
std::vector<std::string> role_names(const boost::json::object& storm_service);

/// Takes the namespace lock at once: a Storm command reads what it plans from only after this, so a PlanAgain (someone
/// held the lock since it was observed) has nothing to redo.
void take_lock(NamespaceLock& lock);

/// The options of every write: kubectl-mindie's field manager, dryRun=All for a server dry run, `force` (deploy's
/// --force-conflicts).
kube::WriteOptions write_options(DryRun dry_run, bool force = false);

/// How the runner words a failure of an AIBrix `change`: no intent is recorded (no command recovers an AIBrix
/// change), every step goes forward only, so the recovery is `rerun`, the command to run again.
change::Wording wording(const std::string& change, const std::string& rerun, DryRun dry_run);

/// Server-side apply of `obj` as `r`, printed as "serverside-applied" (Printer::result); a lost answer is read back
/// (applied: the live object holds every field of `obj`). No undo: applies are idempotent, a re-run converges. A
/// conflict with the tool's own earlier fields is taken back only after `lock` confirms it is still ours.
change::Step apply_step(kube::Client& client, Printer& printer, NamespaceLock& lock, const kube::GVR& r,
                        boost::json::object obj, const kube::WriteOptions& opts, DryRun dry_run);

/// Deletes `read` (as read under the lock) as `r` only while it is still that object (uid precondition,
/// kube::Client::remove_exact), printed with `verb` (Printer::result); one already gone is skipped. Under
/// --dry-run=client nothing is sent. A lost answer is read back (gone, being deleted or replaced). No undo.
change::Step delete_step(kube::Client& client, Printer& printer, const kube::GVR& r, boost::json::object read,
                         const std::string& verb, const kube::WriteOptions& opts, DryRun dry_run);

/// The app's Services (ab::services_selector) in `ns`, as listed now.
boost::json::array list_services(kube::Client& client, const std::string& ns, const std::string& app);

/// The steps that apply `services` and prune the app's Services not among them (of replicas scaled away, or of a
/// routing role removed), from one LIST of what exists now.
std::vector<change::Step> service_steps(kube::Client& client, Printer& printer, NamespaceLock& lock,
                                        const std::string& ns, const std::string& app,
                                        const std::vector<boost::json::object>& services,
                                        const kube::WriteOptions& opts, DryRun dry_run);

/// The watch targets of one StormService: the object itself (by name) and its pods.
std::vector<kube::WatchTarget> storm_targets(const std::string& ns, const std::string& app);

/// Prints what was queued, then waits until StormService `app` is ready as ab::build_storm_status says, through a
/// watch of the object and its pods (no polling), and prints "... ready" (human output only). Throws CommandError
/// on timeout naming what is not ready, or when the StormService goes.
void wait_ready(Printer& printer, const std::string& ns, const std::string& app, std::chrono::milliseconds timeout,
                const kube::Informer::TransportFactory& new_transport);

}  // namespace mindie::cmd::storm
