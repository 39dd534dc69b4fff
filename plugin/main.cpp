// kubectl-mindie: deploy, scale, update-config and status of MindIE PyMotor services on Kubernetes.
// Entry point: picks the subcommand, binds its flags, runs complete() -> validate() -> run(), and maps errors to
// kubectl's output conventions (stderr, exit 1).
#include <malloc.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cmd/aibrix.h"
#include "cmd/common.h"
#include "cmd/delete.h"
#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "cmd/status.h"
#include "cmd/update_config.h"
#include "cmd/wait.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "mindie/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>

#include "build_info.h"
#include "kube/curl_transport.h"

namespace po = boost::program_options;
using namespace mindie;

namespace {

constexpr const char* kUsage =
    "kubectl mindie deploys, scales and watches MindIE PyMotor inference services on Ascend clusters.\n"
    "\n"
    "Usage:\n"
    "  kubectl mindie COMMAND [flags]\n"
    "\n"
    "Commands:\n"
    "  deploy         Validate user_config.json and deploy it (motor-config baseline, RBAC, the workload)\n"
    "  scale          Change prefill/decode (or PD-hybrid) instance counts of a running deployment\n"
    "  update-config  Refresh settings in the motor-config baseline (log levels, timeouts, north config)\n"
    "  status         Show roles, instances and pods, why pods are not ready, and drift from the baseline\n"
    "  wait           Wait until every role has its instances ready\n"
    "  delete         Delete what deploy created in a namespace (motor-config last)\n"
    "  version        Print the version\n"
    "\n"
    "Use \"kubectl mindie COMMAND --help\" for more information about a command.\n";

struct CommandHelp {
  const char* synopsis;
  const char* description;
  const char* examples;
};

const std::map<std::string, CommandHelp>& command_help() {
  static const std::map<std::string, CommandHelp> help = {
      {"deploy",
       {"kubectl mindie deploy (-f user_config.json [-e env.json] | --config-dir DIR) [flags]",
        "Validate the config completely, then write the motor-config ConfigMap (the baseline), the controller's\n"
        "RBAC and the workload by server-side apply: an InferServiceSet (deploy_mode infer_service_set, the\n"
        "default), Deployments and Services (multi_deployment) or one Deployment and Service (single_container).\n"
        "The namespace is motor_deploy_config.job_id. Before the first write it checks what infer-operator would\n"
        "refuse: a nodePort another Service holds, gang-scheduled roles without Volcano's PodGroup CRD, and on a\n"
        "redeploy a change of what live InstanceSets fixed at creation.",
        "  # Deploy from a folder holding user_config.json and env.json, with PyMotor's deployer folder\n"
        "  kubectl mindie deploy --config-dir ./conf --scripts-dir ./deployer\n\n"
        "  # Print the objects without contacting the cluster\n"
        "  kubectl mindie deploy -f user_config.json --dry-run=client -o yaml\n\n"
        "  # Deploy an AIBrix StormService and its Services (stormservice.yaml)\n"
        "  kubectl mindie deploy --framework aibrix -f stormservice.yaml\n"}},
      {"scale",
       {"kubectl mindie scale [-n NS] (--prefill N | --decode M | --hybrid H | -f user_config.json) [flags]",
        "Change instance counts only: JSON-patch spec.template.roles[i].replicas of the live InferServiceSet\n"
        "(guarded by test ops), then the baseline. If the baseline cannot be updated, the patch is undone.\n"
        "multi_deployment: creates or deletes engine Deployments (highest indices first). PD-hybrid deployments\n"
        "(hybrid_instances_num) scale their union role with --hybrid. single_container cannot be scaled.\n"
        "Scaling in a gang-scheduled role deletes the Volcano PodGroups of the removed instances.",
        "  # Three prefill instances, two decode instances\n"
        "  kubectl mindie scale -n mindie-demo --prefill 3 --decode 2\n\n"
        "  # Four instances of a PD-hybrid deployment's union role\n"
        "  kubectl mindie scale -n mindie-demo --hybrid 4\n\n"
        "  # Take the counts from an edited config (nothing else may differ)\n"
        "  kubectl mindie scale -f user_config.json\n\n"
        "  # Two decode replicas of the AIBrix StormService qwen3-pd\n"
        "  kubectl mindie scale --framework aibrix -n vllm-test --app qwen3-pd --role decode --replicas 2\n"}},
      {"update-config",
       {"kubectl mindie update-config (-f user_config.json [-e env.json] | --config-dir DIR) [--scripts-dir DIR] "
        "[flags]",
        "Refresh the motor-config ConfigMap. Only the deployer's whitelisted paths may change (log levels,\n"
        "observability, coordinator exception/timeout settings, north_config, north TLS files); instance counts\n"
        "and deploy_mode must equal the baseline. user_config.json and env.json are replaced; every other key is\n"
        "kept as it is in the cluster unless --scripts-dir is given: then the stored startup/probe scripts become\n"
        "the folder's files (with env.json's set_*_env functions, as deploy stores them) and scripts no longer in\n"
        "it are removed.",
        "  # Raise the coordinator's log level\n"
        "  kubectl mindie update-config -f user_config.json\n\n"
        "  # Also replace the stored scripts with PyMotor's examples/deployer folder\n"
        "  kubectl mindie update-config --config-dir ./conf --scripts-dir ./deployer\n"}},
      {"status",
       {"kubectl mindie status [-n NS] [-o wide|json|yaml] [-w]",
        "Show, per role, the baseline's instances, the live spec and what the operator has observed; the tree\n"
        "InferServiceSet -> InferService -> role -> instance -> pods (multi_deployment, single_container: role ->\n"
        "instance's Deployment -> pods) with ready containers, status, restarts and age; why pods are not ready\n"
        "(unschedulable, image pulls, crash loops, OOM kills, stuck terminating) with their latest warning events;\n"
        "and drift between the baseline and the live workload.",
        "  # The deployment in namespace mindie-demo\n"
        "  kubectl mindie status -n mindie-demo\n\n"
        "  # With nodes and NPUs per pod\n"
        "  kubectl mindie status -n mindie-demo -o wide\n\n"
        "  # Keep watching (redrawn on a terminal, one line per change in a pipe)\n"
        "  kubectl mindie status -n mindie-demo --watch\n\n"
        "  # Machine-readable\n"
        "  kubectl mindie status -n mindie-demo -o json\n\n"
        "  # An AIBrix StormService: roles, pod groups, pods, restarts and recreated pods\n"
        "  kubectl mindie status --framework aibrix -n vllm-test --app qwen3-pd\n"}},
      {"wait",
       {"kubectl mindie wait [-n NS] --for=ready [--timeout 10m]",
        "Wait until every role has its instances ready and the operator has observed the latest change. Exits 0\n"
        "once ready; on timeout exits 1 naming every pod that is not ready and why.",
        "  # Wait up to 15 minutes for the deployment in mindie-demo\n"
        "  kubectl mindie wait -n mindie-demo --for=ready --timeout 15m\n"}},
      {"delete",
       {"kubectl mindie delete -n NS [--wait] [--timeout 10m] [--dry-run=server|client] [flags]",
        "Delete what deploy created in namespace NS: the workload (found by the names recorded in motor-config and\n"
        "by the label app.kubernetes.io/managed-by=kubectl-mindie), the controller's ServiceAccount, its cluster\n"
        "RBAC when it is this deployment's own, and the motor-config ConfigMap last, so an interrupted delete can\n"
        "be run again. Objects already gone are skipped.",
        "  # Delete the deployment in mindie-demo\n"
        "  kubectl mindie delete -n mindie-demo\n\n"
        "  # Delete and wait until its pods are gone\n"
        "  kubectl mindie delete -n mindie-demo --wait --timeout 5m\n\n"
        "  # Show what would be deleted\n"
        "  kubectl mindie delete -n mindie-demo --dry-run=client\n\n"
        "  # Delete an AIBrix StormService and its Services, and wait for its pods to go\n"
        "  kubectl mindie delete --framework aibrix -n vllm-test --app qwen3-pd --wait\n"}},
      {"version",
       {"kubectl mindie version [-o json|yaml]",
        "Print the version of kubectl-mindie, the git commit it was built from (\"unknown\" when built outside a\n"
        "git checkout), whether the tree had uncommitted changes, the build date (UTC) and the platform.",
        "  # Version, commit and build date\n"
        "  kubectl mindie version\n\n"
        "  # The same as JSON\n"
        "  kubectl mindie version -o json\n"}},
  };
  return help;
}

/// kubectl accepts "-n=ns" and "-v=8"; Boost reads a short option's value only as "-nns" or "-n ns".
std::vector<std::string> normalize_args(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 3 && a[0] == '-' && a[1] != '-' && a[2] == '=') {
      out.push_back(a.substr(0, 2));
      out.push_back(a.substr(3));
    } else {
      out.push_back(a);
    }
  }
  return out;
}

/// Index of the subcommand: the first argument that is neither a flag nor the value of a global flag.
std::ptrdiff_t find_command(const std::vector<std::string>& args) {
  static const std::set<std::string> takes_value = {
      "--kubeconfig", "--context", "--cluster", "--user", "-n", "--namespace", "-s", "--server", "--token",
      "--tls-server-name", "--request-timeout", "-v", "--v"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].empty() || args[i][0] != '-') return static_cast<std::ptrdiff_t>(i);
    if (takes_value.count(args[i])) ++i;
  }
  return -1;
}

void print_help(const std::string& name, const po::options_description& desc) {
  const auto& h = command_help().at(name);
  std::cout << h.description << "\n\nExamples:\n" << h.examples << "\nOptions:\n" << desc << "\nUsage:\n  "
            << h.synopsis << "\n";
}

/// Prints `e` the way kubectl does and returns the exit code.
int report(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const kube::ApiError& e) {
    std::cerr << e.render() << '\n';
  } catch (const cmd::PartialFailure& e) {
    report(e.cause());
    std::cerr << e.what() << '\n';
  } catch (const kube::TransportError& e) {
    std::cerr << "error: " << e.what() << '\n';  // the message already says "Unable to connect to the server"
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
  }
  return 1;
}

// ---- version ----

const char* build_platform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

void add_version_flags(po::options_description& desc, std::string& output) {
  desc.add_options()("output,o", po::value(&output), "Output format: json or yaml (default: text)");
}

/// `kubectl mindie version [-o json|yaml]` (and `--version`).
int run_version(const std::vector<std::string>& args) {
  std::string output;
  bool help = false;
  po::options_description desc;
  desc.add_options()("help,h", po::bool_switch(&help), "Help for this command");
  add_version_flags(desc, output);
  try {
    po::variables_map vm;
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).positional({}).run(), vm);
    po::notify(vm);
    if (!output.empty() && output != "json" && output != "yaml")
      throw po::error("--output must be 'yaml' or 'json'");
  } catch (const po::error& e) {
    std::cerr << "error: " << e.what() << "\nSee 'kubectl mindie version --help' for usage.\n";
    return 1;
  }
  if (help) {
    print_help("version", desc);
    return 0;
  }
  const std::vector<std::pair<const char*, std::string>> fields = {
      {"version", MINDIE_VERSION},
      {"gitCommit", build::git_commit()},
      {"gitTreeState", build::git_tree_state()},
      {"buildDate", build::build_date()},
      {"compiler", std::string("gcc ") + __VERSION__},
      {"platform", build_platform()}};
  if (output == "json") {
    boost::json::object o;
    for (const auto& [k, v] : fields) o[k] = v;
    std::cout << boost::json::serialize(o) << '\n';
  } else if (output == "yaml") {
    for (const auto& [k, v] : fields) std::cout << k << ": " << boost::json::serialize(boost::json::value(v)) << '\n';
  } else {
    std::cout << "kubectl-mindie version " << MINDIE_VERSION << '\n'
              << "git commit: " << build::git_commit() << " (" << build::git_tree_state() << ")\n"
              << "build date: " << build::build_date() << '\n'
              << "platform:   " << build_platform() << '\n';
  }
  return 0;
}

// ---- shell completion: Cobra's __complete protocol, which kubectl (>= 1.26) uses for plugins ----

/// Cobra's ShellCompDirective bits (0 = the shell's default: file names).
enum : int { kCompError = 1, kCompNoFileComp = 4, kCompFilterDirs = 16 };

/// The flags `name` accepts ("" = none chosen yet: the global ones), bound as run() binds them. Keep it in step with
/// run(): tests/e2e/plugin_test.cpp checks that completion offers every flag each command's --help lists.
void add_command_flags(const std::string& name, po::options_description& desc) {
  static cmd::GlobalFlags global;
  static cmd::DeployFlags deploy;
  static cmd::ScaleFlags scale;
  static cmd::UpdateConfigFlags update;
  static cmd::StatusFlags status;
  static cmd::WaitFlags wait;
  static cmd::DeleteFlags del;
  static std::string version_output;
  desc.add_options()("help,h", po::bool_switch(), "Help for this command");
  if (name == "version") return add_version_flags(desc, version_output);
  if (name == "deploy") cmd::add_deploy_flags(desc, deploy);
  if (name == "scale") cmd::add_scale_flags(desc, scale);
  if (name == "update-config") cmd::add_update_config_flags(desc, update);
  if (name == "status") cmd::add_status_flags(desc, status);
  if (name == "wait") cmd::add_wait_flags(desc, wait);
  if (name == "delete") cmd::add_delete_flags(desc, del);
  static cmd::FrameworkFlags framework;  // --framework (and --app, --role, --replicas): cmd/aibrix.h
  cmd::add_framework_flags(desc, framework, name);
  cmd::add_global_flags(desc, global);
}

/// The commands and their one-line descriptions, from kUsage's "Commands:" block (the one list of commands).
std::vector<std::pair<std::string, std::string>> listed_commands() {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string usage = kUsage;
  std::size_t at = usage.find("Commands:\n");
  if (at == std::string::npos) return out;
  at += 10;
  while (at < usage.size() && usage.compare(at, 2, "  ") == 0) {
    const std::size_t end = usage.find('\n', at);
    const std::string line = usage.substr(at + 2, end - at - 2);
    const std::size_t gap = line.find(' ');
    const std::size_t text = line.find_first_not_of(' ', gap);
    out.emplace_back(line.substr(0, gap), text == std::string::npos ? "" : line.substr(text));
    at = end + 1;
  }
  return out;
}

/// Names in section `section` ("contexts", "clusters", "users") of the kubeconfig files kubectl would read:
/// --kubeconfig, else $KUBECONFIG's files, else ~/.kube/config. Unreadable files are skipped.
std::vector<std::string> kubeconfig_names(const std::string& flag_file, const std::string& section) {
  std::vector<std::string> files;
  if (!flag_file.empty()) {
    files.push_back(flag_file);
  } else if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string list = env;
    for (std::size_t start = 0;;) {
      const std::size_t colon = list.find(':', start);
      const std::string f = list.substr(start, colon - start);
      if (!f.empty()) files.push_back(f);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    files.push_back(std::string(home) + "/.kube/config");
  }
  std::vector<std::string> names;
  for (const auto& f : files) {
    try {
      const YAML::Node doc = YAML::LoadFile(f);
      const YAML::Node items = doc[section];
      if (!items || !items.IsSequence()) continue;
      for (const auto& item : items) {
        if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) continue;
        const std::string name = item["name"].Scalar();
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    } catch (const std::exception&) {
    }
  }
  return names;
}

/// Namespaces holding a motor-config baseline: one LIST of ConfigMaps across namespaces with the field selector
/// metadata.name=motor-config, no retries, at most 5 s (less with --request-timeout). Nothing on any failure.
std::vector<std::string> baseline_namespaces(const std::map<std::string, std::string>& typed) {
  const auto get = [&typed](const std::string& k) {
    const auto it = typed.find(k);
    return it == typed.end() ? std::string() : it->second;
  };
  std::vector<std::string> out;
  try {
    kube::KubeconfigFlags flags;
    flags.kubeconfig = get("kubeconfig");
    flags.context = get("context");
    flags.cluster = get("cluster");
    flags.user = get("user");
    flags.server = get("server");
    flags.token = get("token");
    flags.tls_server_name = get("tls-server-name");
    flags.insecure_skip_tls_verify = typed.count("insecure-skip-tls-verify") && get("insecure-skip-tls-verify") != "false";
    if (typed.count("request-timeout")) flags.request_timeout = get("request-timeout");
    kube::RestConfig rest = kube::load_rest_config(flags);
    const std::chrono::milliseconds cap(5000);
    if (rest.request_timeout.count() == 0 || rest.request_timeout > cap) rest.request_timeout = cap;
    kube::CurlTransport transport(rest);
    kube::Client client(transport);
    const auto list = client.list(kube::gvr::kConfigMaps, "", "", 500, "metadata.name=motor-config");
    if (const auto* items = list.if_contains("items"); items && items->is_array()) {
      for (const auto& item : items->as_array()) {
        const auto* md = item.is_object() ? item.as_object().if_contains("metadata") : nullptr;
        const auto* ns = md && md->is_object() ? md->as_object().if_contains("namespace") : nullptr;
        if (ns && ns->is_string()) out.emplace_back(ns->as_string());
      }
    }
  } catch (const std::exception&) {
  }
  return out;
}

/// Prints the completions of the last of `words` (the words typed after `kubectl mindie`; the last one is being
/// typed, possibly empty): candidates one per line ("candidate<TAB>description" when `descriptions`), then
/// ":<directive>". Returns 0.
int complete(std::vector<std::string> words, bool descriptions, std::ostream& out) {
  if (words.empty()) words.emplace_back();
  const std::string to_complete = words.back();
  words.pop_back();

  std::string command;
  auto desc = std::make_unique<po::options_description>();
  add_command_flags("", *desc);
  std::map<std::string, std::string> typed;  // long flag name -> value, for the connection flags
  std::set<std::string> seen;
  std::string pending;  // a flag waiting for its value in the next word
  const auto takes_value = [](const po::option_description& o) { return o.semantic()->min_tokens() > 0; };
  // The option a word names ("--name", "--name=value", "-n", "-nvalue", "-n=value") and its inline value.
  const auto lookup = [&desc](const std::string& word, std::string& value, bool& has_value)
      -> const po::option_description* {
    has_value = false;
    if (word.rfind("--", 0) == 0) {
      const std::size_t eq = word.find('=');
      if (eq != std::string::npos) {
        value = word.substr(eq + 1);
        has_value = true;
      }
      return desc->find_nothrow(word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2), false);
    }
    if (word.size() > 2) {
      value = word.substr(word[2] == '=' ? 3 : 2);
      has_value = true;
    }
    return desc->find_nothrow(word.substr(0, 2), false);
  };
  for (const auto& w : words) {
    if (!pending.empty()) {
      typed[pending] = w;
      pending.clear();
      continue;
    }
    if (w.size() > 1 && w[0] == '-') {
      std::string value;
      bool has_value = false;
      const auto* opt = lookup(w, value, has_value);
      if (!opt) continue;
      seen.insert(opt->long_name());
      if (has_value) {
        typed[opt->long_name()] = value;
      } else if (takes_value(*opt)) {
        pending = opt->long_name();
      } else {
        typed[opt->long_name()] = "true";
      }
      continue;
    }
    if (command.empty() && !w.empty()) {
      command = w;
      desc = std::make_unique<po::options_description>();
      add_command_flags(command, *desc);
    }
  }

  std::vector<std::pair<std::string, std::string>> candidates;
  int directive = kCompNoFileComp;
  const auto complete_value = [&](const std::string& flag, const std::string& prefix) {
    std::vector<std::string> values;
    if (flag == "output") {
      values = command == "status"    ? std::vector<std::string>{"wide", "json", "yaml"}
               : command == "version" ? std::vector<std::string>{"json", "yaml"}
                                      : std::vector<std::string>{"json", "yaml", "name"};
    } else if (flag == "dry-run") {
      values = {"none", "server", "client"};
    } else if (flag == "for") {
      values = {"ready"};
    } else if (flag == "context" || flag == "cluster" || flag == "user") {
      values = kubeconfig_names(typed["kubeconfig"], flag == "context" ? "contexts" : flag + "s");
    } else if (flag == "namespace") {
      values = baseline_namespaces(typed);
    } else if (flag == "kubeconfig" || flag == "filename" || flag == "env-file" || flag == "overrides") {
      directive = 0;  // file names
    } else if (flag == "config-dir" || flag == "scripts-dir" || flag == "output-dir") {
      directive = kCompFilterDirs;
    }
    const std::string partial = to_complete.substr(prefix.size());
    for (const auto& v : values)
      if (v.rfind(partial, 0) == 0) candidates.emplace_back(prefix + v, "");
  };

  if (!pending.empty()) {
    complete_value(pending, "");
  } else if (to_complete.rfind("--", 0) == 0 && to_complete.find('=') != std::string::npos) {
    std::string value;
    bool has_value = false;
    const auto* opt = lookup(to_complete, value, has_value);
    // "--dry-run=" too: a flag with an implicit value takes one only in this form.
    if (opt && opt->semantic()->max_tokens() > 0)
      complete_value(opt->long_name(), to_complete.substr(0, to_complete.find('=') + 1));
  } else if (!to_complete.empty() && to_complete[0] == '-') {
    const bool with_short = to_complete.rfind("--", 0) != 0;
    for (const auto& opt : desc->options()) {
      if (seen.count(opt->long_name()) && opt->long_name() != "help") continue;
      std::string text = opt->description();
      text = text.substr(0, text.find('\n'));
      const std::string long_form = "--" + opt->long_name();
      if (long_form.rfind(to_complete, 0) == 0) candidates.emplace_back(long_form, text);
      const std::string short_form = opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
      if (with_short && short_form.size() == 2 && short_form[0] == '-' && short_form.rfind(to_complete, 0) == 0)
        candidates.emplace_back(short_form, text);
    }
  } else if (command.empty()) {
    for (const auto& [name, text] : listed_commands())
      if (name.rfind(to_complete, 0) == 0) candidates.emplace_back(name, text);
  }
  for (const auto& [value, text] : candidates) {
    out << value;
    if (descriptions && !text.empty()) out << '\t' << text;
    out << '\n';
  }
  out << ':' << directive << '\n';
  return 0;
}

int run(const std::vector<std::string>& all_args) {
  const std::ptrdiff_t at = find_command(all_args);
  if (at < 0) {
    if (!all_args.empty() && all_args[0] == "--version") return run_version({});
    const bool asked = all_args.empty() || all_args[0] == "--help" || all_args[0] == "-h";
    if (!asked) std::cerr << "error: a command is required\n";
    (asked ? std::cout : std::cerr) << kUsage;
    return asked ? 0 : 1;
  }
  const std::string name = all_args[static_cast<std::size_t>(at)];
  std::vector<std::string> args = all_args;
  args.erase(args.begin() + at);

  if (name == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (name == "version") return run_version(args);
  if (!command_help().count(name)) {
    std::cerr << "error: unknown command \"" << name << "\" for \"kubectl mindie\"\n"
              << "Run 'kubectl mindie --help' for usage.\n";
    return 1;
  }

  cmd::GlobalFlags global;
  bool help = false;
  po::options_description desc;
  desc.add_options()("help,h", po::bool_switch(&help), "Help for this command");

  cmd::DeployFlags deploy_flags;
  cmd::ScaleFlags scale_flags;
  cmd::UpdateConfigFlags update_flags;
  cmd::StatusFlags status_flags;
  cmd::WaitFlags wait_flags;
  cmd::DeleteFlags delete_flags;
  if (name == "deploy") cmd::add_deploy_flags(desc, deploy_flags);
  if (name == "scale") cmd::add_scale_flags(desc, scale_flags);
  if (name == "update-config") cmd::add_update_config_flags(desc, update_flags);
  if (name == "status") cmd::add_status_flags(desc, status_flags);
  if (name == "wait") cmd::add_wait_flags(desc, wait_flags);
  if (name == "delete") cmd::add_delete_flags(desc, delete_flags);
  cmd::FrameworkFlags framework_flags;  // --framework aibrix: the AIBrix StormService path (cmd/aibrix.h)
  cmd::add_framework_flags(desc, framework_flags, name);
  po::options_description globals("Global flags");
  cmd::add_global_flags(globals, global);
  desc.add(globals);

  try {
    po::variables_map vm;
    // kubectl accepts no abbreviated flags: "--pre 4" must not silently mean --prefill. An empty positional
    // description makes any stray argument an error instead of being ignored.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(desc).style(style).positional({}).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "error: " << e.what() << "\nSee 'kubectl mindie " << name << " --help' for usage.\n";
    return 1;
  }
  if (help) {
    print_help(name, desc);
    return 0;
  }

  const std::string& ns_flag = global.kube.namespace_;
  const std::string output = name == "deploy" ? deploy_flags.output
                             : name == "scale" ? scale_flags.output
                             : name == "status" ? status_flags.output
                             : name == "delete" ? delete_flags.output
                                                : std::string();
  cmd::Printer printer(std::cout, std::cerr, output);
  // --wait after deploy/scale: the changes are printed first, progress goes to a terminal's stderr.
  const auto wait_after = [&](cmd::Session& session, const cmd::WaitAfterFlags& flags, const std::string& ns) {
    if (!flags.wait) return;
    printer.flush();
    std::cout << std::flush;  // what changed is visible before the wait begins
    std::ostream* progress = isatty(STDERR_FILENO) ? &std::cerr : nullptr;
    const std::string subject = cmd::wait_until_ready(session.client(), [&session] { return session.new_transport(); },
                                                  ns, cmd::parse_duration(flags.timeout, "--timeout"), progress);
    if (output.empty()) std::cout << subject << " ready\n";
  };
  try {
    if (cmd::use_aibrix(framework_flags)) {
      cmd::run_aibrix(name, framework_flags, deploy_flags, scale_flags, status_flags, delete_flags, global, printer);
    } else if (name == "deploy") {
      cmd::DeployOptions o(deploy_flags, ns_flag);
      o.validate();
      o.complete();
      if (!o.needs_server()) {
        cmd::OfflineTransport offline;
        kube::Client client(offline);
        o.run(client, printer);
      } else {
        cmd::Session session(global, std::cerr);
        o.run(session.client(), printer);
        wait_after(session, deploy_flags.wait, o.target_namespace());
      }
    } else if (name == "scale") {
      cmd::ScaleOptions o(scale_flags, ns_flag);
      o.validate();
      cmd::Session session(global, std::cerr);
      o.complete(session.rest_config().namespace_);
      o.run(session.client(), printer);
      wait_after(session, scale_flags.wait, o.target_namespace());
    } else if (name == "update-config") {
      cmd::UpdateConfigOptions o(update_flags, ns_flag);
      o.validate();
      o.complete();
      cmd::Session session(global, std::cerr);
      o.run(session.client(), printer);
    } else if (name == "status") {
      cmd::StatusOptions o(status_flags, ns_flag);
      o.validate();
      cmd::Session session(global, std::cerr);
      o.complete(session.rest_config().namespace_);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
    } else if (name == "delete") {
      cmd::DeleteOptions o(delete_flags, ns_flag);
      o.validate();
      o.complete();
      cmd::Session session(global, std::cerr);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
    } else if (name == "wait") {
      cmd::WaitOptions o(wait_flags, ns_flag);
      o.validate();
      cmd::Session session(global, std::cerr);
      o.complete(session.rest_config().namespace_);
      o.run(session.client(), printer, [&session] { return session.new_transport(); });
    }
    printer.flush();
  } catch (...) {
    // What succeeded before the failure is still shown, as kubectl does.
    try {
      printer.flush();
    } catch (const std::exception&) {  // the original error matters more than a failed print
    }
    return report(std::current_exception());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // status on a large fleet parses megabytes of list pages into arenas freed page by page; glibc would hand each
  // large block back to the kernel and fault fresh pages in for the next one. Keeping freed memory for reuse cut
  // status's CPU time by about a fifth (BENCHMARKS.md); this process is short-lived or (--watch) bounded by a page.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // Completion: `kubectl-mindie __complete WORDS...` (Cobra's hidden command), or this binary run under the name
  // kubectl_complete-mindie (a symlink); the words are taken as typed.
  const std::string self = argc > 0 ? argv[0] : "";
  const bool as_completer = self.substr(self.rfind('/') + 1) == "kubectl_complete-mindie";
  const std::string first = argc > 1 ? argv[1] : "";
  if (as_completer || first == "__complete" || first == "__completeNoDesc") {
    const int skip = as_completer ? 1 : 2;
    return complete(std::vector<std::string>(argv + skip, argv + argc), first != "__completeNoDesc", std::cout);
  }
  try {
    return run(normalize_args(argc, argv));
  } catch (...) {
    return report(std::current_exception());
  }
}
