// scale --framework aibrix (cmd/aibrix.h): a JSON Patch guarded by test ops, then the Services the new count needs,
// as steps of the change engine.
#include <algorithm>
#include <chrono>
#include <optional>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "cmd/aibrix.h"
#include "cmd/rights.h"
#include "cmd/storm_common.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace json = boost::json;
namespace ab = mindie::aibrix;

namespace {

/// spec.template.spec.roles[name=`role`].replicas of `storm` (-1 when it has none).
std::int64_t role_replicas(const json::object& storm, const std::string& role) {
  const json::value* spec = storm.if_contains("spec");
  const json::value* roles = spec != nullptr ? util::find(spec, {"template", "spec", "roles"}) : nullptr;
  if (roles == nullptr || !roles->is_array()) return -1;
  for (const auto& r : roles->get_array())
    if (util::str(util::find(&r, {"name"})) == role) return util::num(util::find(&r, {"replicas"}), -1);
  return -1;
}

/// The server's message when `cause` (or, after a server dry run, the cause the runner wrapped) is a 422: a test op
/// of the patch failed, so nothing was applied: the StormService changed since it was read, or this very patch
/// applied before its reply was lost and met the transport's retry; a re-read tells.
std::optional<std::string> failed_test_op(const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const PartialFailure& f) {
    return failed_test_op(f.cause());
  } catch (const kube::ApiError& e) {
    if (e.is_invalid()) return e.status_message();
  } catch (...) {
  }
  return std::nullopt;
}

}  // namespace

StormScaleOptions::StormScaleOptions(FrameworkFlags framework, ScaleFlags flags, std::string namespace_flag)
    : framework_(std::move(framework)), flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormScaleOptions::validate() {
  const FrameworkFlags& fw = framework_;
  if (!fw.app.empty()) storm::check_app(fw.app);
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
  storm::require_crd(client, "nothing was changed");
  std::optional<NamespaceLock> lock;
  lock.emplace(client, printer, namespace_, "scale", lock_wait_, dry_run_ == DryRun::None);
  const std::optional<json::object> storm = framework_.app.empty()
                                                ? storm::find_storm(client, namespace_, "")
                                                : client.get_if_exists(kStormServices, namespace_, framework_.app);
  if (framework_.app.empty()) framework_.app = storm::name_of(*storm);
  const rights::StormWrites writes{dry_run_ == DryRun::None, false, storm && prunes(client, *storm)};
  rights::check_before_write(client, namespace_, rights::storm_rights(writes, namespace_), "scale");
  storm::take_lock(*lock);
  LockFence fence(*lock, std::nullopt);
  change::Runner runner(fence, storm::wording("scale",
                                              "kubectl mindie scale --framework aibrix -n " + namespace_ + " --app " +
                                                  framework_.app + " --role " + framework_.role + " --replicas " +
                                                  std::to_string(*framework_.replicas),
                                              dry_run_));
  const ab::ScalePlan plan = patch_replicas(client, printer, runner);
  runner.run(storm::service_steps(client, printer, *lock, namespace_, framework_.app, plan.services,
                                  storm::write_options(dry_run_), dry_run_));
  lock->done();
  lock.reset();  // a Ctrl-C during the wait ends it at once
  if (flags_.wait.wait) storm::wait_ready(printer, namespace_, framework_.app, timeout_, new_transport);
}

bool StormScaleOptions::prunes(kube::Client& client, const json::object& storm) const {
  std::vector<json::object> wanted;
  try {
    wanted = ab::plan_scale(storm, framework_.role, *framework_.replicas).services;
  } catch (const std::invalid_argument&) {
    return false;  // refused later, with its reason, before any write
  }
  for (const auto& svc : storm::list_services(client, namespace_, framework_.app))
    if (std::none_of(wanted.begin(), wanted.end(),
                     [&](const json::object& o) { return storm::name_of(o) == storm::name_of(svc); }))
      return true;
  return false;
}

ab::ScalePlan StormScaleOptions::patch_replicas(kube::Client& client, Printer& printer, change::Runner& runner) {
  const std::string& app = framework_.app;
  const std::string& role = framework_.role;
  // Read, plan, patch with test guards; a 422 means the object changed between the read and the patch (a test op
  // failed): nothing was applied, so re-read and re-plan, a bounded number of times (never a blind overwrite).
  for (int attempt = 1;; ++attempt) {
    json::object live = client.get(kStormServices, namespace_, app);
    ab::ScalePlan plan;
    try {
      plan = ab::plan_scale(live, role, *framework_.replicas);
    } catch (const std::invalid_argument& e) {
      throw CommandError(storm::storm_ref(app) + " cannot be scaled: " + e.what() + "; nothing was changed");
    }
    if (plan.patch.empty()) {
      printer.result(kStormServices, app, "scaled", dry_run_, std::move(live));
      return plan;
    }
    if (attempt == 1 && !plan.restarted_roles.empty()) {
      std::string roles;
      for (const auto& r : plan.restarted_roles) roles += (roles.empty() ? "" : ", ") + r;
      const std::string what = "scaling " + role + " from " + std::to_string(plan.from) + " to " +
                               std::to_string(plan.to) + " changes the pod template of role(s) " + roles;
      if (!framework_.allow_restart)
        throw CommandError(what +
                           ", and AIBrix would recreate their running pods: pass --allow-restart to scale "
                           "anyway; nothing was changed");
      printer.warning(what + ": AIBrix recreates their running pods");
    }
    if (!plan.restarted_roles.empty()) {
      // Recorded with the change, so status can say which pods AIBrix recreated for it.
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      for (auto& op : ab::template_change_ops(live, plan.restarted_roles,
                                              std::chrono::duration_cast<std::chrono::seconds>(now).count()))
        plan.patch.push_back(std::move(op));
    }
    try {
      runner.run({scale_step(client, printer, plan)});
      return plan;
    } catch (...) {
      const std::optional<std::string> refusal = failed_test_op(std::current_exception());
      if (!runner.written().empty() || !refusal) throw;
      if (attempt >= kBaselineWriteAttempts)
        throw CommandError(storm::storm_ref(app) + " kept changing while it was scaled (" + std::to_string(attempt) +
                           " attempts; server said: " + *refusal + "): nothing was changed; run the command again");
    }
  }
}

change::Step StormScaleOptions::scale_step(kube::Client& client, Printer& printer, const ab::ScalePlan& plan) const {
  change::Step step;
  step.name = storm::storm_ref(framework_.app);
  step.verb = "scaled";
  // A failed test op (422) is a refusal to the runner: nothing applied; patch_replicas re-reads and plans again.
  step.write = [this, &client, &printer, patch = plan.patch] {
    json::object patched = client.patch(kStormServices, namespace_, framework_.app, kube::PatchType::Json, patch,
                                        storm::write_options(dry_run_));
    printer.result(kStormServices, framework_.app, "scaled", dry_run_, std::move(patched));
  };
  // A patch whose answer was lost: the role has the new count (the test ops let no one else's change through).
  step.applied = [this, &client, &printer, to = plan.to] {
    json::object live = client.get(kStormServices, namespace_, framework_.app);
    if (role_replicas(live, framework_.role) != to) return false;
    printer.result(kStormServices, framework_.app, "scaled", dry_run_, std::move(live));
    return true;
  };
  return step;  // no undo: the scale goes forward, a re-run converges
}

}  // namespace mindie::cmd
