// delete --framework aibrix (cmd/aibrix.h): the StormService (its pods go with it), then its Services, as steps of
// the change engine, each deleted only while it is the object read (its uid).
#include <optional>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "cmd/aibrix.h"
#include "cmd/storm_common.h"

namespace mindie::cmd {

namespace json = boost::json;
namespace ab = mindie::aibrix;

StormDeleteOptions::StormDeleteOptions(FrameworkFlags framework, DeleteFlags flags, std::string namespace_flag)
    : framework_(std::move(framework)), flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormDeleteOptions::validate() {
  if (!framework_.app.empty()) storm::check_app(framework_.app);
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
  storm::require_crd(client, "nothing was deleted");
  const kube::WriteOptions opts = storm::write_options(dry_run_);
  std::optional<NamespaceLock> lock;
  lock.emplace(client, printer, ns, "delete", lock_wait_, dry_run_ == DryRun::None);
  storm::take_lock(*lock);
  auto storm_service = storm::only_storm(client, ns, framework_.app);
  app_ = storm_service ? storm::name_of(*storm_service) : framework_.app;
  json::array services = app_.empty() ? json::array() : storm::list_services(client, ns, app_);
  printer.always_list();  // -o json|yaml: what was deleted, however many
  if (!storm_service && services.empty()) {
    // As kubectl delete: a named object that does not exist is NotFound (k8s.io/kubectl pkg/cmd/delete/delete.go,
    // DeleteResult: IgnoreErrors(IsNotFound) with --ignore-not-found), a selection that finds none is not an error.
    if (!framework_.app.empty() && !flags_.ignore_not_found)
      throw CommandError(kStormServices.kind_dot_group() + " \"" + app_ + "\" not found in namespace " + ns +
                         " (and no Services of it): nothing to delete (--ignore-not-found: not an error)");
    printer.summary("No resources found in " + ns + " namespace.");
    lock->done();
    return;
  }
  const std::string& app = app_;
  LockFence fence(*lock, std::nullopt);
  change::Runner runner(
      fence, storm::wording("delete", "kubectl mindie delete --framework aibrix -n " + ns + " --app " + app, dry_run_));
  // The StormService first: its pods go with it (ownerReferences); the Services are plain objects of ours.
  std::vector<change::Step> steps;
  if (storm_service)
    steps.push_back(
        storm::delete_step(client, printer, kStormServices, std::move(*storm_service), "deleted", opts, dry_run_));
  for (auto& svc : services)
    steps.push_back(storm::delete_step(client, printer, kube::gvr::kServices, std::move(svc.as_object()), "deleted",
                                       opts, dry_run_));
  runner.run(steps);
  lock->done();  // the Lease stays: other apps of the namespace may use it
  lock.reset();  // a Ctrl-C during the wait ends it at once
  if (flags_.wait && dry_run_ == DryRun::None) wait_gone(printer, new_transport);
}

void StormDeleteOptions::wait_gone(Printer& printer, const kube::Informer::TransportFactory& new_transport) const {
  const std::string& app = app_;
  printer.flush();
  printer.out() << std::flush;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const auto targets = storm::storm_targets(namespace_flag_, app);
  kube::Informer informer(new_transport, targets);
  informer.start();
  for (;;) {
    if (informer.objects(0).empty() && informer.objects(1).empty()) return;
    if (!informer.wait_for_change(deadline)) {
      std::string msg = "timed out waiting for the deletion of " + storm::storm_ref(app) + "; still present:";
      for (std::size_t t = 0; t < targets.size(); ++t)
        for (const auto& o : informer.objects(t))
          msg += "\n  " + (t == 0 ? kStormServices.kind_dot_group() : std::string("pod")) + "/" + storm::name_of(o);
      throw CommandError(msg);
    }
  }
}

}  // namespace mindie::cmd
