// status --framework aibrix (cmd/aibrix.h): the StormService report of --app, or of the one kubectl-mindie deployed.
#include "aibrix/storm_status.h"

#include "aibrix/storm_config.h"
#include "aibrix/storm_render.h"
#include "cmd/aibrix.h"
#include "cmd/storm_common.h"

namespace mindie::cmd {

namespace json = boost::json;
namespace ab = mindie::aibrix;

namespace {

json::array items(json::object list) { return std::move(list.at("items").as_array()); }

}  // namespace

StormStatusOptions::StormStatusOptions(FrameworkFlags framework, StatusFlags flags, std::string namespace_flag)
    : framework_(std::move(framework)), flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void StormStatusOptions::validate() const {
  if (!framework_.app.empty()) storm::check_app(framework_.app);
  check_namespace_syntax(namespace_flag_);
  if (flags_.watch) throw UsageError("--watch is not supported with --framework aibrix yet");
  flags_.output.validate();
}

void StormStatusOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void StormStatusOptions::run(kube::Client& client, Printer& printer) {
  const std::string& ns = namespace_;
  storm::require_crd(client, "no StormService to show");
  ab::StormStatusInputs inputs;
  inputs.storm_service = storm::find_storm(client, ns, framework_.app);
  const std::string app = storm::name_of(inputs.storm_service);
  inputs.pods = items(client.list(kube::gvr::kPods, ns, ab::pods_selector(app)));
  inputs.services = storm::list_services(client, ns, app);
  // Normal events too: kubelet's Killing about an earlier pod of the same name is the evidence of a recreation.
  inputs.events = items(client.list(kube::gvr::kEvents, ns, "", 500, "involvedObject.kind=Pod"));
  const ab::StormStatus report = ab::build_storm_status(ns, inputs, std::chrono::system_clock::now());
  printer.view(kStormServices, app, report.to_json(),
               [&report](bool wide) { return ab::render_storm_status(report, wide); });
}

}  // namespace mindie::cmd
