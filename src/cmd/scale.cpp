#include "cmd/scale.h"

#include <iostream>

#include "cmd/aibrix.h"
#include "cmd/command.h"
#include "cmd/list_inputs.h"
#include "cmd/npu_preflight.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_scale_flags(po::options_description& desc, ScaleFlags& flags) {
  desc.add_options()("prefill", po::value<int>()->notifier([&flags](int v) { flags.prefill = v; }),
                     "Prefill instances (1..16)")(
      "decode", po::value<int>()->notifier([&flags](int v) { flags.decode = v; }),
      "Decode instances (1..16)")("hybrid", po::value<int>()->notifier([&flags](int v) { flags.hybrid = v; }),
                                  "PD-hybrid (union role) instances (1..16)")(
      "encode", po::value<int>()->notifier([&flags](int v) { flags.encode = v; }),
      "Encode instances (0..16; multi_deployment with motor_deploy_config.e_instances_num)")(
      "filename,f", po::value(&flags.filename), "user_config.json differing from the baseline only in counts")(
      "dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
      "none or server (send with dryRun=All); client, the bare flag's value, is refused: it needs the live "
      "object")(
      "operator-restarted", po::bool_switch(&flags.operator_restarted),
      "infer-operator was restarted after the pods of the gang role's removed instances were gone: scale such a "
      "role out onto them (refused otherwise: the operator would rebuild them in a loop)")(
      "skip-node-check", po::bool_switch(&flags.skip_node_check),
      "Do not check that the added instances' pods fit the free NPUs of the nodes their nodeSelector matches");
  flags.output.bind(desc);
  add_wait_after_flags(desc, flags.wait);
  add_lock_flags(desc, flags.lock);
  add_history_flags(desc, flags.history);
}

ScaleOptions::ScaleOptions(ScaleFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void ScaleOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  const bool counts = flags_.prefill || flags_.decode || flags_.hybrid || flags_.encode;
  if (!counts && flags_.filename.empty())
    throw UsageError(
        "must specify --prefill and/or --decode (or --hybrid for PD-hybrid, --encode for encode "
        "instances), or -f FILE");
  if (counts && !flags_.filename.empty())
    throw UsageError("--prefill/--decode/--hybrid/--encode and -f cannot be used together");
  if (flags_.encode && (*flags_.encode < 0 || *flags_.encode > 16))
    throw UsageError("--encode " + std::to_string(*flags_.encode) + " is out of range: encode instances are 0..16");
  if (flags_.hybrid && (flags_.prefill || flags_.decode))
    throw UsageError(
        "--hybrid cannot be combined with --prefill/--decode: a PD-hybrid deployment runs one union "
        "role instead of prefill and decode");
  for (auto [flag, v] : {std::pair{"--prefill", flags_.prefill}, std::pair{"--decode", flags_.decode},
                         std::pair{"--hybrid", flags_.hybrid}}) {
    if (v && (*v < 1 || *v > 16))
      throw UsageError(std::string(flag) + " " + std::to_string(*v) + " is out of range: instances are 1..16");
  }
  flags_.output.validate();
  if (dry_run_ == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by scale (it needs the live object): use --dry-run=server");
  check_wait_after_flags(flags_.wait, dry_run_);
  check_history_flags(flags_.history);
}

void ScaleOptions::complete(const std::string& context_namespace) {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void ScaleOptions::read_proposed() {
  if (flags_.filename.empty() || proposed_) return;
  proposed_ = config::parse_user_config(read_file(flags_.filename), flags_.filename);
  check_namespace_flag(namespace_flag_, proposed_->job_id);
  namespace_ = proposed_->job_id;
}

InstanceCounts counts_of(const config::UserConfig& c) {
  return {c.p_instances, c.d_instances, c.hybrid_instances, c.e_instances};
}

void ScaleOptions::run(kube::Client& client, Printer& printer) {
  read_proposed();  // before any request: a bad -f sends nothing
  NamespaceLock lock(client, printer, namespace_, "scale", lock_wait_, dry_run_ == DryRun::None);
  lock.recover_first();
  try {
    run_under(client, printer, lock);
  } catch (const PlanAgain&) {
    // Another command held the lock since our first read (its change may have been half-done): read and plan
    // again, holding the lock now.
    run_under(client, printer, lock);
  }
  lock.done();
}

void ScaleOptions::run_under(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  read_proposed();
  lock_ = &lock;
  struct Reset {
    NamespaceLock*& p;
    ~Reset() { p = nullptr; }
  } reset{lock_};  // lock_ never outlives the lock, whatever run_once throws
  run_once(client, printer);
}

void ScaleOptions::run_once(kube::Client& client, Printer& printer) {
  const json::object cm = motor_config_or_fail(client, namespace_);
  require_ours(cm, namespace_, "scale", "nothing was changed");
  const baseline::Baseline stored = baseline::read_baseline(cm, namespace_);
  check_scalable(stored);
  const InstanceCounts target = target_counts(stored.user());
  new_baseline_text(stored.user(), target);  // only the counts may differ (checked again on every baseline write)
  if (stored.deploy_mode() == config::to_string(config::DeployMode::MultiDeployment))
    run_multi(client, printer, cm, stored, target);
  else run_service_set(client, printer, cm, stored, target);
}

void ScaleOptions::check_scalable(const baseline::Baseline& stored) const {
  const config::UserConfig& base = stored.user();
  const std::string mode = stored.deploy_mode();
  const bool multi = mode == config::to_string(config::DeployMode::MultiDeployment);
  if (mode == config::to_string(config::DeployMode::SingleContainer)) {
    throw CommandError("the deployment in namespace " + namespace_ +
                       " uses deploy_mode single_container: every "
                       "component runs in one pod, which cannot be scaled; to run more instances, delete it "
                       "(kubectl mindie delete -n " +
                       namespace_ +
                       ") and deploy with deploy_mode "
                       "infer_service_set or multi_deployment; nothing was changed");
  }
  if (mode != config::to_string(config::DeployMode::InferServiceSet) && !multi) {
    throw CommandError("the deployment in namespace " + namespace_ + " uses deploy_mode " + mode +
                       ", which this version of kubectl-mindie cannot scale");
  }
  // PD-hybrid runs one union role; which flags apply follows the baseline, never a guess.
  const std::string where = "the deployment in namespace " + namespace_;
  if (proposed_ && proposed_->hybrid() != base.hybrid())
    throw CommandError("scale cannot switch " + where +
                       " between PD-hybrid (hybrid_instances_num) and prefill/decode "
                       "instances: redeploy with kubectl mindie deploy -f " +
                       flags_.filename + " (it replaces the workload); nothing was changed");
  if (base.hybrid() && (flags_.prefill || flags_.decode))
    throw CommandError(where + " runs PD-hybrid (motor_deploy_config.hybrid_instances_num " +
                       std::to_string(base.hybrid_instances) + "): scale its union role with --hybrid N");
  if (!base.hybrid() && flags_.hybrid)
    throw CommandError(where + " runs prefill and decode instances, no PD-hybrid union role: use --prefill/--decode");
  // Encode instances exist in multi_deployment with e_instances_num (PyMotor 7d15c04 U5); scale changes the count,
  // never the topology.
  if (flags_.encode && !base.encode)
    throw CommandError(where +
                       " has no encode instances (they run in deploy_mode multi_deployment with "
                       "motor_deploy_config.e_instances_num): add e_instances_num and e_pod_npu_num to the config "
                       "and redeploy; nothing was changed");
  if (proposed_ && proposed_->encode != base.encode)
    throw CommandError("scale cannot add or remove " + where +
                       "'s encode instances (motor_deploy_config."
                       "e_instances_num present in one file only): redeploy with kubectl mindie deploy -f " +
                       flags_.filename + "; nothing was changed");
}

void ScaleOptions::check_added_npus(kube::Client& client, Printer& printer, const std::vector<json::object>& before,
                                    const std::vector<json::object>& after) const {
  if (flags_.skip_node_check) return;
  const std::vector<std::string> resources = npu_resources();
  check_npu_fit(client, printer,
                {node_fit::added_demands(node_fit::npu_demands(before, resources),
                                         node_fit::npu_demands(after, resources)),
                 "", "the added instances' pods",
                 "scale to fewer instances, free or add nodes, or pass --skip-node-check to scale anyway (the pods "
                 "that find no room stay Pending)"});
}

InstanceCounts ScaleOptions::target_counts(const config::UserConfig& base) const {
  return proposed_
             ? counts_of(*proposed_)
             : InstanceCounts{flags_.prefill.value_or(base.p_instances), flags_.decode.value_or(base.d_instances),
                              flags_.hybrid.value_or(base.hybrid_instances), flags_.encode.value_or(base.e_instances)};
}

/// The lock finishes or reverts an interrupted scale through this (cmd/lock.h, register_recovery).
const bool kRecoveryRegistered = register_recovery("scale", recording_revision(&ScaleOptions::recover));

namespace {

/// scale: ScaleOptions, or StormScaleOptions with --framework aibrix.
class ScaleInvocation : public Invocation {
 public:
  explicit ScaleInvocation(po::options_description& desc) {
    add_scale_flags(desc, flags_);
    add_framework_flags(desc, framework_, "scale");
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    if (use_aibrix(framework_)) {
      Session session(global, std::cerr, kLockRequestBound);
      StormScaleOptions o(framework_, flags_, global.kube.namespace_);
      o.complete(session.rest_config().namespace_);
      o.validate();
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
      return;
    }
    // The kubeconfig first: complete() takes its namespace (so a broken kubeconfig is reported before a bad flag,
    // as kubectl scale does). Loading it sends nothing.
    Session session(global, std::cerr, kLockRequestBound);
    ScaleOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer);
    wait_after(session, flags_.wait, o.target_namespace(), printer);
  }

 private:
  ScaleFlags flags_;
  FrameworkFlags framework_;
};

}  // namespace

Command scale_command() {
  return {
      "scale",
      "Change prefill/decode (or PD-hybrid) instance counts of a running deployment",
      "kubectl mindie scale [-n NS] (--prefill N | --decode M | --hybrid H | -f user_config.json) [flags]",
      "Change instance counts only: JSON-patch spec.template.roles[i].replicas of the live InferServiceSet\n"
      "(guarded by test ops), then the baseline. If the baseline cannot be updated, the patch is undone.\n"
      "multi_deployment: creates or deletes engine Deployments (highest indices first). PD-hybrid deployments\n"
      "(hybrid_instances_num) scale their union role with --hybrid. single_container cannot be scaled.\n"
      "Scaling in a gang-scheduled role deletes the Volcano PodGroups of the removed instances. Before the first\n"
      "write the added instances' pods must fit the NPUs free on the nodes their nodeSelector matches\n"
      "(allocatable less what the pods there hold; --skip-node-check skips that).",
      "  # Three prefill instances, two decode instances\n"
      "  kubectl mindie scale -n mindie-demo --prefill 3 --decode 2\n\n"
      "  # Four instances of a PD-hybrid deployment's union role\n"
      "  kubectl mindie scale -n mindie-demo --hybrid 4\n\n"
      "  # Take the counts from an edited config (nothing else may differ)\n"
      "  kubectl mindie scale -f user_config.json\n\n"
      "  # Two decode replicas of the AIBrix StormService qwen3-pd (--app: the only one of the namespace when left\n"
      "  # out), though AIBrix recreates the running pods of the roles whose template changes\n"
      "  kubectl mindie scale --framework aibrix -n vllm-test --app qwen3-pd --role decode --replicas 2 "
      "--allow-restart\n",
      ScaleFlags().output.formats(),
      true,
      [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
        return std::make_unique<ScaleInvocation>(desc);
      },
      changing_exit_codes("no deployment in the namespace, a change scale cannot make (a role it lacks, counts the "
                          "operator refuses), the baseline changed by others on every attempt, --wait timing out "
                          "(naming every pod not ready), an AIBrix scale that would recreate running pods without "
                          "--allow-restart")};
}

}  // namespace mindie::cmd
