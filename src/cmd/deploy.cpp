#include "cmd/deploy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "util/yaml_json.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;
namespace fs = std::filesystem;

void add_deploy_flags(po::options_description& desc, DeployFlags& flags) {
  desc.add_options()
      ("filename,f", po::value(&flags.filename), "user_config.json to deploy")
      ("env-file,e", po::value(&flags.env_file), "env.json with the containers' environment")
      ("config-dir", po::value(&flags.config_dir), "Folder holding user_config.json and env.json")
      ("scripts-dir", po::value(&flags.scripts_dir), "Folder of startup/probe files to store in motor-config")
      ("name", po::value(&flags.name), "InferServiceSet name (default: mindie-motor-<engine>)")
      ("dry-run", po::value(&flags.dry_run)->default_value("none")->implicit_value("client"),
       "none, client (print only) or server (send with dryRun=All)")
      ("output,o", po::value(&flags.output), "Print the objects: json, yaml or name")
      ("output-dir", po::value(&flags.output_dir), "Also write the rendered objects as YAML files here")
      ("force-conflicts", po::bool_switch(&flags.force_conflicts),
       "Take over fields another field manager owns (server-side apply force)");
}

DeployOptions::DeployOptions(DeployFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void DeployOptions::validate() const {
  if (flags_.filename.empty() && flags_.config_dir.empty())
    throw UsageError("must specify -f user_config.json or --config-dir DIR");
  if (!flags_.filename.empty() && !flags_.config_dir.empty())
    throw UsageError("-f and --config-dir cannot be used together");
  if (!flags_.env_file.empty() && !flags_.config_dir.empty())
    throw UsageError("-e and --config-dir cannot be used together (--config-dir reads DIR/env.json)");
  if (!flags_.name.empty() && !config::is_dns1123_label(flags_.name))
    throw UsageError("--name " + flags_.name + " is not a valid InferServiceSet name (a DNS-1123 label)");
  Printer::check_object_format(flags_.output);
  parse_dry_run(flags_.dry_run);
}

namespace {

/// The regular files of a --scripts-dir, key = file name. Key names, collisions and the ConfigMap size are
/// checked by the renderer, before any request.
std::map<std::string, std::string> read_scripts(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw CommandError("--scripts-dir " + dir + " is not a directory");
  std::map<std::string, std::string> scripts;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) scripts[entry.path().filename().string()] = read_file(entry.path().string());
  }
  if (ec) throw CommandError("cannot list --scripts-dir " + dir + ": " + ec.message());
  return scripts;
}

/// True when every cause of a server-side apply conflict names our own field manager: fields that scale or
/// update-config changed with a patch (an Update entry of "kubectl-mindie" in managedFields) and that deploy now
/// applies again. Those are the tool's own earlier writes, so deploy takes them back; a conflict with any other
/// manager is reported and overridden only with --force-conflicts (kubectl apply --server-side does the same).
bool conflicts_only_with_own_updates(const kube::ApiError& e) {
  if (!e.is_conflict() || e.causes().empty()) return false;
  const std::string own = std::string("conflict with \"") + render::kFieldManager + "\"";
  return std::all_of(e.causes().begin(), e.causes().end(), [&](const kube::StatusCause& c) {
    return c.reason == "FieldManagerConflict" && c.message.compare(0, own.size(), own) == 0;
  });
}

std::string object_name(const json::object& obj) {
  return std::string(obj.at("metadata").at("name").as_string());
}

const kube::GVR& gvr_of(const json::object& obj) {
  const auto* r = kube::gvr::for_kind(obj.at("apiVersion").as_string(), obj.at("kind").as_string());
  if (!r) throw std::logic_error("rendered an object of unknown kind " + std::string(obj.at("kind").as_string()));
  return *r;
}

}  // namespace

void DeployOptions::complete() {
  dry_run_ = parse_dry_run(flags_.dry_run);
  std::string config_path = flags_.filename;
  std::string env_path = flags_.env_file;
  if (!flags_.config_dir.empty()) {
    config_path = (fs::path(flags_.config_dir) / "user_config.json").string();
    const auto candidate = fs::path(flags_.config_dir) / "env.json";
    std::error_code ec;
    if (fs::exists(candidate, ec)) env_path = candidate.string();
  }
  config_ = config::parse_user_config(read_file(config_path), config_path);
  if (!env_path.empty()) env_ = config::parse_env_config(read_file(env_path), env_path);
  check_namespace_flag(namespace_flag_, config_->job_id);
  if (config_->deploy_mode != config::DeployMode::InferServiceSet) {
    throw CommandError("motor_deploy_config.deploy_mode " + std::string(config::to_string(config_->deploy_mode)) +
                       " is not supported by this version of kubectl-mindie yet; use infer_service_set");
  }
  if (!flags_.scripts_dir.empty()) render_options_.scripts = read_scripts(flags_.scripts_dir);
  render_options_.service_set_name = flags_.name;
  objects_ = render::render_infer_service_set(*config_, env_ ? &*env_ : nullptr, render_options_);
}

void DeployOptions::check_existing_baseline(kube::Client& client) const {
  const auto existing = client.get_if_exists(kube::gvr::kConfigMaps, config_->job_id, render::kConfigMapName);
  if (!existing) return;
  const std::string where = "configmap/" + std::string(render::kConfigMapName) + " in namespace " + config_->job_id;
  std::string mode = annotation(*existing, render::kDeployModeAnnotation);
  if (mode.empty()) mode = std::string(config::to_string(parse_baseline(*existing, config_->job_id).deploy_mode));
  if (mode != config::to_string(config_->deploy_mode)) {
    throw CommandError("deploy_mode cannot change after deploy: the baseline in " + where + " has " + mode +
                       ", the config has " + std::string(config::to_string(config_->deploy_mode)) +
                       "; delete the deployment and deploy again");
  }
  const std::string live_name = annotation(*existing, render::kWorkloadNameAnnotation);
  const std::string new_name = object_name(objects_.back());
  if (!live_name.empty() && live_name != new_name) {
    throw CommandError("the baseline in " + where + " belongs to InferServiceSet " + live_name +
                       ", not " + new_name + ": pass --name " + live_name +
                       " (renaming would leave the old service running)");
  }
}

std::string DeployOptions::rerun_command() const {
  std::string cmd = "kubectl mindie deploy -n " + config_->job_id;
  if (!flags_.config_dir.empty()) cmd += " --config-dir " + flags_.config_dir;
  if (!flags_.filename.empty()) cmd += " -f " + flags_.filename;
  if (!flags_.env_file.empty()) cmd += " -e " + flags_.env_file;
  if (!flags_.scripts_dir.empty()) cmd += " --scripts-dir " + flags_.scripts_dir;
  if (!flags_.name.empty()) cmd += " --name " + flags_.name;
  return cmd;
}

void DeployOptions::write_output_dir() const {
  std::error_code ec;
  fs::create_directories(flags_.output_dir, ec);
  if (ec) throw CommandError("cannot create --output-dir " + flags_.output_dir + ": " + ec.message());
  for (const auto& obj : objects_) {
    std::string kind(obj.at("kind").as_string());
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    const fs::path file = fs::path(flags_.output_dir) / (kind + "-" + object_name(obj) + ".yaml");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << util::json_to_yaml(obj);
    if (!out.flush()) throw CommandError("cannot write " + file.string());
  }
}

void DeployOptions::run(kube::Client& client, Printer& printer) {
  if (!flags_.output_dir.empty()) write_output_dir();
  const bool print_objects = printer.format() == "json" || printer.format() == "yaml";
  if (dry_run_ == DryRun::Client) {
    for (const auto& obj : objects_) {
      if (print_objects) printer.object(obj);
      else printer.mutation(gvr_of(obj), object_name(obj), "serverside-applied", dry_run_);
    }
    return;
  }

  if (!client.has_group_version("mindcluster.huawei.com", "v1")) {
    throw CommandError("the server does not serve mindcluster.huawei.com/v1 (InferServiceSet): install MindCluster "
                       "infer-operator, or set motor_deploy_config.deploy_mode to multi_deployment; nothing was "
                       "written");
  }
  check_existing_baseline(client);

  kube::WriteOptions opts;
  opts.dry_run = dry_run_ == DryRun::Server;
  opts.force = flags_.force_conflicts;
  opts.field_manager = render::kFieldManager;
  std::vector<std::string> written;
  for (const auto& obj : objects_) {
    const kube::GVR& r = gvr_of(obj);
    json::object stored;
    try {
      try {
        stored = client.apply(r, obj, opts);
      } catch (const kube::ApiError& e) {
        if (opts.force || !conflicts_only_with_own_updates(e)) throw;
        kube::WriteOptions forced = opts;
        forced.force = true;
        stored = client.apply(r, obj, forced);
      }
    } catch (...) {
      if (written.empty() || opts.dry_run) throw;
      // The ConfigMap (the baseline) is written first, so it may now describe a workload that was not
      // written. Every apply is idempotent: re-running deploy converges.
      std::string state = "deploy stopped after writing:";
      for (const auto& w : written) state += "\n  " + w;
      state += "\nthe baseline in configmap/" + std::string(render::kConfigMapName) +
               " may describe a workload that is not (yet) live; fix the cause above and re-run: " + rerun_command();
      throw PartialFailure(std::current_exception(), state);
    }
    written.push_back(r.kind_dot_group() + "/" + object_name(obj));
    if (print_objects) printer.object(stored);
    else printer.mutation(r, object_name(obj), "serverside-applied", dry_run_);
  }
}

}  // namespace mindie::cmd
