// kubeconfig loading: kubectl's file precedence and merge rules, field resolution and error reporting.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kube/kubeconfig.h"
#include "scratch_files.h"

namespace fs = std::filesystem;
using mindie::kube::KubeconfigError;
using mindie::kube::KubeconfigFlags;
using mindie::kube::load_rest_config;
using mindie::kube::parse_kubeconfig;
using mindie::kube::RestConfig;
using mindie::test::ScopedEnv;
using mindie::test::TempDir;

namespace {

// The KubeconfigError message raised by `f`, or "" when it raised nothing (which fails the calling CHECK).
template <typename F>
std::string kubeconfig_error(F&& f) {
  try {
    f();
  } catch (const KubeconfigError& e) {
    return e.what();
  }
  return "";
}

// base64 of "CA PEM\n", "CERT PEM\n", "KEY PEM\n".
const char* kConfigWithData = R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: Q0EgUEVNCg==
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user}
- name: other
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
users:
- name: dev-user
  user:
    client-certificate-data: Q0VSVCBQRU0K
    client-key-data: S0VZIFBFTQo=
    token: abc123
)";

}  // namespace

TEST_CASE("kubeconfig: *-data fields are base64-decoded and the current context is used") {
  const RestConfig c = parse_kubeconfig(kConfigWithData, "test-config", "", KubeconfigFlags{});
  CHECK(c.context == "dev");
  CHECK(c.server == "https://10.0.0.1:6443");  // trailing slash dropped
  CHECK(c.ca_pem == "CA PEM\n");
  CHECK(c.client_cert_pem == "CERT PEM\n");
  CHECK(c.client_key_pem == "KEY PEM\n");
  CHECK(c.token == "abc123");
  CHECK_FALSE(c.insecure_skip_tls_verify);
  CHECK(c.namespace_ == "default");
  CHECK_FALSE(c.namespace_from_flag);
}

TEST_CASE("kubeconfig: namespace comes from -n, else the context, else default") {
  KubeconfigFlags flags;
  flags.context = "other";
  CHECK(parse_kubeconfig(kConfigWithData, "cfg", "", flags).namespace_ == "team-a");
  flags.namespace_ = "from-flag";
  const RestConfig c = parse_kubeconfig(kConfigWithData, "cfg", "", flags);
  CHECK(c.namespace_ == "from-flag");
  CHECK(c.namespace_from_flag);
  CHECK(c.context == "other");
  flags = {};
  CHECK(parse_kubeconfig(kConfigWithData, "cfg", "", flags).namespace_ == "default");
}

TEST_CASE("kubeconfig: request timeout is carried over from the flags") {
  KubeconfigFlags flags;
  flags.request_timeout = "17";
  CHECK(parse_kubeconfig(kConfigWithData, "cfg", "", flags).request_timeout == std::chrono::seconds(17));
}

TEST_CASE("kubeconfig: --request-timeout takes seconds or a Go duration, like clientcmd.ParseTimeout") {
  using namespace std::chrono_literals;
  using mindie::kube::parse_request_timeout;
  CHECK(parse_request_timeout("0") == 0ms);
  CHECK(parse_request_timeout("30") == 30s);
  CHECK(parse_request_timeout("30s") == 30s);
  CHECK(parse_request_timeout("1m") == 60s);
  CHECK(parse_request_timeout("1m30s") == 90s);
  CHECK(parse_request_timeout("1.5h") == 5400s);
  CHECK(parse_request_timeout("500ms") == 500ms);
  CHECK(parse_request_timeout("10us") == 1ms);  // below a millisecond rounds up, never to "no limit"
  for (const char* bad : {"", "abc", "-1s", "10x", "1.2.3s", "s", "-5"}) {
    const std::string msg = kubeconfig_error([&] { parse_request_timeout(bad); });
    CHECK_MESSAGE(msg.find("Timeout must be a single integer in seconds") != std::string::npos, bad);
  }
}

TEST_CASE("kubeconfig: file fields resolve relative paths against the kubeconfig's directory") {
  TempDir dir;
  dir.write("conf/pki/ca.crt", "CA FROM FILE\n");
  dir.write("conf/pki/client.crt", "CERT FROM FILE\n");
  dir.write("conf/pki/client.key", "KEY FROM FILE\n");
  dir.write("conf/token", "  file-token\n");
  const std::string cfg = dir.write("conf/config", R"(
current-context: c
clusters:
- name: k
  cluster: {server: https://k:6443, certificate-authority: pki/ca.crt}
contexts:
- name: c
  context: {cluster: k, user: u}
users:
- name: u
  user: {client-certificate: pki/client.crt, client-key: pki/client.key, tokenFile: token}
)");
  KubeconfigFlags flags;
  flags.kubeconfig = cfg;
  const RestConfig c = load_rest_config(flags);
  CHECK(c.ca_pem == "CA FROM FILE\n");
  CHECK(c.client_cert_pem == "CERT FROM FILE\n");
  CHECK(c.client_key_pem == "KEY FROM FILE\n");
  CHECK(c.token == "file-token");  // surrounding whitespace trimmed, as client-go does
}

TEST_CASE("kubeconfig: *-data wins over the file field and token over tokenFile") {
  const RestConfig c = parse_kubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k, certificate-authority-data: Q0EgUEVNCg==,
                               certificate-authority: /nonexistent/ca.crt}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {token: t1, tokenFile: /nonexistent/token}}]
)",
                                        "cfg", "", {});
  CHECK(c.ca_pem == "CA PEM\n");
  CHECK(c.token == "t1");
}

TEST_CASE("kubeconfig: a missing referenced file is an error naming it") {
  TempDir dir;
  const std::string cfg = dir.write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k, certificate-authority: missing-ca.crt}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  KubeconfigFlags flags;
  flags.kubeconfig = cfg;
  const std::string msg = kubeconfig_error([&] { load_rest_config(flags); });
  CHECK(msg.find((dir.path / "missing-ca.crt").string()) != std::string::npos);
  CHECK(msg.find("certificate-authority") != std::string::npos);
}

TEST_CASE("kubeconfig: --kubeconfig naming a missing file is an error naming it") {
  TempDir dir;
  ScopedEnv kubeconfig_env("KUBECONFIG", std::nullopt);
  KubeconfigFlags flags;
  flags.kubeconfig = (dir.path / "nope.yaml").string();
  const std::string msg = kubeconfig_error([&] { load_rest_config(flags); });
  CHECK(msg.find(flags.kubeconfig) != std::string::npos);
}

TEST_CASE("kubeconfig: $KUBECONFIG merges files, first definition and first current-context win") {
  TempDir dir;
  // a.yaml defines cluster "shared" and user "u" but no current-context.
  const std::string a = dir.write("a/a.yaml", R"(
clusters:
- name: shared
  cluster: {server: https://from-a:6443, certificate-authority: ca.crt}
users:
- name: u
  user: {token: token-a}
)");
  dir.write("a/ca.crt", "CA OF A\n");
  // b.yaml redefines both (ignored), defines the context, and sets the current-context.
  const std::string b = dir.write("b/b.yaml", R"(
current-context: ctx-b
clusters:
- name: shared
  cluster: {server: https://from-b:6443}
contexts:
- name: ctx-b
  context: {cluster: shared, user: u, namespace: ns-b}
users:
- name: u
  user: {token: token-b}
)");
  // c.yaml's current-context comes too late to matter.
  const std::string c = dir.write("c.yaml",
                                  "current-context: ctx-c\ncontexts: [{name: ctx-c, context: {cluster: shared}}]\n");
  const std::string missing = (dir.path / "missing.yaml").string();
  ScopedEnv kubeconfig_env("KUBECONFIG", missing + ":" + a + "::" + b + ":" + c);
  const RestConfig cfg = load_rest_config({});
  CHECK(cfg.context == "ctx-b");
  CHECK(cfg.server == "https://from-a:6443");
  CHECK(cfg.ca_pem == "CA OF A\n");  // resolved against a.yaml's directory, not b.yaml's
  CHECK(cfg.token == "token-a");
  CHECK(cfg.namespace_ == "ns-b");

  KubeconfigFlags flags;
  flags.context = "ctx-c";  // a context from a later file is still reachable by name
  CHECK(load_rest_config(flags).context == "ctx-c");
}

TEST_CASE("kubeconfig: $KUBECONFIG listing only missing files is an error") {
  TempDir dir;
  ScopedEnv kubeconfig_env("KUBECONFIG", (dir.path / "x").string() + ":" + (dir.path / "y").string());
  const std::string msg = kubeconfig_error([] { load_rest_config({}); });
  CHECK(msg.find((dir.path / "x").string()) != std::string::npos);
}

TEST_CASE("kubeconfig: without --kubeconfig or $KUBECONFIG, $HOME/.kube/config is read") {
  TempDir dir;
  dir.write(".kube/config", kConfigWithData);
  ScopedEnv kubeconfig_env("KUBECONFIG", std::nullopt);
  ScopedEnv home_env("HOME", dir.path.string());
  CHECK(load_rest_config({}).server == "https://10.0.0.1:6443");
  fs::remove(dir.path / ".kube" / "config");
  const std::string msg = kubeconfig_error([] { load_rest_config({}); });
  CHECK(msg.find((dir.path / ".kube" / "config").string()) != std::string::npos);
}

TEST_CASE("kubeconfig: unknown --context is an error naming the context") {
  KubeconfigFlags flags;
  flags.context = "prod-ctx";
  const std::string msg = kubeconfig_error([&] { parse_kubeconfig(kConfigWithData, "my-config", "", flags); });
  CHECK(msg.find("\"prod-ctx\"") != std::string::npos);
  CHECK(msg.find("my-config") != std::string::npos);
}

TEST_CASE("kubeconfig: missing current-context, cluster or user are errors naming them") {
  CHECK(kubeconfig_error([] { parse_kubeconfig("clusters: []\n", "cfg", "", {}); }).find("current-context") !=
        std::string::npos);
  const char* dangling = R"(
current-context: c
contexts: [{name: c, context: {cluster: ghost-cluster, user: ghost-user}}]
clusters: [{name: real, cluster: {server: https://x}}]
)";
  CHECK(kubeconfig_error([&] { parse_kubeconfig(dangling, "cfg", "", {}); }).find("ghost-cluster") !=
        std::string::npos);
  const char* no_user = R"(
current-context: c
contexts: [{name: c, context: {cluster: real, user: ghost-user}}]
clusters: [{name: real, cluster: {server: https://x}}]
)";
  CHECK(kubeconfig_error([&] { parse_kubeconfig(no_user, "cfg", "", {}); }).find("ghost-user") != std::string::npos);
  const char* no_server = R"(
current-context: c
contexts: [{name: c, context: {cluster: real}}]
clusters: [{name: real, cluster: {insecure-skip-tls-verify: true}}]
)";
  CHECK(kubeconfig_error([&] { parse_kubeconfig(no_server, "cfg", "", {}); }).find("no server") != std::string::npos);
}

TEST_CASE("kubeconfig: invalid YAML and wrong shapes are KubeconfigErrors naming the file") {
  const char* bad[] = {
      "clusters: [unclosed\n",                         // YAML syntax error
      "- just\n- a list\n",                            // top level not a mapping
      "clusters: {name: x}\n",                         // clusters not a list
      "clusters: [plain-string]\n",                    // entry not a mapping
      "clusters: [{cluster: {server: https://x}}]\n",  // entry without a name
      "clusters: [{name: k, cluster: [1, 2]}]\n",      // body not a mapping
      "current-context: [a, b]\n",                     // not a string
      "clusters: [{name: k, cluster: {server: https://a}}, {name: k, cluster: {server: https://b}}]\n",
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
      "clusters: [{name: k, cluster: {server: {nested: map}}}]\n",
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
      "clusters: [{name: k, cluster: {server: https://x, insecure-skip-tls-verify: maybe}}]\n",
  };
  for (const char* text : bad) {
    CAPTURE(text);
    const std::string msg = kubeconfig_error([&] { parse_kubeconfig(text, "/path/to/broken-config", "", {}); });
    CHECK(msg.find("/path/to/broken-config") != std::string::npos);
  }
}

TEST_CASE("kubeconfig: an empty file is an empty config") {
  // No crash and no YAML error: the complaint is that nothing selects a context.
  const std::string msg = kubeconfig_error([] { parse_kubeconfig("", "empty-config", "", {}); });
  CHECK(msg.find("current-context") != std::string::npos);
}

TEST_CASE("kubeconfig: invalid base64 in *-data is an error naming the field") {
  for (const char* data : {"not base64!", "Q0EgUEVNCg", "Q0E=UEVN", "Q==="}) {
    CAPTURE(data);
    const std::string text = std::string("current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n") +
                             "clusters: [{name: k, cluster: {server: https://x, certificate-authority-data: \"" + data +
                             "\"}}]\n";
    const std::string msg = kubeconfig_error([&] { parse_kubeconfig(text, "cfg", "", {}); });
    CHECK(msg.find("certificate-authority-data") != std::string::npos);
  }
  // Line breaks inside the value are allowed, as Go's decoder skips them.
  const RestConfig c = parse_kubeconfig(
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
      "clusters: [{name: k, cluster: {server: https://x, certificate-authority-data: \"Q0Eg\\nUEVNCg==\"}}]\n",
      "cfg", "", {});
  CHECK(c.ca_pem == "CA PEM\n");
}

TEST_CASE("kubeconfig: a server without scheme defaults like client-go") {
  const auto server_of = [](const std::string& cluster_body) {
    return parse_kubeconfig(
               "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
               "clusters: [{name: k, cluster: " +
                   cluster_body + "}]\n",
               "cfg", "", {})
        .server;
  };
  CHECK(server_of("{server: \"10.1.1.1:6443\"}") == "http://10.1.1.1:6443");
  CHECK(server_of("{server: \"10.1.1.1:6443\", insecure-skip-tls-verify: true}") == "https://10.1.1.1:6443");
  CHECK(server_of("{server: \"10.1.1.1:6443\", certificate-authority-data: Q0EgUEVNCg==}") == "https://10.1.1.1:6443");
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify is read") {
  const RestConfig c = parse_kubeconfig(
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
      "clusters: [{name: k, cluster: {server: https://x, insecure-skip-tls-verify: true}}]\n",
      "cfg", "", {});
  CHECK(c.insecure_skip_tls_verify);
  CHECK(c.token.empty());  // no user: anonymous
}

TEST_CASE("kubeconfig: unusable credentials are errors, not silent anonymous requests") {
  const std::string head =
      "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
      "clusters: [{name: k, cluster: {server: https://x}}]\n";
  const std::string cert_only = kubeconfig_error([&] {
    parse_kubeconfig(head + "users: [{name: u, user: {client-certificate-data: Q0VSVCBQRU0K}}]\n", "cfg", "", {});
  });
  CHECK(cert_only.find("client-key") != std::string::npos);
  const std::string exec = kubeconfig_error([&] {
    parse_kubeconfig(
        head + "users: [{name: u, user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}}}]\n", "cfg",
        "", {});
  });
  CHECK(exec.find("exec") != std::string::npos);
  CHECK(exec.find("\"u\"") != std::string::npos);
}

namespace {

// Config with two clusters and two users, for the override flags.
const char* kTwoOfEach = R"(
current-context: c
clusters:
- name: k1
  cluster: {server: https://one:6443, tls-server-name: one.internal, certificate-authority-data: Q0EgUEVNCg==}
- name: k2
  cluster: {server: https://two:6443, proxy-url: socks5://proxy:1080}
contexts:
- name: c
  context: {cluster: k1, user: u1, namespace: ns1}
users:
- name: u1
  user: {token: token-1}
- name: u2
  user: {username: admin, password: s3cret}
)";

}  // namespace

TEST_CASE("kubeconfig: --cluster and --user replace the context's, and must exist") {
  KubeconfigFlags flags;
  flags.cluster = "k2";
  flags.user = "u2";
  const RestConfig c = parse_kubeconfig(kTwoOfEach, "cfg", "", flags);
  CHECK(c.server == "https://two:6443");
  CHECK(c.proxy_url == "socks5://proxy:1080");
  CHECK(c.tls_server_name.empty());
  CHECK(c.ca_pem.empty());
  CHECK(c.username == "admin");
  CHECK(c.password == "s3cret");
  CHECK(c.token.empty());
  CHECK(c.namespace_ == "ns1");  // still the context's

  flags.cluster = "nope";
  std::string msg = kubeconfig_error([&] { parse_kubeconfig(kTwoOfEach, "cfg", "", flags); });
  CHECK(msg.find("cluster \"nope\"") != std::string::npos);
  CHECK(msg.find("--cluster") != std::string::npos);
  flags.cluster.clear();
  flags.user = "ghost";
  msg = kubeconfig_error([&] { parse_kubeconfig(kTwoOfEach, "cfg", "", flags); });
  CHECK(msg.find("user \"ghost\"") != std::string::npos);
  CHECK(msg.find("--user") != std::string::npos);
}

TEST_CASE("kubeconfig: --server, --token, --tls-server-name, --insecure-skip-tls-verify override the file") {
  KubeconfigFlags flags;
  CHECK(parse_kubeconfig(kTwoOfEach, "cfg", "", flags).tls_server_name == "one.internal");
  flags.server = "https://[::1]:7443/";
  RestConfig c = parse_kubeconfig(kTwoOfEach, "cfg", "", flags);
  CHECK(c.server == "https://[::1]:7443");
  CHECK(c.tls_server_name.empty());  // --server drops the file's tls-server-name (clientcmd getCluster)
  CHECK(c.ca_pem == "CA PEM\n");
  flags.tls_server_name = "api.example";
  flags.token = "flag-token";
  flags.insecure_skip_tls_verify = true;
  c = parse_kubeconfig(kTwoOfEach, "cfg", "", flags);
  CHECK(c.tls_server_name == "api.example");
  CHECK(c.token == "flag-token");
  CHECK(c.insecure_skip_tls_verify);
  CHECK(c.ca_pem.empty());  // --insecure-skip-tls-verify drops the CA

  // --insecure-skip-tls-verify also means a missing CA file is never read.
  KubeconfigFlags insecure;
  insecure.insecure_skip_tls_verify = true;
  CHECK_NOTHROW(
      parse_kubeconfig("current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                       "clusters: [{name: k, cluster: {server: https://x, certificate-authority: /no/ca}}]\n",
                       "cfg", "", insecure));
  // --token replaces a tokenFile too, and a basic-auth user together with a token is client-go's error.
  KubeconfigFlags token;
  token.token = "t";
  CHECK(parse_kubeconfig("current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
                         "clusters: [{name: k, cluster: {server: https://x}}]\n"
                         "users: [{name: u, user: {tokenFile: /no/token}}]\n",
                         "cfg", "", token)
            .token_file.empty());
  token.user = "u2";
  const std::string msg = kubeconfig_error([&] { parse_kubeconfig(kTwoOfEach, "cfg", "", token); });
  CHECK(msg.find("username/password or bearer token may be set, but not both") != std::string::npos);
  CHECK(msg.find("s3cret") == std::string::npos);
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify with a CA in the file is client-go's error") {
  const std::string msg = kubeconfig_error([] {
    parse_kubeconfig(
        "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
        "clusters: [{name: k, cluster: {server: https://x, insecure-skip-tls-verify: true, "
        "certificate-authority-data: Q0EgUEVNCg==}}]\n",
        "cfg", "", {});
  });
  CHECK(msg.find("insecure") != std::string::npos);
  CHECK(msg.find("cluster \"k\"") != std::string::npos);
}

TEST_CASE("kubeconfig: --server works without any kubeconfig or context") {
  TempDir dir;
  ScopedEnv kubeconfig_env("KUBECONFIG", (dir.path / "missing").string());
  KubeconfigFlags flags;
  flags.server = "https://10.9.9.9:6443";
  flags.token = "t";
  const RestConfig c = load_rest_config(flags, (dir.path / "no-sa").string());
  CHECK(c.server == "https://10.9.9.9:6443");
  CHECK(c.token == "t");
  CHECK(c.namespace_ == "default");
  // Without --server, an empty configuration is an error naming where it looked.
  const std::string msg = kubeconfig_error([&] { load_rest_config({}, (dir.path / "no-sa").string()); });
  CHECK(msg.find((dir.path / "missing").string()) != std::string::npos);
}

TEST_CASE("kubeconfig: relative paths resolve against the file that defined them, across merged files") {
  TempDir dir;
  dir.write("a/creds/token", "token-from-a\n");
  dir.write("b/ca.pem", "CA OF B\n");
  const std::string a = dir.write("a/config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}, {name: e, context: {cluster: k, user: x}}]
users:
- name: u
  user: {tokenFile: creds/token}
- name: x
  user:
    exec: {command: ./bin/get-token, apiVersion: client.authentication.k8s.io/v1beta1}
)");
  const std::string b = dir.write("b/config", R"(
clusters: [{name: k, cluster: {server: https://k:6443, certificate-authority: ca.pem}}]
users:
- name: y
  user:
    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}
)");
  ScopedEnv kubeconfig_env("KUBECONFIG", a + ":" + b);
  RestConfig c = load_rest_config({});
  CHECK(c.ca_pem == "CA OF B\n");
  CHECK(c.token == "token-from-a");
  CHECK(c.token_file == (dir.path / "a" / "creds/token").string());
  KubeconfigFlags flags;
  flags.context = "e";
  c = load_rest_config(flags);
  REQUIRE(c.exec);
  CHECK(c.exec->command == (dir.path / "a" / "bin" / "get-token").string());
  CHECK(c.exec->interactive_mode == "IfAvailable");  // v1beta1's default
  flags.user = "y";
  c = load_rest_config(flags);
  REQUIRE(c.exec);
  CHECK(c.exec->command == "aws");  // no '/': looked up in PATH, not resolved
}

TEST_CASE("kubeconfig: exec sections are read and validated as client-go does") {
  const std::string head =
      "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
      "clusters: [{name: k, cluster: {server: https://x, extensions: [{name: client.authentication.k8s.io/exec, "
      "extension: {audience: kube, n: 3}}]}}]\n";
  const RestConfig c = parse_kubeconfig(head + R"(users:
- name: u
  user:
    exec:
      command: /opt/bin/plugin
      args: [--cluster, prod]
      env: [{name: REGION, value: eu}]
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Always
      provideClusterInfo: true
      installHint: install the plugin
)",
                                        "cfg", "", {});
  REQUIRE(c.exec);
  CHECK(c.exec->command == "/opt/bin/plugin");
  CHECK(c.exec->args == std::vector<std::string>{"--cluster", "prod"});
  REQUIRE(c.exec->env.size() == 1);
  CHECK(c.exec->env[0] == std::pair<std::string, std::string>{"REGION", "eu"});
  CHECK(c.exec->interactive_mode == "Always");
  CHECK(c.exec->provide_cluster_info);
  CHECK(c.exec->install_hint == "install the plugin");
  CHECK(c.exec->cluster_config_json == R"({"audience":"kube","n":3})");

  const auto error_for = [&](const std::string& exec) {
    return kubeconfig_error(
        [&] { parse_kubeconfig(head + "users: [{name: u, user: {exec: " + exec + "}}]\n", "cfg", "", {}); });
  };
  CHECK(error_for("{command: p, apiVersion: client.authentication.k8s.io/v1}")
            .find("interactiveMode must be specified") != std::string::npos);
  CHECK(error_for("{command: p, apiVersion: client.authentication.k8s.io/v1alpha1}").find("apiVersion") !=
        std::string::npos);
  CHECK(error_for("{apiVersion: client.authentication.k8s.io/v1beta1}").find("command must be specified") !=
        std::string::npos);
  CHECK(error_for("{command: p, apiVersion: client.authentication.k8s.io/v1beta1, interactiveMode: Sometimes}")
            .find("invalid interactiveMode") != std::string::npos);
}

TEST_CASE("kubeconfig: proxy-url must be http, https or socks5") {
  const std::string msg = kubeconfig_error([] {
    parse_kubeconfig(
        "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
        "clusters: [{name: k, cluster: {server: https://x, proxy-url: ftp://p:21}}]\n",
        "cfg", "", {});
  });
  CHECK(msg.find("proxy-url") != std::string::npos);
}

TEST_CASE("kubeconfig: in-cluster config from the service account when no kubeconfig gives a cluster") {
  TempDir dir;
  const std::string sa = (dir.path / "sa").string();
  dir.write("sa/token", "sa-token\n");
  dir.write("sa/ca.crt", "SA CA\n");
  dir.write("sa/namespace", "pod-ns\n");
  ScopedEnv kubeconfig_env("KUBECONFIG", (dir.path / "missing").string());
  ScopedEnv pod_ns("POD_NAMESPACE", std::nullopt);
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
    ScopedEnv port("KUBERNETES_SERVICE_PORT", std::nullopt);
    CHECK_THROWS_AS(load_rest_config({}, sa), KubeconfigError);  // not in a pod
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  RestConfig c = load_rest_config({}, sa);
  CHECK(c.server == "https://[fd00::1]:443");
  CHECK(c.token == "sa-token");
  CHECK(c.token_file == sa + "/token");
  CHECK(c.ca_pem == "SA CA\n");
  CHECK(c.namespace_ == "pod-ns");
  KubeconfigFlags flags;
  flags.namespace_ = "flag-ns";
  flags.token = "flag-token";
  c = load_rest_config(flags, sa);
  CHECK(c.namespace_ == "flag-ns");
  CHECK(c.token == "flag-token");
  CHECK(c.token_file.empty());
  {
    ScopedEnv pod("POD_NAMESPACE", "downward-ns");
    CHECK(load_rest_config({}, sa).namespace_ == "downward-ns");
  }

  // A kubeconfig wins over in-cluster; its context without a namespace takes the service account's.
  const std::string cfg = dir.write("kc",
                                    "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                                    "clusters: [{name: k, cluster: {server: https://k}}]\n");
  flags = {};
  flags.kubeconfig = cfg;
  c = load_rest_config(flags, sa);
  CHECK(c.server == "https://k");
  CHECK(c.token.empty());
  CHECK(c.namespace_ == "pod-ns");
}
