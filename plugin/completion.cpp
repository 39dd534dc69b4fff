#include "completion.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cmd/list_inputs.h"
#include "cmd/logs.h"
#include "cmd/storm_common.h"
#include "commands.h"
#include "kube/client.h"
#include "kube/curl_transport.h"
#include "kube/kubeconfig.h"

namespace mindie {

namespace po = boost::program_options;

namespace {

/// Cobra's ShellCompDirective bits (0 = the shell's default: file names).
enum : int { kCompError = 1, kCompNoFileComp = 4, kCompFilterDirs = 16 };

/// The flags `name` accepts ("" = none chosen yet: the global ones), bound as the entry point binds them (the one
/// command table): tests/e2e/plugin_test.cpp checks that completion offers every flag each command's --help lists.
/// Returns the invocation the flags are bound to (it must outlive `desc`'s use), or nullptr.
std::unique_ptr<cmd::Invocation> add_command_flags(const std::string& name, po::options_description& desc) {
  static cmd::GlobalFlags global;
  desc.add_options()("help,h", po::bool_switch(), "Help for this command");
  const cmd::Command* command = find_command(name);
  std::unique_ptr<cmd::Invocation> bound = command ? command->bind(desc) : nullptr;
  if (!command || command->global_flags) cmd::add_global_flags(desc, global);
  return bound;
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

/// The value typed for long flag `name` ("" when not given).
std::string typed_value(const std::map<std::string, std::string>& typed, const std::string& name) {
  const auto it = typed.find(name);
  return it == typed.end() ? std::string() : it->second;
}

/// What a completion reads from the cluster: `read` on a client of the connection flags typed so far, no retries, at
/// most 5 s per request (less with --request-timeout). Nothing on any failure. `read` is given the namespace the
/// command would use (-n, else the kubeconfig's).
std::vector<std::string> from_cluster(
    const std::map<std::string, std::string>& typed,
    const std::function<std::vector<std::string>(kube::Client&, const std::string& ns)>& read) {
  const auto get = [&typed](const std::string& k) { return typed_value(typed, k); };
  try {
    kube::KubeconfigFlags flags;
    flags.kubeconfig = get("kubeconfig");
    flags.context = get("context");
    flags.cluster = get("cluster");
    flags.user = get("user");
    flags.server = get("server");
    flags.token = get("token");
    flags.tls_server_name = get("tls-server-name");
    flags.insecure_skip_tls_verify = typed.count("insecure-skip-tls-verify") &&
                                     get("insecure-skip-tls-verify") != "false";
    if (typed.count("request-timeout")) flags.request_timeout = get("request-timeout");
    kube::RestConfig rest = kube::load_rest_config(flags);
    const std::chrono::milliseconds cap(5000);
    if (rest.request_timeout.count() == 0 || rest.request_timeout > cap) rest.request_timeout = cap;
    kube::CurlTransport transport(rest);
    kube::Client client(transport);
    return read(client, get("namespace").empty() ? rest.namespace_ : get("namespace"));
  } catch (const std::exception&) {
  }
  return {};
}

/// The values --role accepts for `command`: logs, the roles of the deployment's pods; scale --framework aibrix, the
/// roles of its StormService (--app, else those kubectl-mindie deployed). None elsewhere.
std::vector<std::string> role_values(const std::string& command, const std::map<std::string, std::string>& typed) {
  const auto get = [&typed](const std::string& k) { return typed_value(typed, k); };
  if (command == "logs") return from_cluster(typed, cmd::deployment_roles);
  if (command != "scale" || get("framework") != "aibrix") return {};
  return from_cluster(typed, [app = get("app")](kube::Client& client, const std::string& ns) {
    std::set<std::string> roles;
    for (const auto& s : cmd::storm::find_storms(client, ns, app))
      for (auto& r : cmd::storm::role_names(s)) roles.insert(std::move(r));
    return std::vector<std::string>(roles.begin(), roles.end());
  });
}

}  // namespace

int complete(std::vector<std::string> words, bool descriptions, std::ostream& out) {
  if (words.empty()) words.emplace_back();
  const std::string to_complete = words.back();
  words.pop_back();

  std::string command;
  auto desc = std::make_unique<po::options_description>();
  std::unique_ptr<cmd::Invocation> bound = add_command_flags("", *desc);
  std::map<std::string, std::string> typed;  // long flag name -> value, for the connection flags
  std::set<std::string> seen;
  std::string pending;  // a flag waiting for its value in the next word
  const auto takes_value = [](const po::option_description& o) { return o.semantic()->min_tokens() > 0; };
  // The option a word names ("--name", "--name=value", "-n", "-nvalue", "-n=value") and its inline value.
  const auto lookup = [&desc](const std::string& word, std::string& value,
                              bool& has_value) -> const po::option_description* {
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
      // The new flags first, then the old description, then the invocation its flags were bound to.
      auto next = std::make_unique<po::options_description>();
      auto next_bound = add_command_flags(command, *next);
      desc = std::move(next);
      bound = std::move(next_bound);
    }
  }

  std::vector<std::pair<std::string, std::string>> candidates;
  int directive = kCompNoFileComp;
  const auto complete_value = [&](const std::string& flag, const std::string& prefix) {
    std::vector<std::string> values;
    if (flag == "output") {
      if (const cmd::Command* c = find_command(command)) values = c->outputs;
    } else if (flag == "dry-run") {
      values = {"none", "server", "client"};
    } else if (flag == "for") {
      values = {"ready"};
    } else if (flag == "context" || flag == "cluster" || flag == "user") {
      values = kubeconfig_names(typed["kubeconfig"], flag == "context" ? "contexts" : flag + "s");
    } else if (flag == "namespace") {
      values = from_cluster(typed, [](kube::Client& client, const std::string&) {
        return cmd::deployment_namespaces(client);
      });
    } else if (flag == "framework") {
      values = {"mindie", "aibrix"};
    } else if (flag == "role") {
      values = role_values(command, typed);
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
    for (const auto& c : commands())
      if (c.name.rfind(to_complete, 0) == 0) candidates.emplace_back(c.name, c.summary);
  }
  for (const auto& [value, text] : candidates) {
    out << value;
    if (descriptions && !text.empty()) out << '\t' << text;
    out << '\n';
  }
  out << ':' << directive << '\n';
  return 0;
}

}  // namespace mindie
