// kubectl mindie list (and status -A): every deployment the user can see, in one namespace or all, one row each
// with its mode, roles, instances ready of desired, instances on an earlier template and age (cmd/list_inputs.h
// reads them, cmd/list_view.h draws them).
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/output_flags.h"
#include "kube/client.h"

namespace mindie::cmd {

/// list's own flags, as given.
struct ListFlags {
  OutputFlags output{{"wide", "json", "yaml", "name"}, "Output format", " (default: a table)"};
  bool all_namespaces = false;  ///< -A/--all-namespaces
};

/// Binds -A/--all-namespaces to `desc` (list's, and status's alias).
void add_all_namespaces_flag(boost::program_options::options_description& desc, bool& all_namespaces);

/// The list command, in kubectl's order: complete(), validate(), run().
class ListOptions {
 public:
  ListOptions(ListFlags flags, std::string namespace_flag);
  /// Fixes the scope: all namespaces with -A (kubectl get: -A wins over -n), else -n, else `context_namespace`.
  void complete(const std::string& context_namespace);
  /// -n's syntax and the -o value; no I/O. Throws UsageError.
  void validate() const;
  /// Prints the deployments (cmd::read_listing), its warnings on stderr; "No resources found ..." on stderr when
  /// there is none, as kubectl get says it. Throws ApiError / TransportError.
  void run(kube::Client& client, Printer& printer);

 private:
  ListFlags flags_;
  std::string namespace_flag_;
  std::string context_namespace_;
  std::string namespace_;  ///< "" = all namespaces
};

/// The list command for the command table (cmd/command.h).
Command list_command();

}  // namespace mindie::cmd
