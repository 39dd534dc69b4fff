// The real binary's connection rules against the local cluster (through the fault proxy): connection flags without a
// kubeconfig, an exec credential plugin named relative to its kubeconfig, unusable configurations that send nothing, no
// token in logs.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace {

// The value of `key:` in the test's kubeconfig (server, token, certificate-authority-data).
std::string kubeconfig_value(const e2e::Cluster& sb, const std::string& key) {
  std::smatch m;
  const std::string text = e2e::read_file(sb.kubeconfig());
  REQUIRE(std::regex_search(text, m, std::regex(key + ": (\\S+)")));
  return m[1];
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("connection: --server, --token and --insecure-skip-tls-verify reach the cluster without a kubeconfig") {
  e2e::Cluster sb;
  e2e::TempDir dir;
  const std::string token = kubeconfig_value(sb, "token");
  // `env` clears KUBECONFIG and HOME so that no kubeconfig can be found.
  const e2e::Run run = e2e::run_process({"/usr/bin/env", "-u", "KUBECONFIG", "HOME=" + dir.path(), e2e::mindie_binary(),
                                         "status", "-n", "mindie-demo", "--server", sb.url(), "--token", token,
                                         "--insecure-skip-tls-verify", "--request-timeout=30s", "-v=8"});
  // No deployment yet: the request got through authenticated (a 401 would say Unauthorized).
  CHECK(run.exit_code == 1);
  CHECK(contains(run.err, "no deployment found in namespace mindie-demo"));
  CHECK_FALSE(contains(run.err, token));
  CHECK_FALSE(sb.requests().empty());
}

TEST_CASE("connection: an exec plugin named relative to its kubeconfig supplies the token") {
  e2e::Cluster sb;
  e2e::TempDir dir;
  const std::string token = kubeconfig_value(sb, "token");
  const std::string plugin = dir.write("bin/get-token",
                                       "#!/bin/sh\necho \"get-token: $KUBERNETES_EXEC_INFO\" >&2\n"
                                       "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                                       "\"ExecCredential\",\"status\":{\"token\":\"" +
                                           token + "\"}}'\n");
  REQUIRE(e2e::run_process({"/bin/chmod", "+x", plugin}).exit_code == 0);
  const std::string kubeconfig =
      dir.write("config",
                "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                "clusters: [{name: s, cluster: {server: " +
                    sb.url() + ", certificate-authority-data: " + kubeconfig_value(sb, "certificate-authority-data") +
                    "}}]\n"
                    "contexts: [{name: x, context: {cluster: s, user: e, namespace: mindie-demo}}]\n"
                    "users: [{name: e, user: {exec: {command: bin/get-token, "
                    "apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}}]\n");
  const e2e::Run run = e2e::run_process({e2e::mindie_binary(), "status", "--kubeconfig", kubeconfig});
  CHECK(contains(run.err, "no deployment found in namespace mindie-demo"));
  CHECK(contains(
      run.err,
      R"(get-token: {"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}})"));
}

TEST_CASE("connection: unknown context, cluster or user, bad timeout, missing file: exit 1 naming it, nothing sent") {
  e2e::Cluster sb;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--context", "prod"}, "context \"prod\""},
      {{"--cluster", "other"}, "cluster \"other\""},
      {{"--user", "ghost"}, "user \"ghost\""},
      {{"--request-timeout", "soon"}, "--request-timeout \"soon\""},
  };
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> args = {"status", "-n", "mindie-demo"};
    args.insert(args.end(), flags.begin(), flags.end());
    const e2e::Run run = sb.mindie(args);
    CHECK_MESSAGE(run.exit_code == 1, named);
    CHECK_MESSAGE(contains(run.err, named), run.err);
  }
  const e2e::Run missing = e2e::run_process({e2e::mindie_binary(), "status", "--kubeconfig", "/nonexistent/kc"});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "/nonexistent/kc"));
  CHECK(sb.requests().empty());
}

TEST_CASE("connection: a cluster behind [::1] is reached through its https://[::1]:PORT kubeconfig") {
  // Needs the IPv6 loopback: without it the proxy cannot bind and the constructor throws (a failure, not a skip).
  e2e::Cluster sb({}, "[::1]:0");
  CHECK(sb.url().rfind("https://[::1]:", 0) == 0);
  CHECK(kubeconfig_value(sb, "server") == sb.url());
  const e2e::Run before = sb.mindie({"status", "-n", "mindie-demo"});
  CHECK(before.exit_code == 1);
  CHECK(contains(before.err, "no deployment found in namespace mindie-demo"));
  const e2e::Run deployed = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(deployed.exit_code == 0, deployed.err);
  const e2e::Run after = sb.mindie({"status", "-n", "mindie-demo"});
  CHECK_MESSAGE(after.exit_code == 0, after.err);
  std::size_t writes = 0;
  for (const auto& r : sb.requests()) writes += r.is_write() ? 1 : 0;
  CHECK(writes > 0);
}

TEST_CASE("connection: a password in the server URL is never printed, in the error or the -v lines") {
  e2e::TempDir dir;
  // Nothing listens on port 1: the connection is refused, and both the error and the request line name the server.
  const e2e::Run run = e2e::run_process({"/usr/bin/env", "-u", "KUBECONFIG", "HOME=" + dir.path(), e2e::mindie_binary(),
                                         "status", "-n", "mindie-demo", "--server", "https://admin:s3cret@127.0.0.1:1",
                                         "--insecure-skip-tls-verify", "-v=6"});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(contains(run.err, "error: Unable to connect to the server https://admin:xxxxx@127.0.0.1:1"), run.err);
  CHECK(contains(run.err, "url=\"https://admin:xxxxx@127.0.0.1:1/"));
  CHECK_FALSE(contains(run.err, "s3cret"));
}
