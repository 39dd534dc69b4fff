#include "cmd/rollback.h"

#include <stdlib.h>

#include <filesystem>
#include <iostream>

#include "cmd/adopt.h"
#include "cmd/deploy.h"
#include "cmd/rollout_restart.h"
#include "cmd/scale.h"
#include "cmd/update_config.h"
#include "mindie/baseline_policy.h"
#include "util/json_text.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/// A private folder (mode 0700, mkdtemp) for a revision's files, removed with its contents on destruction: the
/// commands rollback runs read their inputs from files, as they do when run alone.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (fs::temp_directory_path() / "kubectl-mindie-rollback-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw CommandError("cannot create a folder under " + templ + " for rollback");
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  /// Writes `text` as `name` in the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = (path_ / name).string();
    write_file_no_follow(p, text);
    return p;
  }

 private:
  fs::path path_;
};

/// The scale flags that take `from`'s counts to `to`'s (only those that differ).
ScaleFlags count_flags(const config::UserConfig& from, const config::UserConfig& to) {
  ScaleFlags f;
  if (to.p_instances != from.p_instances) f.prefill = to.p_instances;
  if (to.d_instances != from.d_instances) f.decode = to.d_instances;
  if (to.hybrid_instances != from.hybrid_instances) f.hybrid = to.hybrid_instances;
  if (to.e_instances != from.e_instances) f.encode = to.e_instances;
  return f;
}

/// `raw`, a revision's user_config.json whose counts are `goal`'s, with `now`'s counts where they differ, every other
/// byte kept. Throws CommandError when a count to put back is not a number there.
std::string with_counts_of(std::string raw, const config::UserConfig& goal, const config::UserConfig& now) {
  try {
    if (goal.p_instances != now.p_instances)
      raw = util::replace_json_number(raw, policy::kPrefillInstancesPath, now.p_instances);
    if (goal.d_instances != now.d_instances)
      raw = util::replace_json_number(raw, policy::kDecodeInstancesPath, now.d_instances);
    if (goal.hybrid_instances != now.hybrid_instances)
      raw = util::replace_json_number(raw, policy::kHybridInstancesPath, now.hybrid_instances);
    if (goal.e_instances != now.e_instances)
      raw = util::replace_json_number(raw, policy::kEncodeInstancesPath, now.e_instances);
  } catch (const std::invalid_argument& e) {
    throw CommandError(std::string("--dry-run=server cannot preview what follows the scale: ") + e.what() +
                       "; nothing was changed");
  }
  return raw;
}

}  // namespace

RollbackOptions::RollbackOptions(RollbackFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void RollbackOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
  timeout_ = parse_duration(flags_.timeout, "--timeout");
}

void RollbackOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  if (flags_.to_revision && *flags_.to_revision < 1)
    throw UsageError("--to-revision " + std::to_string(*flags_.to_revision) + " is out of range: revisions start at 1");
  if (dry_run_ == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by rollback (it needs the live objects): use --dry-run=server");
  if (flags_.rollout && dry_run_ != DryRun::None)
    throw UsageError("--rollout cannot be used with --dry-run: nothing changes");
  if (flags_.stop_operator && !flags_.rollout) throw UsageError("--stop-operator applies only to --rollout");
  check_history_flags(flags_.history);
}

void RollbackOptions::run(kube::Client& client, Printer& printer,
                          const kube::Informer::TransportFactory& new_transport) {
  // One lock for the whole rollback, taken by its first write and freed after its last: no other command runs between
  // its commands. Each records its own intent in it, so a rollback stopped half-way is recovered by the next command
  // as that command's change would be (and what followed it is left undone, the baseline consistent).
  NamespaceLock lock(client, printer, namespace_, "rollback", lock_wait_, dry_run_ == DryRun::None);
  lock.recover_first();
  try {
    run_once(client, printer, lock);
  } catch (const PlanAgain&) {
    run_once(client, printer, lock);  // another command held the lock since our first read: plan again, holding it
  }
  lock.done();
  // As kubectl rollout undo, the pods too: the template the rollback restored reaches running instances.
  if (flags_.rollout)
    RolloutRestart(client, printer, new_transport, namespace_, rollout::RestartRequest::defaults(flags_.stop_operator),
                   timeout_, lock_wait_)
        .after("rollback")
        .run();
}

void RollbackOptions::run_once(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  const auto revisions = existing_revisions(client, namespace_);
  const auto cm = client.get(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName);
  require_ours(cm, namespace_, "rollback", "nothing was changed");
  if (!flags_.to_revision && revisions.size() < 2)
    throw CommandError("namespace " + namespace_ + " has one revision of the baseline: nothing to roll back to");
  const revision::Revision& target = flags_.to_revision ? find_revision(revisions, *flags_.to_revision, namespace_)
                                                        : revisions[revisions.size() - 2];
  const std::string n = std::to_string(target.number);
  const baseline::Baseline stored = baseline::read_baseline(cm, namespace_);
  const auto current = revision::content_of(stored);
  if (!current) throw CommandError(stored.problem);
  const revision::RollbackPlan plan = revision::plan_rollback(*current, target.content);
  if (!plan.refusal.empty())
    throw CommandError("rollback to revision " + n + " would change " + plan.refusal +
                       ", which only kubectl mindie delete and deploy can; nothing was changed");
  for (const auto& k : plan.kept) printer.warning("rollback to revision " + n + " keeps " + k + " as it is");
  if (!plan.counts && !plan.settings && !plan.redeploy) {
    printer.summary("configmap/motor-config skipped rollback (the baseline already matches revision " + n + ")");
    return;
  }
  const config::UserConfig goal = config::parse_user_config(target.content.user_config,
                                                            target.name + " " + baseline::kBaselineKey);
  const HistoryFlags history{flags_.history.history_limit, "rollback to " + n};
  if (plan.counts) {
    ScaleFlags sf = count_flags(stored.user(), goal);
    sf.dry_run = flags_.dry_run;
    sf.history = history;
    ScaleOptions o(sf, namespace_);
    o.complete(namespace_);
    o.validate();
    o.run_under(client, printer, lock);
  }
  if (!plan.settings && !plan.redeploy) return;
  // A server dry run changes nothing, so the command after the scale reads the counts as they are: it is shown the
  // revision's files with those counts, the scale's to change, as it would be after the scale.
  std::string user_config = target.content.user_config;
  if (plan.counts && dry_run_ == DryRun::Server) user_config = with_counts_of(user_config, goal, stored.user());
  run_files(client, printer, lock, plan, target, user_config, history);
}

void RollbackOptions::run_files(kube::Client& client, Printer& printer, NamespaceLock& lock,
                                const revision::RollbackPlan& plan, const revision::Revision& target,
                                const std::string& user_config, const HistoryFlags& history) {
  ScratchDir dir;
  const std::string file = dir.write(baseline::kBaselineKey, user_config);
  const std::string env = target.content.env ? dir.write(baseline::kEnvKey, *target.content.env) : "";
  if (plan.settings) {
    UpdateConfigFlags uf;
    uf.filename = file;
    uf.env_file = env;
    uf.dry_run = flags_.dry_run;
    uf.history = history;
    UpdateConfigOptions o(uf, namespace_);
    o.complete();
    o.validate();
    o.run_under(client, printer, lock);
    return;
  }
  DeployFlags df;
  df.filename = file;
  df.env_file = env;
  if (target.content.overrides) df.overrides = dir.write(baseline::kOverridesKey, *target.content.overrides);
  df.dry_run = flags_.dry_run;
  df.history = history;
  DeployOptions o(df, namespace_);
  o.complete();
  o.validate();
  o.run_under(client, printer, lock);  // which says what runs an earlier pod template now, and how to roll it
}

namespace {

class RollbackInvocation : public Invocation {
 public:
  explicit RollbackInvocation(po::options_description& desc) {
    desc.add_options()(
        "to-revision", po::value<std::int64_t>()->notifier([this](std::int64_t v) { flags_.to_revision = v; }),
        "The revision to go back to (kubectl mindie history lists them; default: the one before the latest)")(
        "dry-run", po::value(&flags_.dry_run)->default_value("none")->implicit_value("client"),
        "none or server (send with dryRun=All; previews every command of the rollback, nothing written)")(
        "rollout", po::bool_switch(&flags_.rollout),
        "Then replace the instances on an earlier pod template one at a time, as kubectl mindie rollout restart "
        "does (with its defaults), so that the pods run the revision's template too")(
        "timeout", po::value(&flags_.timeout)->default_value("0s"),
        "How long the --rollout may take (a duration: 30s, 10m, 1h); 0 means never give up")(
        "stop-operator", po::bool_switch(&flags_.stop_operator),
        "With --rollout: gang-scheduled roles may be rolled by stopping infer-operator (in every namespace) while "
        "each old instance's pods go, as kubectl mindie rollout restart --stop-operator does");
    add_lock_flags(desc, flags_.lock);
    add_history_flags(desc, flags_.history);
  }
  void run(const GlobalFlags& global, Printer& printer) override {
    Session session(global, std::cerr, kLockRequestBound);
    RollbackOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer, [&session] { return session.new_transport(); });
  }

 private:
  RollbackFlags flags_;
};

}  // namespace

Command rollback_command() {
  return {"rollback",
          "Go back to a revision of the baseline through scale, update-config or deploy",
          "kubectl mindie rollback [-n NS] [--to-revision N] [--dry-run=server | --rollout [--stop-operator] "
          "[--timeout D]] [flags]",
          "Go back to revision N of the motor-config baseline (default: the one before the latest; kubectl mindie\n"
          "history lists them) through the commands' own guarded paths: instance counts as scale changes them,\n"
          "then, when only update-config's whitelisted settings and env.json differ, as update-config does; anything\n"
          "else as a deploy of the revision's user_config.json, env.json and overrides (the stored scripts are kept:\n"
          "a revision records only their digest), which says how many instances are then on an earlier pod\n"
          "template and how to roll them. A change of deploy_mode is refused: only delete and deploy can make it.\n"
          "All run under one namespace lock, each step recording a revision \"rollback to N\". --rollout then rolls\n"
          "those instances as kubectl mindie rollout restart does (as kubectl rollout undo, the pods go back too).",
          "  # Back to the revision before the latest\n"
          "  kubectl mindie rollback -n mindie-demo\n\n"
          "  # Preview going back to revision 1\n"
          "  kubectl mindie rollback -n mindie-demo --to-revision 1 --dry-run=server\n\n"
          "  # Back to revision 3, the running pods included\n"
          "  kubectl mindie rollback -n mindie-demo --to-revision 3 --rollout\n",
          {},
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<RollbackInvocation>(desc);
          },
          changing_exit_codes("no deployment or no such revision in the namespace, a deploy_mode change (delete and "
                              "deploy), and what scale, update-config or deploy refuse")};
}

}  // namespace mindie::cmd
