#include "version.h"

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "build_info.h"
#include "cmd/output_flags.h"

namespace mindie {

namespace po = boost::program_options;
using cmd::Command;
using cmd::Invocation;

namespace {

const char* build_platform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

/// version's -o, as kubectl version's.
cmd::OutputFlags version_output() {
  return {{"json", "yaml"}, "Output format", " (default: text)", "--output must be 'yaml' or 'json'"};
}

class VersionInvocation : public Invocation {
 public:
  explicit VersionInvocation(po::options_description& desc) { output_.bind(desc); }
  std::string output() const override { return output_.format(); }
  void run(const cmd::GlobalFlags&, cmd::Printer& printer) override {
    output_.validate();
    boost::json::object fields{{"version", MINDIE_VERSION},
                               {"gitCommit", build::git_commit()},
                               {"gitTreeState", build::git_tree_state()},
                               {"buildDate", build::build_date()},
                               {"compiler", std::string("gcc ") + __VERSION__},
                               {"platform", build_platform()}};
    printer.view({}, std::move(fields), [](bool) {
      return std::string("kubectl-mindie version ") + MINDIE_VERSION + "\ngit commit: " + build::git_commit() + " (" +
             build::git_tree_state() + ")\nbuild date: " + build::build_date() + "\nplatform:   " + build_platform() +
             "\n";
    });
  }

 private:
  /// kubectl version's own refusal of other values.
  cmd::OutputFlags output_ = version_output();
};

}  // namespace

Command version_command() {
  return {"version",
          "Print the version",
          "kubectl mindie version [-o json|yaml]",
          "Print the version of kubectl-mindie, the git commit it was built from (\"unknown\" when built outside a\n"
          "git checkout), whether the tree had uncommitted changes, the build date (UTC) and the platform.",
          "  # Version, commit and build date\n"
          "  kubectl mindie version\n\n"
          "  # The same as JSON\n"
          "  kubectl mindie version -o json\n",
          version_output().formats(),
          false,
          [](boost::program_options::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<VersionInvocation>(desc);
          },
          {{"0", "the version was printed"}, {"1", "a bad flag"}}};
}

}  // namespace mindie
