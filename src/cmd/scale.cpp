#include "cmd/scale.h"

#include "mindie/baseline_policy.h"
#include "mindie/render.h"
#include "mindie/scale_plan.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_scale_flags(po::options_description& desc, ScaleFlags& flags) {
  desc.add_options()
      ("prefill", po::value(&flags.prefill), "Prefill instances (1..16)")
      ("decode", po::value(&flags.decode), "Decode instances (1..16)")
      ("filename,f", po::value(&flags.filename), "user_config.json differing from the baseline only in counts")
      ("dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("server"),
       "none or server (send with dryRun=All)")
      ("output,o", po::value(&flags.output), "Print the scaled InferServiceSet: json, yaml or name");
}

ScaleOptions::ScaleOptions(ScaleFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void ScaleOptions::validate() const {
  const bool counts = flags_.prefill != -1 || flags_.decode != -1;
  if (!counts && flags_.filename.empty()) throw UsageError("must specify --prefill and/or --decode, or -f FILE");
  if (counts && !flags_.filename.empty()) throw UsageError("--prefill/--decode and -f cannot be used together");
  for (auto [flag, v] : {std::pair{"--prefill", flags_.prefill}, std::pair{"--decode", flags_.decode}}) {
    if (v != -1 && (v < 1 || v > 16))
      throw UsageError(std::string(flag) + " " + std::to_string(v) + " is out of range: instances are 1..16");
  }
  Printer::check_object_format(flags_.output);
  if (parse_dry_run(flags_.dry_run) == DryRun::Client)
    throw UsageError("--dry-run=client is not supported by scale (it needs the live object): use --dry-run=server");
}

void ScaleOptions::complete(const std::string& context_namespace) {
  dry_run_ = parse_dry_run(flags_.dry_run);
  if (!flags_.filename.empty()) {
    proposed_ = config::parse_user_config(read_file(flags_.filename), flags_.filename);
    check_namespace_flag(namespace_flag_, proposed_->job_id);
    namespace_ = proposed_->job_id;
  } else {
    namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
  }
}

namespace {

/// Writes of the baseline that meet a 409 Conflict are re-read and retried at most this many times in all.
constexpr int kBaselineAttempts = 3;

std::string counts_text(std::int64_t prefill, std::int64_t decode) {
  return "prefill " + std::to_string(prefill) + ", decode " + std::to_string(decode);
}

}  // namespace

std::string ScaleOptions::new_baseline_text(const config::UserConfig& baseline, int prefill, int decode) const {
  if (proposed_) {
    const auto bad = policy::disallowed_changes(baseline.doc, proposed_->doc,
                                                {policy::kPrefillInstancesPath, policy::kDecodeInstancesPath});
    if (!bad.empty()) {
      std::string msg = "scale may change only " + std::string(policy::kPrefillInstancesPath) + " and " +
                        policy::kDecodeInstancesPath + "; " + flags_.filename +
                        " also differs from the baseline at:";
      for (const auto& p : bad) msg += "\n* " + p;
      msg += "\nuse kubectl mindie update-config for allowed settings, or redeploy";
      throw CommandError(msg);
    }
    return proposed_->raw;
  }
  std::string raw = baseline.raw;
  if (prefill != baseline.p_instances) raw = config::replace_json_number(raw, policy::kPrefillInstancesPath, prefill);
  if (decode != baseline.d_instances) raw = config::replace_json_number(raw, policy::kDecodeInstancesPath, decode);
  return raw;
}

void ScaleOptions::write_baseline(kube::Client& client, json::object cm, const config::UserConfig& read,
                                  int prefill, int decode, const kube::WriteOptions& opts) const {
  for (int attempt = 1;; ++attempt) {
    const config::UserConfig current = parse_baseline(cm, namespace_);
    if (current.p_instances != read.p_instances || current.d_instances != read.d_instances) {
      throw CommandError("the baseline's instance counts changed while scaling (another scale ran at the same "
                         "time): now " + counts_text(current.p_instances, current.d_instances));
    }
    const std::string raw = new_baseline_text(current, prefill, decode);
    if (raw == current.raw) return;
    // The resourceVersion turns this merge patch into a compare-and-swap on the baseline just read.
    const json::object patch{{"metadata", {{"resourceVersion", cm.at("metadata").at("resourceVersion")}}},
                             {"data", {{render::kBaselineKey, raw}}}};
    try {
      client.patch(kube::gvr::kConfigMaps, namespace_, render::kConfigMapName, kube::PatchType::Merge, patch, opts);
      return;
    } catch (const kube::ApiError& e) {
      if (!e.is_conflict() || attempt == kBaselineAttempts) throw;
    }
    cm = client.get(kube::gvr::kConfigMaps, namespace_, render::kConfigMapName);
  }
}

void ScaleOptions::run(kube::Client& client, Printer& printer) {
  const std::string cm_name = render::kConfigMapName;
  std::optional<json::object> cm = client.get_if_exists(kube::gvr::kConfigMaps, namespace_, cm_name);
  if (!cm) {
    throw CommandError("no deployment found in namespace " + namespace_ + " (configmap/" + cm_name +
                       " not found): run kubectl mindie deploy first");
  }
  const config::UserConfig baseline = parse_baseline(*cm, namespace_);
  std::string mode = annotation(*cm, render::kDeployModeAnnotation);
  if (mode.empty()) mode = std::string(config::to_string(baseline.deploy_mode));
  if (mode != config::to_string(config::DeployMode::InferServiceSet)) {
    throw CommandError("the deployment in namespace " + namespace_ + " uses deploy_mode " + mode +
                       ", which this version of kubectl-mindie cannot scale");
  }

  // The target counts. Only the counts may differ from the baseline (checked again on every baseline write).
  const int prefill = proposed_ ? proposed_->p_instances : flags_.prefill != -1 ? flags_.prefill : baseline.p_instances;
  const int decode = proposed_ ? proposed_->d_instances : flags_.decode != -1 ? flags_.decode : baseline.d_instances;
  new_baseline_text(baseline, prefill, decode);

  std::string iss_name = annotation(*cm, render::kWorkloadNameAnnotation);
  if (iss_name.empty()) iss_name = render::default_service_set_name(baseline);
  std::optional<json::object> iss = client.get_if_exists(kube::gvr::kInferServiceSets, namespace_, iss_name);
  if (!iss) {
    throw CommandError("the baseline in namespace " + namespace_ + " names inferserviceset." +
                       kube::gvr::kInferServiceSets.group + "/" + iss_name +
                       ", which does not exist: re-run kubectl mindie deploy");
  }
  const auto changes = scale::plan_role_changes(*iss, {{"prefill", prefill}, {"decode", decode}});
  for (const auto& c : changes) {
    const int base = c.role == "prefill" ? baseline.p_instances : baseline.d_instances;
    if (c.from != base) {
      printer.warning("role " + c.role + " had drifted: " + std::to_string(c.from) + " live instances, " +
                      std::to_string(base) + " in the baseline; both become " + std::to_string(c.to));
    }
  }

  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.field_manager = render::kFieldManager;
  const json::array patch = scale::build_replicas_patch(changes);
  json::object result = *iss;
  if (!patch.empty()) {
    result = client.patch(kube::gvr::kInferServiceSets, namespace_, iss_name, kube::PatchType::Json, patch, opts);
  }

  try {
    write_baseline(client, *cm, baseline, prefill, decode, opts);
  } catch (...) {
    if (patch.empty() || opts.dry_run) throw;
    const auto cause = std::current_exception();
    const std::string live = "inferserviceset." + kube::gvr::kInferServiceSets.group + "/" + iss_name;
    try {
      client.patch(kube::gvr::kInferServiceSets, namespace_, iss_name, kube::PatchType::Json,
                   scale::build_undo_patch(changes), opts);
    } catch (const std::exception& undo) {
      throw PartialFailure(
          cause, "the baseline was not updated and undoing the scale failed too (" + std::string(undo.what()) +
                     "):\n  " + live + " now runs " + counts_text(prefill, decode) + "\n  configmap/" + cm_name +
                     " (the baseline) still says " + counts_text(baseline.p_instances, baseline.d_instances) +
                     "\nto recover, run one of:\n  kubectl mindie scale -n " + namespace_ + " --prefill " +
                     std::to_string(prefill) + " --decode " + std::to_string(decode) +
                     "   # keep the new counts\n  kubectl mindie scale -n " + namespace_ + " --prefill " +
                     std::to_string(baseline.p_instances) + " --decode " + std::to_string(baseline.d_instances) +
                     "   # return to the baseline");
    }
    throw PartialFailure(cause, "the baseline could not be updated, so the scale was undone: " + live +
                                    " is back at its previous counts; nothing changed");
  }

  if (printer.format() == "json" || printer.format() == "yaml") {
    printer.object(result);
    return;
  }
  printer.mutation(kube::gvr::kInferServiceSets, iss_name, "scaled", dry_run_);
}

}  // namespace mindie::cmd
