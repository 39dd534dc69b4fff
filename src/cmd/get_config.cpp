#include "cmd/get_config.h"

#include <filesystem>
#include <iostream>

#include "cmd/revisions.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace fs = std::filesystem;

GetConfigOptions::GetConfigOptions(GetConfigFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void GetConfigOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void GetConfigOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  if (flags_.revision && *flags_.revision < 1)
    throw UsageError("--revision " + std::to_string(*flags_.revision) + " is out of range: revisions start at 1");
}

void GetConfigOptions::run(kube::Client& client, Printer& printer) const {
  std::string user_config;
  std::optional<std::string> env;
  if (flags_.revision) {
    const auto all = existing_revisions(client, namespace_);
    const revision::Revision& r = find_revision(all, *flags_.revision, namespace_);
    user_config = r.content.user_config;
    env = r.content.env;
  } else {
    const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, namespace_, baseline::kConfigMapName);
    if (!cm)
      throw CommandError("no deployment found in namespace " + namespace_ + " (configmap/" + baseline::kConfigMapName +
                         " not found): run kubectl mindie deploy first");
    const baseline::Baseline stored = baseline::read_baseline(*cm, namespace_);
    if (!stored.raw) throw CommandError(stored.problem);
    user_config = *stored.raw;
    env = stored.env_raw;
  }
  if (flags_.output_dir.empty()) {
    printer.out() << user_config;  // byte for byte: what deploy stored
    return;
  }
  std::error_code ec;
  fs::create_directories(flags_.output_dir, ec);
  if (ec) throw CommandError("cannot create --output-dir " + flags_.output_dir + ": " + ec.message());
  const auto write = [&](const char* name, const std::string& text) {
    const std::string path = (fs::path(flags_.output_dir) / name).string();
    // A file planted as a symbolic link is refused, never written through (as deploy --output-dir).
    write_file_no_follow(path, text);
    printer.out() << path << '\n';
  };
  write(baseline::kBaselineKey, user_config);
  if (env) write(baseline::kEnvKey, *env);
}

namespace {

class GetConfigInvocation : public Invocation {
 public:
  explicit GetConfigInvocation(po::options_description& desc) {
    desc.add_options()("revision", po::value<std::int64_t>()->notifier([this](std::int64_t v) { flags_.revision = v; }),
                       "A past revision's files (kubectl mindie history lists them)")(
        "output-dir,o", po::value(&flags_.output_dir),
        "Write user_config.json and env.json into this folder instead of printing user_config.json");
  }
  void run(const GlobalFlags& global, Printer& printer) override {
    Session session(global, std::cerr);
    GetConfigOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer);
  }

 private:
  GetConfigFlags flags_;
};

}  // namespace

Command get_config_command() {
  return {"get-config",
          "Print or write the deployed (or a past revision's) user_config.json and env.json",
          "kubectl mindie get-config [-n NS] [--revision N] [-o DIR]",
          "Print the user_config.json the motor-config baseline holds, byte for byte, or with -o DIR write it and\n"
          "env.json (when stored) into DIR, so that the next change starts from what is deployed. --revision N takes\n"
          "them from revision N of the baseline's history (kubectl mindie history). A file that is a symbolic link\n"
          "in DIR is refused, never written through.",
          "  # Print the deployed user_config.json\n"
          "  kubectl mindie get-config -n mindie-demo\n\n"
          "  # Write revision 1's files into ./conf, edit them, deploy them\n"
          "  kubectl mindie get-config -n mindie-demo --revision 1 -o ./conf\n",
          {},
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<GetConfigInvocation>(desc);
          },
          {{"0", "the files were printed or written"},
           {"1",
            "no deployment in the namespace, an unknown revision (nothing written), a file that cannot be "
            "written, flags, API and connection errors"}}};
}

}  // namespace mindie::cmd
