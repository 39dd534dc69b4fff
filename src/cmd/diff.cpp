#include "cmd/diff.h"

#include <cstdlib>
#include <iostream>

#include "cmd/deploy_steps.h"
#include "kube/object_diff.h"
#include "mindie/baseline.h"
#include "mindie/baseline_policy.h"
#include "util/unified_diff.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

namespace {

DeployFlags deploy_flags(const DiffFlags& f) {
  DeployFlags d;
  d.filename = f.filename;
  d.env_file = f.env_file;
  d.config_dir = f.config_dir;
  d.scripts_dir = f.scripts_dir;
  d.overrides = f.overrides;
  d.name = f.name;
  d.dry_run = "server";  // every apply is sent with dryRun=All: diff writes nothing
  return d;
}

/// `obj` as a diff file shows it: YAML, without the server's fields.
std::string shown(const json::object& obj) { return util::json_to_yaml(kube::without_server_fields(obj)); }

std::string value_text(const std::optional<json::value>& v) { return v ? json::serialize(*v) : "(absent)"; }

}  // namespace

std::vector<std::string> baseline_change_lines(const json::value& stored, const json::value& proposed) {
  std::vector<std::string> lines;
  for (const auto& c : policy::baseline_changes(stored, proposed))
    lines.push_back(c.path + ": " + value_text(c.from) + " → " + value_text(c.to) + " (" + policy::applier_text(c.by) +
                    ")");
  return lines;
}

DiffOptions::DiffOptions(const DiffFlags& flags, std::string namespace_flag)
    : deploy_(deploy_flags(flags), std::move(namespace_flag)) {}

void DiffOptions::complete() { deploy_.complete(); }

void DiffOptions::validate() const { deploy_.validate(); }

void DiffOptions::read_inputs() {
  deploy_.read_inputs();
  namespace_ = deploy_.target_namespace();
}

std::vector<DiffFile> DiffOptions::object_files(kube::Client& client, const DeployOptions::Preview& preview) {
  std::vector<DiffFile> files;
  for (const auto& obj : preview.objects) {
    const auto live = client.get_if_exists(gvr_of(obj), namespace_, object_name(obj));
    const json::object merged = deploy_.dry_run_apply(client, obj);
    files.push_back({kube::diff_file_name(merged), live ? shown(*live) : "", shown(merged)});
  }
  // What deploy deletes after its writes: a diff to nothing, as kubectl diff --prune shows it.
  for (const auto& o : preview.removals.objects)
    if (const auto live = client.get_if_exists(*o.gvr, namespace_, o.name))
      files.push_back({kube::diff_file_name(*live), shown(*live), ""});
  return files;
}

int DiffOptions::run(kube::Client& client, Printer& printer) {
  read_inputs();
  const DeployOptions::Preview preview = deploy_.preview(client, printer);
  const std::vector<DiffFile> files = object_files(client, preview);
  int status = 0;
  const char* external = std::getenv("KUBECTL_EXTERNAL_DIFF");
  if (const auto program = parse_external_diff(external ? external : "")) {
    for (const auto& a : program->dropped)
      printer.warning("invalid argument is ignored: " + a +
                      ", only Alphanumeric (case-insensitive), dash and equal are allowed");
    status = run_external_diff(*program, files);
  } else {
    for (const auto& f : files) {
      const std::string text = util::unified_diff(f.live, f.merged, "LIVE/" + f.name, "MERGED/" + f.name);
      if (text.empty()) continue;
      printer.out() << text;
      status = 1;
    }
  }
  if (!preview.existing) return status;
  // The baseline's changes by config path, as comment lines: the output still reads as a patch.
  const baseline::Baseline stored = baseline::read_baseline(*preview.existing, namespace_);
  boost::system::error_code ec;
  const json::value stored_doc = stored.raw ? json::parse(*stored.raw, ec) : json::value();
  if (!stored.raw || ec) return status;  // deploy warned that it replaces an unreadable baseline
  const auto lines = baseline_change_lines(stored_doc, preview.config_doc);
  if (lines.empty()) return status;
  printer.out() << "# baseline changes (configmap/" << baseline::kConfigMapName
                << "), each with the command that applies it:\n";
  for (const auto& l : lines) printer.out() << "#   " << l << '\n';
  return 1;
}

namespace {

class DiffInvocation : public Invocation {
 public:
  explicit DiffInvocation(po::options_description& desc) {
    desc.add_options()("filename,f", po::value(&flags_.filename), "user_config.json to compare")(
        "env-file,e", po::value(&flags_.env_file), "env.json with the containers' environment")(
        "config-dir", po::value(&flags_.config_dir), "Folder holding user_config.json and env.json")(
        "scripts-dir", po::value(&flags_.scripts_dir), "PyMotor's deployer folder, as deploy takes it")(
        "overrides", po::value(&flags_.overrides), "YAML of per-role changes to the pod templates, as deploy takes it")(
        "name", po::value(&flags_.name), "InferServiceSet name, as deploy takes it");
  }
  void run(const GlobalFlags& global, Printer& printer) override {
    DiffOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    o.read_inputs();
    Session session(global, std::cerr);
    status_ = o.run(session.client(), printer);
  }
  int exit_status() const override { return status_; }

 private:
  DiffFlags flags_;
  int status_ = 0;
};

}  // namespace

Command diff_command() {
  Command c{
      "diff",
      "Show what a deploy of the config would change: object diffs, then the baseline's changes",
      "kubectl mindie diff (-f user_config.json [-e env.json] | --config-dir DIR) [flags]",
      "Diff the live deployment against what `kubectl mindie deploy` with the same inputs would make, as kubectl\n"
      "diff does: deploy's inputs, checks and objects, each sent as deploy's server-side apply with dryRun=All\n"
      "(nothing is written), then a unified diff per object of the live version (LIVE/) against the would-be one\n"
      "(MERGED/), files named <group>.<version>.<Kind>.<namespace>.<name>, without the fields the server owns\n"
      "(managedFields, resourceVersion, uid, generation, creationTimestamp, status). Objects deploy would create\n"
      "show as a diff from nothing; Deployments and Services it would delete, as a diff to nothing. Then, as\n"
      "comment lines, each config path of the baseline that changes, old → new, with the command that applies it:\n"
      "scale (instance counts), update-config (its whitelisted settings), deploy + rollout restart (what the pods\n"
      "read at start: images, resources, the rest), delete + deploy (deploy_mode, job_id).\n"
      "KUBECTL_EXTERNAL_DIFF names a program to run instead, as kubectl runs it: split at spaces (arguments with\n"
      "anything but letters, digits, - and = are ignored), started directly, never through a shell, with the LIVE\n"
      "and MERGED folders of YAML files as its first two arguments; its exit status 0 or 1 is diff's.",
      "  # What a deploy of a folder's user_config.json and env.json would change\n"
      "  kubectl mindie diff --config-dir ./conf\n\n"
      "  # With another diff program, after export KUBECTL_EXTERNAL_DIFF=\"colordiff -N -u\"\n"
      "  kubectl mindie diff -f user_config.json\n",
      {},
      true,
      [](po::options_description& desc) -> std::unique_ptr<Invocation> {
        return std::make_unique<DiffInvocation>(desc);
      },
      {{"0", "no differences"},
       {"1", "differences were found"},
       {"2",
        "an error (kubectl diff's >1): a bad flag or input file, a check deploy would fail, an API or "
        "connection error, KUBECTL_EXTERNAL_DIFF failing to start or exiting above 1"}}};
  c.error_exit_status = 2;
  return c;
}

}  // namespace mindie::cmd
