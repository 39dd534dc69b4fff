#include "cmd/update_config.h"

#include <filesystem>
#include <iostream>

#include "cmd/adopt.h"
#include "cmd/command.h"
#include "kube/retry_on_conflict.h"
#include "mindie/baseline_policy.h"
#include "mindie/deployer_scripts.h"
#include "mindie/env_script.h"
#include "mindie/render.h"
#include "validation/problem.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_update_config_flags(po::options_description& desc, UpdateConfigFlags& flags) {
  desc.add_options()("filename,f", po::value(&flags.filename), "The new user_config.json")(
      "env-file,e", po::value(&flags.env_file), "The new env.json")("config-dir", po::value(&flags.config_dir),
                                                                    "Folder holding user_config.json and env.json")(
      "scripts-dir", po::value(&flags.scripts_dir),
      "Folder of startup/probe files: replaces the stored scripts (those no longer in it are removed)")(
      "dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
      "none or server (send with dryRun=All); client, the bare flag's value, is refused: it needs the live "
      "object");
  flags.output.bind(desc);
  add_lock_flags(desc, flags.lock);
  add_history_flags(desc, flags.history);
}

UpdateConfigOptions::UpdateConfigOptions(UpdateConfigFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void UpdateConfigOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  lock_wait_ = check_lock_flags(flags_.lock);
}

void UpdateConfigOptions::validate() const {
  check_config_input_flags(flags_.filename, flags_.env_file, flags_.config_dir);
  flags_.output.validate();
  if (dry_run_ == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by update-config: use --dry-run=server");
  check_history_flags(flags_.history);
}

void UpdateConfigOptions::read_inputs() {
  if (inputs_read_) return;
  auto inputs = read_config_inputs(flags_.filename, flags_.env_file, flags_.config_dir);
  proposed_ = std::move(inputs.user);
  env_ = std::move(inputs.env);
  check_namespace_flag(namespace_flag_, proposed_->job_id);
  if (!flags_.scripts_dir.empty()) {
    const ScriptsDir dir = read_scripts(flags_.scripts_dir);
    check_needed_scripts(dir, deployer_scripts::needed(*proposed_));
    scripts_ = dir.scripts;
    scripts_notice_ = dir.left_out_notice();
    // Key names, UTF-8 text and collisions with the config keys, before any request (the ConfigMap is rendered
    // again against the stored env.json and overrides once read).
    render::RenderOptions opts;
    opts.scripts = *scripts_;
    (void)render::render_config_map(*proposed_, env_ ? &*env_ : nullptr, opts);
  }
  inputs_read_ = true;
}

json::object UpdateConfigOptions::changed_keys(const json::object& cm) const {
  const std::string ns = proposed_->job_id;
  const baseline::Baseline stored = baseline::read_baseline(cm, ns);
  const config::UserConfig& base = stored.user();
  const std::vector<std::string> refused = policy::update_config_refusals(base, *proposed_, stored.deploy_mode());
  if (refused.size() == 1) throw CommandError(refused.front());
  if (!refused.empty()) {
    const std::string file = flags_.filename.empty()
                                 ? (std::filesystem::path(flags_.config_dir) / "user_config.json").string()
                                 : flags_.filename;
    std::string msg = "update-config cannot apply " + file + " (" + std::to_string(refused.size()) +
                      " problems); nothing was changed:";
    for (const auto& r : refused) msg += "\n- " + r;
    throw CommandError(msg);
  }
  json::object data;
  if (proposed_->raw != base.raw) data[baseline::kBaselineKey] = proposed_->raw;
  if (env_ && stored.env_raw != env_->raw) data[baseline::kEnvKey] = env_->raw;
  if (scripts_) {
    script_keys_from_dir(stored, data);
    return data;
  }
  // The set_*_env functions in the stored script copies follow env.json and the derived values (north_config.name
  // may change here); every other key stays as it is in the cluster.
  const std::map<std::string, std::string>& scripts = stored.scripts;
  std::optional<config::EnvConfig> stored_env;
  if (!env_) {
    try {
      stored_env = stored.env();
    } catch (const validation::ValidationError&) {  // a hand-edited env.json: leave the functions as they are
      return data;
    }
  }
  std::string service_id = stored.service_id;
  if (service_id.empty()) service_id = ns;
  auto generated = scripts;
  generated.erase(env_script::kEnvFunctionsKey);
  const config::EnvConfig* env = env_ ? &*env_ : stored_env ? &*stored_env : nullptr;
  env_script::inject(generated, env, env_script::derived_common_env(*proposed_, service_id));
  for (const auto& [key, text] : generated) {
    auto it = scripts.find(key);
    if (it == scripts.end() || it->second != text) data[key] = text;
  }
  return data;
}

void UpdateConfigOptions::script_keys_from_dir(const baseline::Baseline& stored, json::object& data) const {
  // The ConfigMap deploy would store for these files: the same renderer, so the same keys, the same injected
  // set_*_env functions (from the new env.json, else the stored one) and the same checks (1 MiB in all).
  std::optional<config::EnvConfig> stored_env;
  if (!env_) {
    try {
      stored_env = stored.env();
    } catch (const validation::ValidationError& e) {
      throw CommandError(std::string(e.what()) + "\npass -e env.json to replace it; nothing was written");
    }
  }
  render::RenderOptions opts;
  opts.scripts = *scripts_;
  opts.service_id = stored.service_id.empty() ? proposed_->job_id : stored.service_id;
  if (stored.overrides_raw) {
    opts.overrides.emplace();  // counted in the size check only: update-config leaves overrides.yaml alone
    opts.overrides->raw = *stored.overrides_raw;
  }
  const config::EnvConfig* env = env_ ? &*env_ : stored_env ? &*stored_env : nullptr;
  const json::object rendered = render::render_config_map(*proposed_, env, opts);
  const json::object& wanted = rendered.at("data").as_object();
  for (const auto& [key, value] : wanted) {
    if (key == baseline::kBaselineKey || key == baseline::kEnvKey || key == baseline::kOverridesKey) continue;
    const auto old = stored.scripts.find(key);
    if (old == stored.scripts.end() || !value.is_string() || std::string_view(value.as_string()) != old->second)
      data[key] = value;
  }
  for (const auto& [key, text] : stored.scripts)
    if (!wanted.contains(key)) data[key] = nullptr;  // JSON merge patch: null removes the key
}

void UpdateConfigOptions::run(kube::Client& client, Printer& printer) {
  read_inputs();  // before any request (when the caller has not): a bad file sends nothing
  NamespaceLock lock(client, printer, proposed_->job_id, "update-config", lock_wait_, dry_run_ == DryRun::None);
  lock.recover_first();
  try {
    run_once(client, printer, lock);
  } catch (const PlanAgain&) {
    run_once(client, printer, lock);  // another command held the lock since our read: read again, holding it
  }
  lock.done();
}

void UpdateConfigOptions::run_under(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  read_inputs();
  run_once(client, printer, lock);
}

void UpdateConfigOptions::run_once(kube::Client& client, Printer& printer, NamespaceLock& lock) {
  const std::string ns = proposed_->job_id;
  const std::string cm_name = baseline::kConfigMapName;
  auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, cm_name);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + ns + " (configmap/" + cm_name +
                       " not found): run kubectl mindie deploy first");
  }
  require_ours(*cm, ns, "update-config", "nothing was changed");
  if (changed_keys(*cm).empty()) {
    printer.result(kube::gvr::kConfigMaps, cm_name, "unchanged", dry_run_, std::move(*cm));
    return;
  }
  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  change::Step step;
  step.name = "configmap/" + cm_name;
  step.verb = "configured";
  json::object after;
  step.write = [&] { after = write_config(client, *cm, opts, lock); };
  // A write whose reply was lost: applied when the stored keys now hold what this one writes.
  step.applied = [&] {
    after = client.get(kube::gvr::kConfigMaps, ns, cm_name);
    return changed_keys(after).empty();
  };
  // The merge patch is one compare-and-swap; the intent stands for the revision that follows it, which the next
  // command records should this one stop in between (recording_revision).
  std::vector<change::Step> steps{step};
  if (!opts.dry_run)
    steps.push_back(revision_step(client, ns, after, author_now(flags_.history.cause_or("update-config")),
                                  flags_.history.history_limit, printer));
  LockFence fence(lock, change::Intent{change::UpdateConfigIntent{}});
  change::Wording wording;
  wording.change = "update-config";
  wording.dry_run = opts.dry_run;
  wording.recovery = "configmap/" + cm_name + " holds the new settings; the next kubectl-mindie command in namespace " +
                     ns + " records its revision (kubectl mindie update-config with the same file again does it now)";
  change::Runner(fence, wording).run(steps);
  // What was stored, said once it is (issue 33: said before an error that changed nothing).
  if (!scripts_notice_.empty()) printer.warning(scripts_notice_);
  printer.result(kube::gvr::kConfigMaps, cm_name, "configured", dry_run_, std::move(after));
}

json::object UpdateConfigOptions::write_config(kube::Client& client, json::object cm, const kube::WriteOptions& opts,
                                               NamespaceLock& lock) const {
  const std::string ns = proposed_->job_id;
  return kube::retry_on_conflict(kBaselineWriteAttempts, [&](int attempt) {
    if (attempt > 1) {  // changed since it was read
      lock.confirm();   // by a rival that took the lock over: write nothing more
      cm = client.get(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
    }
    json::object data = changed_keys(cm);
    // Nothing left to change after a conflict: an earlier try of this write was stored, its reply lost.
    if (data.empty()) return cm;
    // Merge patch: only the keys we own change; the resourceVersion makes it a compare-and-swap, and a
    // conflict is re-read and re-checked rather than overwritten.
    const json::object patch{
        {"metadata",
         {{"resourceVersion", kube::resource_version_of(cm, "configmap/" + std::string(baseline::kConfigMapName))}}},
        {"data", std::move(data)}};
    return client.patch(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName, kube::PatchType::Merge, patch, opts);
  });
}

namespace {

class UpdateConfigInvocation : public Invocation {
 public:
  explicit UpdateConfigInvocation(po::options_description& desc) { add_update_config_flags(desc, flags_); }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    UpdateConfigOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    o.read_inputs();
    Session session(global, std::cerr, kLockRequestBound);
    o.run(session.client(), printer);
  }

 private:
  UpdateConfigFlags flags_;
};

}  // namespace

Command update_config_command() {
  return {"update-config",
          "Refresh settings in the motor-config baseline (log levels, timeouts, north config)",
          "kubectl mindie update-config (-f user_config.json [-e env.json] | --config-dir DIR) [--scripts-dir DIR] "
          "[flags]",
          "Refresh the motor-config ConfigMap. Only the deployer's whitelisted paths may change (log levels,\n"
          "observability, coordinator exception/timeout settings, north_config, north TLS files); instance counts\n"
          "and deploy_mode must equal the baseline. user_config.json and env.json are replaced; every other key is\n"
          "kept as it is in the cluster unless --scripts-dir is given: then the stored startup/probe scripts become\n"
          "the folder's files (with env.json's set_*_env functions, as deploy stores them) and scripts no longer in\n"
          "it are removed.",
          "  # Raise the coordinator's log level\n"
          "  kubectl mindie update-config -f user_config.json\n\n"
          "  # Also replace the stored scripts with PyMotor's examples/deployer folder\n"
          "  kubectl mindie update-config --config-dir ./conf --scripts-dir ./deployer\n",
          UpdateConfigFlags().output.formats(),
          true,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<UpdateConfigInvocation>(desc);
          },
          changing_exit_codes("no deployment in the namespace, a change of the instance counts or the deploy mode "
                              "(scale's or deploy's to make), the baseline changed by others on every attempt")};
}

}  // namespace mindie::cmd
