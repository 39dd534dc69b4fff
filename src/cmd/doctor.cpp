#include "cmd/doctor.h"

#include <algorithm>
#include <iostream>

#include "cmd/status_inputs.h"
#include "mindie/status_report.h"
#include "util/table.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;
using doctor::Check;
using doctor::State;

namespace {

/// The apiVersion of the report, the tool's own (it is no Kubernetes object).
constexpr const char* kReportApiVersion = "kubectl-mindie/v1";

/// Runs `check`; an API or connection error on the way makes it a failed check named `name`, but a refusal (403)
/// a warning: what the user may not read is no verdict on the cluster, and the rbac check judges the rights.
template <typename F>
void run_check(std::vector<Check>& out, const std::string& name, F&& check) {
  try {
    check();
  } catch (const kube::ApiError& e) {
    const std::string said = "Error from server (" + e.reason() + "): " + e.status_message();
    if (e.code() == 403)
      out.push_back({name, State::Warning, "not checked: " + said, "run doctor as a user who may read it"});
    else out.push_back({name, State::Failed, said, ""});
  } catch (const kube::TransportError& e) {
    out.push_back({name, State::Failed, e.what(), ""});
  }
}

/// With a namespace that holds a deployment: what status says of it.
std::optional<Check> deployment(kube::Client& client, const std::string& ns) {
  if (ns.empty() || !client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName)) return std::nullopt;
  const status::Report r = status::build_report(ns, read_status_inputs(client, ns), std::chrono::system_clock::now());
  if (r.ready && r.drift.empty())
    return Check{"deployment", State::Ok, r.deploy_mode + " deployment " + r.name + " is ready", ""};
  std::vector<std::string> why = r.unready;
  why.insert(why.end(), r.drift.begin(), r.drift.end());
  return Check{"deployment", State::Warning,
               r.deploy_mode + " deployment " + r.name + (r.ready ? " is ready" : " is not ready") +
                   (why.empty() ? "" : ": " + why.front() + (why.size() > 1 ? " (and more)" : "")),
               "kubectl mindie status -n " + ns};
}

json::object report_json(const std::vector<Check>& checks, bool passed) {
  json::array items;
  for (const auto& c : checks) {
    json::object o{{"name", c.name}, {"status", doctor::to_string(c.state)}, {"message", c.message}};
    if (!c.fix.empty()) o["fix"] = c.fix;
    items.emplace_back(std::move(o));
  }
  return {{"apiVersion", kReportApiVersion}, {"kind", "DoctorReport"}, {"passed", passed}, {"checks", items}};
}

std::string report_table(const std::vector<Check>& checks) {
  util::Table table({{"CHECK"}, {"STATUS"}, {"MESSAGE"}}, false);
  const auto one_line = [](std::string text) {  // a cell with a line break would break the columns
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  };
  for (const auto& c : checks) {
    table.add({c.name, doctor::to_string(c.state), one_line(c.message)});
    if (!c.fix.empty()) table.add({"", "", "fix: " + one_line(c.fix)});
  }
  return table.str();
}

}  // namespace

DoctorOptions::DoctorOptions(DoctorFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void DoctorOptions::complete() { namespace_ = namespace_flag_; }

void DoctorOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  flags_.output.validate();
  if (!flags_.filename.empty() || !flags_.config_dir.empty() || !flags_.env_file.empty())
    check_config_input_flags(flags_.filename, flags_.env_file, flags_.config_dir);
  if (flags_.print_rbac && (!flags_.filename.empty() || !flags_.config_dir.empty()))
    throw UsageError("--print-rbac checks nothing: it takes no config (-n names the Role's namespace)");
}

void DoctorOptions::read_inputs() {
  if (flags_.filename.empty() && flags_.config_dir.empty()) return;
  DeployFlags d;
  d.filename = flags_.filename;
  d.env_file = flags_.env_file;
  d.config_dir = flags_.config_dir;
  deploy_.emplace(d, namespace_flag_);
  deploy_->complete();
  deploy_->validate();
  deploy_->read_inputs();
  namespace_ = deploy_->target_namespace();
}

void DoctorOptions::run(kube::Client& client, Printer& printer) {
  if (flags_.print_rbac) {
    const json::object list = doctor::rbac_manifest(namespace_.empty() ? "NAMESPACE" : namespace_);
    printer.view({}, list, [list](bool) { return util::json_to_yaml(list); });
    return;
  }
  doctor::Target target{namespace_};
  if (deploy_) {
    target.config = &deploy_->config();
    target.objects = &deploy_->objects();
    target.render_options = &deploy_->render_options();
  }
  std::vector<Check> all = {doctor::server(client)};  // without an answer nothing else can be checked
  const std::vector<Check> rest = checks(client, target);
  all.insert(all.end(), rest.begin(), rest.end());
  std::size_t failed = 0;
  for (const auto& c : all) failed += c.state == State::Failed ? 1 : 0;
  const json::object report = report_json(all, failed == 0);
  printer.view({}, report, [&all](bool) { return report_table(all); });
  if (failed > 0) throw CommandError(std::to_string(failed) + " of " + std::to_string(all.size()) + " checks failed");
}

std::vector<Check> DoctorOptions::checks(kube::Client& client, const doctor::Target& target) const {
  std::vector<Check> out;
  const auto add = [&out](std::vector<Check> more) { out.insert(out.end(), more.begin(), more.end()); };
  const auto add_one = [&out](std::optional<Check> c) {
    if (c) out.push_back(std::move(*c));
  };
  run_check(out, "api", [&] { add(doctor::apis(client, target)); });
  run_check(out, "controllers", [&] { add(doctor::controllers(client)); });
  run_check(out, "namespace", [&] { add_one(doctor::namespace_exists(client, target)); });
  run_check(out, "rbac", [&] { out.push_back(doctor::rights(client, target)); });
  run_check(out, "rbac/stop-operator", [&] { out.push_back(doctor::stop_operator_rights(client)); });
  run_check(out, "nodes", [&] { add(doctor::nodes(client, target)); });
  run_check(out, "nodeports", [&] { add_one(doctor::node_ports(client, target)); });
  run_check(out, "deployment", [&] { add_one(deployment(client, target.ns)); });
  return out;
}

namespace {

/// doctor: DoctorOptions.
class DoctorInvocation : public Invocation {
 public:
  explicit DoctorInvocation(po::options_description& desc) {
    desc.add_options()("filename,f", po::value(&flags_.filename), "user_config.json to check against the cluster")(
        "env-file,e", po::value(&flags_.env_file), "env.json of -f")("config-dir", po::value(&flags_.config_dir),
                                                                     "Folder holding user_config.json and env.json")(
        "print-rbac", po::bool_switch(&flags_.print_rbac),
        "Print the Role (in -n's namespace) and ClusterRole a user deploying with kubectl-mindie needs, and check "
        "nothing");
    flags_.output.bind(desc);
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    DoctorOptions o(flags_, global.kube.namespace_);
    o.complete();
    o.validate();
    o.read_inputs();
    if (!o.needs_server()) {
      OfflineTransport offline;
      kube::Client client(offline);
      o.run(client, printer);
      return;
    }
    Session session(global, std::cerr);
    o.run(session.client(), printer);
  }

 private:
  DoctorFlags flags_;
};

}  // namespace

Command doctor_command() {
  return {"doctor",
          "Check what a deploy needs of the cluster: APIs, controllers, rights, NPUs, nodePorts",
          "kubectl mindie doctor [-n NS] [-f user_config.json [-e env.json] | --config-dir DIR] [flags]",
          "Check, one line each (ok, warning or failed, with the fix): the API server and its version;\n"
          "infer-operator's, Volcano's and AIBrix's resources served; infer-operator's and Volcano's scheduler's\n"
          "Deployments running; the namespace; every right a deploy needs (the namespace's SelfSubjectRulesReview,\n"
          "SelfSubjectAccessReviews for what it leaves open); the nodes of\n"
          "each hardware profile with their NPUs allocatable and free (allocatable less what the pods bound there\n"
          "request); and with a config, whether its engine pods fit the free NPUs and its nodePorts are free; with\n"
          "a namespace that holds a deployment, what status says of it. What the config's deploy mode needs fails,\n"
          "the rest warns. --print-rbac prints the Role and ClusterRole a deploying user needs instead.",
          "  # Check the cluster for a deploy into mindie-demo\n"
          "  kubectl mindie doctor -n mindie-demo\n\n"
          "  # Check a config against the cluster before deploying it\n"
          "  kubectl mindie doctor -f user_config.json\n\n"
          "  # The rights a deploying user needs, for an administrator to bind\n"
          "  kubectl mindie doctor --print-rbac -n mindie-demo\n",
          DoctorFlags().output.formats(),
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<DoctorInvocation>(desc);
          },
          {{"0", "no check failed (warnings allowed), or the RBAC was printed"},
           {"1", "a check failed, a bad flag or config, or the server could not be reached"}}};
}

}  // namespace mindie::cmd
