#include "cmd/common.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kube/curl_transport.h"
#include "kube/logging_transport.h"
#include "mindie/render.h"
#include "util/json_pretty.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

void add_global_flags(po::options_description& desc, GlobalFlags& flags) {
  desc.add_options()
      ("kubeconfig", po::value(&flags.kube.kubeconfig), "Path to the kubeconfig file to use")
      ("context", po::value(&flags.kube.context), "The name of the kubeconfig context to use")
      ("namespace,n", po::value(&flags.kube.namespace_), "The namespace (must equal job_id when a config is given)")
      ("request-timeout", po::value(&flags.kube.request_timeout_seconds)->default_value(0),
       "Seconds to wait for one server request (0 = no limit)")
      ("v,v", po::value(&flags.verbosity)->default_value(0), "Log level: 6 requests, 8 request/response bodies");
}

DryRun parse_dry_run(const std::string& s) {
  if (s == "none") return DryRun::None;
  if (s == "client" || s.empty()) return DryRun::Client;
  if (s == "server") return DryRun::Server;
  throw UsageError("Invalid dry-run value (" + s + "). Must be \"none\", \"server\", or \"client\".");
}

Printer::Printer(std::ostream& out, std::ostream& err, std::string format)
    : out_(out), err_(err), format_(std::move(format)) {}

void Printer::warning(const std::string& msg) { err_ << "Warning: " << msg << '\n'; }

std::string Printer::check_object_format(const std::string& format) {
  if (format.empty() || format == "json" || format == "yaml" || format == "name") return format;
  throw UsageError("unable to match a printer suitable for the output format \"" + format +
                   "\", allowed formats are: json,name,yaml");
}

void Printer::mutation(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run) {
  out_ << r.kind_dot_group() << '/' << name;
  if (format_ != "name") {
    out_ << ' ' << verb;
    if (dry_run == DryRun::Client) out_ << " (dry run)";
    if (dry_run == DryRun::Server) out_ << " (server dry run)";
  }
  out_ << '\n';
}

void Printer::object(const json::value& obj) {
  if (format_ == "json") {
    out_ << util::json_pretty(obj) << '\n';
  } else {
    if (printed_object_) out_ << "---\n";
    out_ << util::json_to_yaml(obj);
  }
  printed_object_ = true;
}

Session::Session(const GlobalFlags& flags, std::ostream& log) : rest_(kube::load_rest_config(flags.kube)) {
  transport_ = std::make_unique<kube::CurlTransport>(rest_);
  kube::HttpTransport* top = transport_.get();
  if (flags.verbosity >= 6) {
    logging_ = std::make_unique<kube::LoggingTransport>(*transport_, flags.verbosity, log);
    top = logging_.get();
  }
  client_ = std::make_unique<kube::Client>(*top);
}

Session::~Session() = default;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CommandError("cannot read " + path + ": " + std::strerror(errno));
  return ss.str();
}

void check_namespace_flag(const std::string& namespace_flag, const std::string& job_id) {
  if (!namespace_flag.empty() && namespace_flag != job_id) {
    throw UsageError("the namespace from the command line (--namespace " + namespace_flag +
                     ") does not match motor_deploy_config.job_id (" + job_id +
                     "): job_id is the namespace of the deployment; drop -n or make them equal");
  }
}

kube::HttpResponse OfflineTransport::send(const kube::HttpRequest& req) {
  throw std::logic_error("--dry-run=client must not contact the server (attempted " + req.method + " " + req.path +
                         ")");
}

config::UserConfig parse_baseline(const json::object& config_map, const std::string& ns) {
  const std::string where = std::string("configmap/") + render::kConfigMapName + " in namespace " + ns;
  const json::value* data = config_map.if_contains("data");
  const json::value* raw = (data && data->is_object()) ? data->as_object().if_contains(render::kBaselineKey) : nullptr;
  if (!raw || !raw->is_string()) {
    throw CommandError(where + " has no data key " + render::kBaselineKey +
                       ": it is not a kubectl-mindie baseline; redeploy with kubectl mindie deploy");
  }
  try {
    return config::parse_user_config(std::string(raw->as_string()), where + " key " + render::kBaselineKey);
  } catch (const config::ValidationError& e) {
    throw CommandError(std::string("the baseline is not usable: ") + e.what());
  }
}

std::string annotation(const json::object& obj, const std::string& key) {
  const auto* md = obj.if_contains("metadata");
  if (!md || !md->is_object()) return "";
  const auto* ann = md->as_object().if_contains("annotations");
  if (!ann || !ann->is_object()) return "";
  const auto* v = ann->as_object().if_contains(key);
  return (v && v->is_string()) ? std::string(v->as_string()) : std::string();
}

}  // namespace mindie::cmd
