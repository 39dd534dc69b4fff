// deploy --framework aibrix (cmd/aibrix.h): the StormService, then its Services, as steps of the change engine.
#include <algorithm>
#include <optional>

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "cmd/aibrix.h"
#include "cmd/rights.h"
#include "cmd/storm_common.h"

namespace mindie::cmd {

namespace ab = mindie::aibrix;

StormDeployOptions::StormDeployOptions(DeployFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormDeployOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void StormDeployOptions::validate() {
  if (flags_.filename.empty()) throw UsageError("must specify -f stormservice.yaml with --framework aibrix");
  for (auto [given, name] :
       {std::pair{!flags_.env_file.empty(), "-e"}, std::pair{!flags_.config_dir.empty(), "--config-dir"},
        std::pair{!flags_.scripts_dir.empty(), "--scripts-dir"}, std::pair{!flags_.name.empty(), "--name"},
        std::pair{!flags_.overrides.empty(), "--overrides"}, std::pair{!flags_.output_dir.empty(), "--output-dir"},
        std::pair{flags_.adopt, "--adopt"}})
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
  if (dry_run_ == DryRun::Client) {
    for (const auto& obj : objects_) {
      const kube::GVR& r = obj.at("kind").as_string() == ab::kKind ? kStormServices : kube::gvr::kServices;
      printer.result(r, storm::name_of(obj), "serverside-applied", dry_run_, obj);
    }
    return;
  }
  storm::require_crd(client, "nothing was written");
  rights::StormWrites writes{dry_run_ == DryRun::None, !client.get_if_exists(kStormServices, app_namespace_, app_),
                             false};
  for (const auto& svc : storm::list_services(client, app_namespace_, app_))
    writes.prune |= std::none_of(objects_.begin() + 1, objects_.end(), [&](const boost::json::object& o) {
      return storm::name_of(o) == storm::name_of(svc);
    });
  rights::check_before_write(client, app_namespace_, rights::storm_rights(writes, app_namespace_), "deploy");
  const kube::WriteOptions opts = storm::write_options(dry_run_, flags_.force_conflicts);
  std::optional<NamespaceLock> lock;
  lock.emplace(client, printer, app_namespace_, "deploy", lock_wait_, dry_run_ == DryRun::None);
  storm::take_lock(*lock);
  LockFence fence(*lock, std::nullopt);
  change::Runner runner(
      fence, storm::wording("deploy", "kubectl mindie deploy --framework aibrix -f " + flags_.filename, dry_run_));
  // The StormService first: its Services address the pods it makes; a re-run converges from any step.
  std::vector<change::Step> steps{
      storm::apply_step(client, printer, *lock, kStormServices, objects_.front(), opts, dry_run_)};
  for (auto& s : storm::service_steps(client, printer, *lock, app_namespace_, app_,
                                      {objects_.begin() + 1, objects_.end()}, opts, dry_run_))
    steps.push_back(std::move(s));
  runner.run(steps);
  lock->done();
  lock.reset();  // a Ctrl-C during the wait ends it at once
  if (flags_.wait.wait) storm::wait_ready(printer, app_namespace_, app_, timeout_, new_transport);
}

}  // namespace mindie::cmd
