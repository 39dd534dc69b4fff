#include "cmd/deploy.h"

#include <iostream>

#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/deploy_checks.h"
#include "cmd/deploy_steps.h"
#include "cmd/node_port_claims.h"
#include "cmd/npu_preflight.h"
#include "cmd/rights.h"
#include "cmd/rollout_restart.h"
#include "kube/names.h"
#include "mindie/deployer_scripts.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

DeployOptions::DeployOptions(DeployFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void DeployOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void DeployOptions::validate() const {
  check_config_input_flags(flags_.filename, flags_.env_file, flags_.config_dir);
  if (!flags_.name.empty() && !kube::is_dns1123_label(flags_.name))
    throw UsageError("--name " + flags_.name + " is not a valid InferServiceSet name (a DNS-1123 label)");
  flags_.output.validate();
  check_wait_after_flags(flags_.wait, dry_run_);
  check_history_flags(flags_.history);
  if (flags_.rollout && dry_run_ != DryRun::None)
    throw UsageError("--rollout cannot be used with --dry-run: nothing changes");
  if (flags_.stop_operator && !flags_.rollout) throw UsageError("--stop-operator applies only to --rollout");
  if (flags_.adopt && dry_run_ == DryRun::Client)
    throw UsageError("--adopt takes over objects on the cluster: preview it with --dry-run=server");
}

void DeployOptions::run(kube::Client& client, Printer& printer) {
  read_inputs();  // before any request (when the caller has not): a bad file sends nothing
  NamespaceLock lock(client, printer, config_->job_id, "deploy", lock_wait_, dry_run_ == DryRun::None);
  try {
    run_once(client, printer, lock);
  } catch (const PlanAgain&) {
    // Another command held the lock since our first read: what was read may be its half-done change. Plan again
    // from fresh reads, holding the lock now.
    DeployOptions fresh(flags_, namespace_flag_);
    fresh.complete();
    fresh.read_inputs();
    fresh.run_once(client, printer, lock);
  }
  lock.done();
}

void DeployOptions::run_under(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  read_inputs();
  run_once(client, printer, lock);
}

void DeployOptions::run_once(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  lock_ = &lock;
  for (const auto& notice : config_->notices) printer.warning(notice);
  if (dry_run_ == DryRun::Client) {
    if (!scripts_notice_.empty()) printer.warning(scripts_notice_);
    return print_client_dry_run(printer);
  }
  const Prepared prepared = prepare(client, printer);
  // Before the first write: a stale file's lower counts must not silently delete running instances.
  if (!flags_.prune && prepared.removals.removes_workloads())
    throw CommandError(removal_refusal(prepared.removals, config_->job_id));
  write_objects(client, printer, lock, prepared);
  // What was stored, said once it is (issue 33: said before an error that changed nothing).
  if (!scripts_notice_.empty()) printer.warning(scripts_notice_);
  if (!env_)
    printer.warning(
        "no env.json is stored: the engine containers get none of its environment (pass -e env.json, "
        "or name it in motor_deploy_config.env_path)");
  finish(client, printer, prepared);
}

void DeployOptions::print_client_dry_run(Printer& printer) const {
  // Without the cluster we cannot know whether motor-config already holds the scripts.
  if (const auto missing = missing_scripts(); !missing.empty())
    printer.warning(missing_scripts_message(missing) + " unless the cluster's motor-config already holds them");
  for (const auto& w : deployer_scripts::script_warnings(*config_, render_options_.scripts)) printer.warning(w);
  if (!flags_.output_dir.empty()) write_output_dir();
  for (const auto& obj : objects_) printer.result(gvr_of(obj), object_name(obj), "serverside-applied", dry_run_, obj);
}

DeployOptions::Prepared DeployOptions::prepare(kube::Client& client, Printer& printer) {
  check_served(client, objects_);
  // Every right its writes need, all named at once, before the reads that need some of them (issue 33: a 403
  // half-way left what only an administrator could remove).
  rights::check_before_write(client, config_->job_id, rights::kDeploy | (flags_.prune ? rights::kDeployPrune : 0U),
                             config_->deploy_mode == config::DeployMode::InferServiceSet, "deploy");
  Prepared p;
  p.opts.dry_run = dry_run_ == DryRun::Server;
  p.opts.force = flags_.force_conflicts;
  p.opts.field_manager = render::kFieldManager;
  p.existing = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, baseline::kConfigMapName);
  p.takeover = plan_takeover(client, p.existing);
  // Client-side apply's fields are handed over below; a forced apply then owns every field deploy.py set.
  if (p.takeover) p.opts.force = true;
  if (p.existing) {
    const baseline::Baseline stored = baseline::read_baseline(*p.existing, config_->job_id);
    check_existing_baseline(stored, printer);
    keep_stored_files(stored);
  }
  if (const auto missing = missing_scripts(); !missing.empty())
    throw CommandError(missing_scripts_message(missing) + "; nothing was written");
  for (const auto& w : deployer_scripts::script_warnings(*config_, render_options_.scripts)) printer.warning(w);
  p.claims = claims_to_make(client, check_operator_rules(client, printer, p.existing.has_value()));
  if (!flags_.skip_node_check)
    check_npu_fit(client, printer,
                  {node_fit::npu_demands(objects_, npu_resources()), config_->job_id, "the engine pods",
                   "lower the instance or pod counts, free or add or label nodes, or pass --skip-node-check to deploy "
                   "anyway"});
  if (!flags_.output_dir.empty()) write_output_dir();  // after keep_stored_files: the files show what is sent
  if (p.existing)
    p.removals = planned_removals(client, *config_, render::workload_name(*config_, render_options_), objects_);
  if (p.existing && !p.opts.dry_run) {
    // A redeploy can meet field conflicts on the live InferServiceSet (someone else changed it): find them with a
    // server dry run before the baseline is rewritten, so a refusal leaves everything as it was.
    kube::WriteOptions probe = p.opts;
    probe.dry_run = true;
    apply_object(client, objects_.back(), probe);
  }
  return p;
}

DeployOptions::Preview DeployOptions::preview(kube::Client& client, Printer& printer) {
  read_inputs();
  if (dry_run_ != DryRun::Server) throw std::logic_error("DeployOptions::preview needs --dry-run=server");
  for (const auto& notice : config_->notices) printer.warning(notice);
  Prepared p = prepare(client, printer);
  return {std::move(p.existing), objects_, std::move(p.removals), config_->doc};
}

json::object DeployOptions::dry_run_apply(kube::Client& client, const json::object& obj) const {
  kube::WriteOptions opts;
  opts.dry_run = true;
  opts.force = flags_.force_conflicts;
  opts.field_manager = render::kFieldManager;
  return apply_object(client, obj, opts);
}

void DeployOptions::write_objects(kube::Client& client, Printer& printer, NamespaceLock& lock,
                                  const Prepared& prepared) {
  // The baseline as read: its resourceVersion guards the baseline write and is recorded in the intent.
  std::optional<json::object> baseline_read = prepared.existing;
  change::Intent intent = plan_intent(baseline_read);
  lock.before_write(intent);
  std::vector<std::string> handed_over;
  if (prepared.takeover) hand_over(client, printer, lock, prepared, baseline_read, intent, handed_over);
  // The nodePort claims first, on the same runner: a deploy that fails before its baseline is written releases
  // them with its undo, and one that fails later leaves them with its intent, for the recovery that completes it.
  std::vector<change::Step> steps = claim_steps(client, prepared.claims, prepared.opts);
  json::object written_baseline;
  for (const auto& obj : objects_)
    steps.push_back(object_step(client, obj, baseline_read, prepared.opts, printer, written_baseline));
  // Last, once the workload agrees with it: the baseline's revision (cmd/revisions.h).
  if (!prepared.opts.dry_run)
    steps.push_back(revision_step(client, config_->job_id, written_baseline,
                                  revision_author_.value_or(author_now(flags_.history.cause_or("deploy"))),
                                  flags_.history.history_limit, printer));
  LockFence fence(lock, intent);
  change::Runner runner(fence, wording(prepared.opts.dry_run));
  try {
    runner.run(steps);
  } catch (...) {
    // Only the hand-over of an adoption was written: deploy.py's baseline and workload still agree.
    if (!handed_over.empty() && runner.written().empty() && !prepared.opts.dry_run)
      throw PartialFailure(std::current_exception(),
                           "deploy --adopt handed over the fields of what deploy.py made, "
                           "then stopped; nothing else was changed; re-run: " +
                               rerun_command());
    throw;
  }
}

/// The lock finishes or reverts an interrupted deploy through this (cmd/lock.h, register_recovery). Here, not in
/// deploy_recovery.cpp: the linker keeps a static library's object only when something else in it is used.
const bool kRecoveryRegistered = register_recovery("deploy", &DeployOptions::recover);

namespace {

/// deploy: DeployOptions, or StormDeployOptions with --framework aibrix.
class DeployInvocation : public Invocation {
 public:
  explicit DeployInvocation(po::options_description& desc) {
    add_deploy_flags(desc, flags_);
    add_framework_flags(desc, framework_, "deploy");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      if (flags_.rollout) throw UsageError("--rollout applies to MindIE deployments, not to --framework aibrix");
      StormDeployOptions o(flags_, global.kube.namespace_);
      o.complete();
      o.validate();
      o.read_inputs();
      if (!o.needs_server()) {
        OfflineTransport offline;
        kube::Client client(offline);
        // No watch either: --wait is refused with --dry-run.
        o.run(client, printer, [] { return std::make_unique<OfflineTransport>(); });
        return;
      }
      Session session(global, std::cerr, kLockRequestBound);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
      return;
    }
    DeployOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    o.read_inputs();
    if (!o.needs_server()) {
      OfflineTransport offline;
      kube::Client client(offline);
      o.run(client, printer);
      return;
    }
    Session session(global, std::cerr, kLockRequestBound);
    o.run(session.client(), printer);
    if (flags_.rollout)
      RolloutRestart(
          session.client(), printer, [&session] { return session.new_transport(); }, o.target_namespace(),
          rollout::RestartRequest::defaults(flags_.stop_operator), check_wait_after_flags(flags_.wait, DryRun::None),
          check_lock_flags(flags_.lock))
          .after("deploy")
          .run();
    wait_after(session, flags_.wait, o.target_namespace(), printer);
  }

 private:
  DeployFlags flags_;
  FrameworkFlags framework_;  ///< --framework aibrix: the AIBrix StormService path (cmd/aibrix.h)
};

}  // namespace

Command deploy_command() {
  return {"deploy",
          "Validate user_config.json and deploy it (motor-config baseline, RBAC, the workload)",
          "kubectl mindie deploy (-f user_config.json [-e env.json] | --config-dir DIR) [flags]",
          "Validate the config completely, then write the motor-config ConfigMap (the baseline), the controller's\n"
          "RBAC and the workload by server-side apply: an InferServiceSet (deploy_mode infer_service_set, the\n"
          "default), Deployments and Services (multi_deployment) or one Deployment and Service (single_container).\n"
          "The namespace is motor_deploy_config.job_id. Before the first write it checks what infer-operator would\n"
          "refuse: a nodePort another Service holds, gang-scheduled roles without Volcano's PodGroup CRD, and on a\n"
          "redeploy a change of what live InstanceSets fixed at creation; and that the engine pods fit the NPUs\n"
          "free on the nodes their nodeSelector matches: allocatable less what the pods of other namespaces hold\n"
          "(--skip-node-check skips that). A namespace another tool deployed (motor-config without kubectl-mindie's\n"
          "records, e.g. PyMotor's deploy.py) is refused unless --adopt, which takes its objects over and deletes\n"
          "those ours replace. A redeploy that would remove running instances (counts below the live ones,\n"
          "Deployments the config no longer has) is refused before any write, naming them, unless --prune confirms\n"
          "it; kubectl mindie diff shows what a deploy changes. --rollout then replaces the instances on an earlier\n"
          "pod template, as kubectl mindie rollout restart does (with --stop-operator for gang-scheduled roles).",
          "  # Deploy from a folder holding user_config.json and env.json, with PyMotor's deployer folder\n"
          "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer\n\n"
          "  # Print the objects without contacting the cluster\n"
          "  kubectl mindie deploy -f user_config.json --dry-run=client -o yaml\n\n"
          "  # Preview taking over a namespace PyMotor's deploy.py deployed\n"
          "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer --adopt --dry-run=server\n\n"
          "  # Take it over: labels, field ownership, motor-config's records\n"
          "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer --adopt\n\n"
          "  # Deploy an AIBrix StormService and its Services (stormservice.yaml)\n"
          "  kubectl mindie deploy --framework aibrix -f stormservice.yaml\n",
          DeployFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<DeployInvocation>(desc);
          },
          changing_exit_codes("a conflict over fields another manager owns, the operator's CRD or a node check "
                              "failing, --wait timing out (naming every pod not ready)")};
}

}  // namespace mindie::cmd
