#include "cmd/list.h"

#include <chrono>
#include <iostream>

#include "cmd/list_inputs.h"
#include "cmd/list_view.h"

namespace mindie::cmd {

namespace po = boost::program_options;

void add_all_namespaces_flag(po::options_description& desc, bool& all_namespaces) {
  desc.add_options()("all-namespaces,A", po::bool_switch(&all_namespaces),
                     "List the deployments across all namespaces (-n is then ignored, as kubectl get ignores it)");
}

ListOptions::ListOptions(ListFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void ListOptions::complete(const std::string& context_namespace) {
  context_namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
  namespace_ = flags_.all_namespaces ? "" : context_namespace_;
}

void ListOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  flags_.output.validate();
}

void ListOptions::run(kube::Client& client, Printer& printer) {
  const Listing listing = read_listing(client, namespace_, context_namespace_);
  for (const auto& w : listing.warnings) printer.warning(w);
  const bool all = namespace_.empty();
  if (listing.deployments.empty() && (printer.format().empty() || printer.format() == "wide")) {
    printer.notice(all ? "No resources found" : "No resources found in " + namespace_ + " namespace.");
    return;
  }
  printer.view(listed_objects(listing), list_json(listing), [&](bool wide) {
    return render_list(listing, all || !listing.warnings.empty(), wide, std::chrono::system_clock::now());
  });
}

namespace {

/// list: ListOptions.
class ListInvocation : public Invocation {
 public:
  explicit ListInvocation(po::options_description& desc) {
    flags_.output.bind(desc);
    add_all_namespaces_flag(desc, flags_.all_namespaces);
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    Session session(global, std::cerr);  // the kubeconfig first: complete() takes its namespace
    ListOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer);
  }

 private:
  ListFlags flags_;
};

}  // namespace

Command list_command() {
  return {"list",
          "List the deployments in a namespace or all of them, with their instances ready",
          "kubectl mindie list [-A | -n NS] [-o wide|json|yaml|name]",
          "List every deployment the user can see: the namespaces holding a kubectl-mindie motor-config baseline and\n"
          "the AIBrix StormServices, each with its deploy mode, roles, instances ready of those desired, instances\n"
          "still on an earlier pod template (OUT-OF-DATE) and age, judged as status judges them. One list request per\n"
          "kind for the whole scope. A user who may not list across namespaces is shown the current namespace, with a\n"
          "warning. `status -A` is the same command.",
          "  # Every deployment in the cluster\n"
          "  kubectl mindie list -A\n\n"
          "  # The deployment of namespace mindie-demo, with the instances per role\n"
          "  kubectl mindie list -n mindie-demo -o wide\n\n"
          "  # Machine-readable (docs/list.md)\n"
          "  kubectl mindie list -A -o json\n",
          ListFlags().output.formats(),
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<ListInvocation>(desc);
          },
          {{"0", "the list was shown, whatever the deployments' state (none found included)"},
           {"1", "an error: a bad flag, an API or connection error"}}};
}

}  // namespace mindie::cmd
