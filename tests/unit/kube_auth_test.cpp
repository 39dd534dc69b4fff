// Authentication and connection: exec credential plugins (real scripts), the auth provider (token file, basic,
// exec cache and 401 refresh), and CurlTransport with tls-server-name, IPv6, CA bundles, proxies and redaction.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "kube/auth.h"
#include "kube/curl_transport.h"
#include "kube/exec_credential.h"
#include "kube/logging_transport.h"
#include "net_test_support.h"
#include "scratch_files.h"

namespace fs = std::filesystem;
using namespace mindie::kube;
using mindie::test::ConnectProxy;
using mindie::test::ScopedEnv;
using mindie::test::ScriptedHttpServer;
using mindie::test::TempDir;
using mindie::test::TlsServer;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A RestConfig whose user runs `command` (v1, interactiveMode Never unless changed).
RestConfig exec_config(const std::string& command) {
  RestConfig c;
  c.server = "https://10.0.0.1:6443";
  c.exec = ExecConfig{};
  c.exec->command = command;
  c.exec->api_version = "client.authentication.k8s.io/v1";
  c.exec->interactive_mode = "Never";
  return c;
}

// A plugin script printing a v1 ExecCredential with token "$1"; it records its environment, arguments and stdin.
const char* kRecordingPlugin = R"(#!/bin/sh
dir=$(dirname "$0")
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec_info"
printf '%s' "$REGION" > "$dir/region"
printf '%s\n' "$@" > "$dir/args"
readlink /proc/self/fd/0 > "$dir/stdin"
echo "plugin diagnostics" >&2
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$1"
)";

HttpRequest get(const std::string& path) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  return r;
}

// Counts fetches and hands out "tok-1", "tok-2", ... with the given lifetime (nullopt = no expiry).
class CountingSource : public CredentialSource {
 public:
  explicit CountingSource(std::optional<std::chrono::seconds> lifetime) : lifetime_(lifetime) {}
  ExecCredential fetch() override {
    ExecCredential c;
    c.token = "tok-" + std::to_string(++*fetches);
    if (lifetime_) c.expiry = std::chrono::system_clock::now() + *lifetime_;
    return c;
  }
  std::shared_ptr<int> fetches = std::make_shared<int>(0);

 private:
  std::optional<std::chrono::seconds> lifetime_;
};

}  // namespace

TEST_CASE("exec plugin: run directly with args, env, KUBERNETES_EXEC_INFO and stdin from /dev/null") {
  TempDir dir;
  RestConfig c = exec_config(dir.write("plugin.sh", kRecordingPlugin, true));
  c.exec->args = {"secret-token", "two words"};
  c.exec->env = {{"REGION", "eu-west"}};
  c.exec->provide_cluster_info = true;
  c.exec->cluster_config_json = R"({"audience":"kube"})";
  c.ca_pem = "CA PEM\n";
  c.tls_server_name = "api.internal";
  ExecCredentialPlugin plugin(c);
  const ExecCredential cred = plugin.fetch();
  CHECK(cred.token == "secret-token");
  CHECK_FALSE(cred.expiry);
  CHECK(dir.read("args") == "secret-token\ntwo words\n");  // no shell: the space stays inside one argument
  CHECK(dir.read("region") == "eu-west");
  CHECK(dir.read("stdin") == "/dev/null\n");
  const std::string info = dir.read("exec_info");
  CHECK(contains(info, R"("apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential")"));
  CHECK(contains(info, R"("interactive":false)"));
  CHECK(contains(info, R"("server":"https://10.0.0.1:6443")"));
  CHECK(contains(info, R"("tls-server-name":"api.internal")"));
  CHECK(contains(info, R"("certificate-authority-data":"Q0EgUEVNCg==")"));
  CHECK(contains(info, R"("config":{"audience":"kube"})"));

  c.exec->provide_cluster_info = false;
  ExecCredentialPlugin(c).fetch();
  CHECK_FALSE(contains(dir.read("exec_info"), "cluster"));
}

TEST_CASE("exec plugin: failures name the command and never echo its output") {
  TempDir dir;
  const std::string failing = dir.write("fail.sh", "#!/bin/sh\necho '{\"token\":\"leaked\"}'\nexit 3\n", true);
  std::string msg;
  try {
    ExecCredentialPlugin(exec_config(failing)).fetch();
  } catch (const ExecCredentialError& e) {
    msg = e.what();
  }
  CHECK(contains(msg, failing));
  CHECK(contains(msg, "exit code 3"));
  CHECK_FALSE(contains(msg, "leaked"));

  RestConfig missing = exec_config((dir.path / "nope").string());
  missing.exec->install_hint = "Install it with: apt install nope";
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(missing).fetch(), doctest::Contains("Install it with"),
                       ExecCredentialError);

  const std::string garbage = dir.write("garbage.sh", "#!/bin/sh\necho 'token: not json sekrit'\n", true);
  try {
    ExecCredentialPlugin(exec_config(garbage)).fetch();
    FAIL("no error");
  } catch (const ExecCredentialError& e) {
    CHECK(contains(e.what(), "not a JSON ExecCredential"));
    CHECK_FALSE(contains(e.what(), "sekrit"));
  }
}

TEST_CASE("exec plugin: bounded in time and output") {
  TempDir dir;
  ExecLimits limits;
  limits.timeout = std::chrono::milliseconds(300);
  const std::string hang = dir.write("hang.sh", "#!/bin/sh\nexec sleep 30\n", true);
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(exec_config(hang), limits).fetch(), doctest::Contains("did not finish"),
                       ExecCredentialError);
  // Closing stdout does not end the wait: the plugin itself must exit in time.
  const std::string lingering = dir.write("linger.sh", "#!/bin/sh\nexec >&-\nexec sleep 30\n", true);
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(exec_config(lingering), limits).fetch(),
                       doctest::Contains("did not finish"), ExecCredentialError);
  limits.timeout = std::chrono::seconds(20);
  limits.max_output = 1000;
  const std::string chatty = dir.write("chatty.sh", "#!/bin/sh\nexec yes\n", true);
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(exec_config(chatty), limits).fetch(),
                       doctest::Contains("more than 1000 bytes"), ExecCredentialError);
}

TEST_CASE("exec plugin: the default bounds, and the error names the plugin, the bound and that kubectl has none") {
  CHECK(ExecLimits{}.timeout == std::chrono::seconds(20));
  CHECK(ExecLimits{}.interactive_timeout == std::chrono::minutes(2));
  TempDir dir;
  ExecLimits limits;
  limits.timeout = std::chrono::seconds(1);
  const std::string hang = dir.write("hang.sh", "#!/bin/sh\nexec sleep 30\n", true);
  const std::string message = "exec plugin \"" + hang +
                              "\" did not finish within 1 s (kubectl-mindie's bound for a non-interactive plugin; "
                              "kubectl waits without one): it and its child processes were stopped";
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(exec_config(hang), limits).fetch(), doctest::Contains(message.c_str()),
                       ExecCredentialError);
}

TEST_CASE("exec plugin: a plugin that hangs is stopped with every process it started") {
  TempDir dir;
  // The plugin's background child holds the write end of a FIFO: the reader sees its end only once every process
  // holding it is gone, which a kill of the plugin alone would not bring.
  const std::string fifo = (dir.path / "held").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(reader >= 0);
  const std::string plugin =
      dir.write("hang-with-child.sh",
                "#!/bin/sh\nexec 3>\"" + fifo + "\"\n(echo started >&3; exec sleep 1000) &\nexec 3>&-\nwait\n", true);
  ExecLimits limits;
  limits.timeout = std::chrono::seconds(3);  // time for the shell to start its child
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(exec_config(plugin), limits).fetch(), doctest::Contains("did not finish"),
                       ExecCredentialError);
  std::string seen;
  for (;;) {
    pollfd p{reader, POLLIN, 0};
    // Not a timing assertion: a bound so that a child left running fails the test instead of hanging it.
    REQUIRE_MESSAGE(poll(&p, 1, 60000) == 1, "the plugin's child is still running");
    char buf[64];
    const ssize_t n = read(reader, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<std::size_t>(n));
  }
  close(reader);
  CHECK(seen == "started\n");
}

TEST_CASE("exec plugin: interactiveMode Always needs a terminal; IfAvailable without one is non-interactive") {
  TempDir dir;
  RestConfig c = exec_config(dir.write("plugin.sh", kRecordingPlugin, true));
  c.exec->args = {"t"};
  const int dev_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(dev_null >= 0);
  ExecLimits limits;
  limits.stdin_fd = dev_null;
  c.exec->interactive_mode = "Always";
  CHECK_THROWS_WITH_AS(ExecCredentialPlugin(c, limits).fetch(), doctest::Contains("not a terminal"),
                       ExecCredentialError);
  c.exec->interactive_mode = "IfAvailable";
  CHECK(ExecCredentialPlugin(c, limits).fetch().token == "t");
  CHECK(contains(dir.read("exec_info"), R"("interactive":false)"));
  CHECK(dir.read("stdin") == "/dev/null\n");
  close(dev_null);
}

TEST_CASE("exec plugin: ExecCredential parsing follows client-go's checks") {
  const std::string v1 = "client.authentication.k8s.io/v1";
  const auto parse = [&](const std::string& status, const std::string& api = "client.authentication.k8s.io/v1") {
    return parse_exec_credential(R"({"apiVersion":")" + api + R"(","kind":"ExecCredential","status":)" + status + "}",
                                 v1, "plug");
  };
  const ExecCredential cert =
      parse(R"({"clientCertificateData":"CERT","clientKeyData":"KEY","expirationTimestamp":"2030-01-02T03:04:05Z"})");
  CHECK(cert.client_cert_pem == "CERT");
  CHECK(cert.client_key_pem == "KEY");
  REQUIRE(cert.expiry);
  CHECK(std::chrono::system_clock::to_time_t(*cert.expiry) == 1893553445);
  CHECK(std::chrono::system_clock::to_time_t(
            *parse(R"({"token":"t","expirationTimestamp":"2030-01-02T05:04:05+02:00"})").expiry) == 1893553445);
  CHECK_THROWS_WITH(parse(R"({"token":"t"})", "client.authentication.k8s.io/v1beta1"), doctest::Contains("apiVersion"));
  CHECK_THROWS_WITH(parse(R"({"clientCertificateData":"CERT"})"), doctest::Contains("not both"));
  CHECK_THROWS_WITH(parse(R"({})"), doctest::Contains("neither a token"));
  CHECK_THROWS_WITH(parse(R"({"token":"t","expirationTimestamp":"tomorrow"})"), doctest::Contains("RFC 3339"));
  CHECK_THROWS_WITH(parse_exec_credential(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})",
                                          v1, "plug"),
                    doctest::Contains("no status"));
}

TEST_CASE("auth provider: exec credential cached until its expiry, renewed on refresh") {
  RestConfig c = exec_config("unused");
  auto forever = std::make_unique<CountingSource>(std::nullopt);
  auto fetches = forever->fetches;
  ConfigAuthProvider cached(c, std::move(forever));
  CHECK(cached.credentials().authorization == "Bearer tok-1");
  CHECK(cached.credentials().authorization == "Bearer tok-1");
  CHECK(*fetches == 1);
  CHECK(cached.refresh());
  CHECK(cached.credentials().authorization == "Bearer tok-2");
  CHECK(*fetches == 2);

  auto expired = std::make_unique<CountingSource>(std::chrono::seconds(-1));
  auto expired_fetches = expired->fetches;
  ConfigAuthProvider renewing(c, std::move(expired));
  renewing.credentials();
  renewing.credentials();
  CHECK(*expired_fetches == 2);

  // client-go skips the plugin when a token, basic auth or a client certificate is configured.
  c.token = "static";
  auto unused = std::make_unique<CountingSource>(std::nullopt);
  auto unused_fetches = unused->fetches;
  ConfigAuthProvider with_token(c, std::move(unused));
  CHECK(with_token.credentials().authorization == "Bearer static");
  CHECK_FALSE(with_token.refresh());
  CHECK(*unused_fetches == 0);
}

TEST_CASE("auth provider: tokenFile wins over token and is re-read when it changes; basic auth header") {
  TempDir dir;
  RestConfig c;
  c.token = "inline";
  c.token_file = dir.write("token", "first\n");
  ConfigAuthProvider p(c);
  CHECK(p.credentials().authorization == "Bearer first");
  dir.write("token", "second-token\n");
  CHECK(p.credentials().authorization == "Bearer second-token");
  fs::remove(dir.path / "token");
  CHECK(p.credentials().authorization == "Bearer second-token");  // unreadable: the last good token stays

  RestConfig basic;
  basic.username = "admin";
  basic.password = "s3cret";
  CHECK(ConfigAuthProvider(basic).credentials().authorization == "Basic YWRtaW46czNjcmV0");
}

TEST_CASE("CurlTransport: a 401 refreshes the exec credential and repeats the request once") {
  std::vector<std::string> seen;
  std::vector<int> statuses;
  {
    ScriptedHttpServer server({{401, "{}"}, {200, "{\"ok\":1}"}, {401, "{}"}, {401, "{}"}});
    RestConfig c = exec_config("unused");
    c.server = server.url();
    c.request_timeout = std::chrono::seconds(20);
    CurlTransport t(c, std::make_unique<ConfigAuthProvider>(c, std::make_unique<CountingSource>(std::nullopt)));
    statuses.push_back(t.send(get("/api/v1/a")).status);
    statuses.push_back(t.send(get("/api/v1/b")).status);  // 401 twice: one retry only, then the 401 is the answer
    seen = server.take_requests();
  }
  CHECK(statuses == std::vector<int>{200, 401});
  REQUIRE(seen.size() == 4);
  CHECK(contains(seen[0], "Authorization: Bearer tok-1\r\n"));
  CHECK(contains(seen[1], "Authorization: Bearer tok-2\r\n"));
  CHECK(contains(seen[1], "GET /api/v1/a "));
  CHECK(contains(seen[3], "Authorization: Bearer tok-3\r\n"));
}

TEST_CASE("CurlTransport: exec plugin end to end; a failing plugin is an error naming it, nothing sent") {
  TempDir dir;
  ScriptedHttpServer server({{200, "{}"}});
  RestConfig c = exec_config(dir.write("plugin.sh", kRecordingPlugin, true));
  c.exec->args = {"from-plugin"};
  c.server = server.url();
  c.request_timeout = std::chrono::seconds(20);
  {
    CurlTransport t(c);
    CHECK(t.send(get("/version")).status == 200);
  }
  const auto seen = server.take_requests();
  REQUIRE(seen.size() == 1);
  CHECK(contains(seen[0], "Authorization: Bearer from-plugin\r\n"));

  RestConfig failing = exec_config(dir.write("fail.sh", "#!/bin/sh\nexit 7\n", true));
  failing.server = "http://127.0.0.1:9";  // never contacted
  CurlTransport t(failing);
  CHECK_THROWS_WITH_AS(t.send(get("/version")), doctest::Contains("exit code 7"), ExecCredentialError);
}

TEST_CASE("CurlTransport: HTTPS to an IPv6 server, CA bundle with several certificates, tls-server-name") {
  TlsServer v6(true);
  const TlsServer other;  // its CA is a second, unrelated certificate in the bundle
  RestConfig c;
  c.server = v6.url();
  c.ca_pem = other.ca_pem() + v6.ca_pem();
  c.token = "tok";
  c.request_timeout = std::chrono::seconds(20);
  CHECK(CurlTransport(c).send(get("/version")).status == 200);
  CHECK(v6.authorizations().back() == "Bearer tok");

  TlsServer v4;
  c.server = v4.url();
  c.ca_pem = v4.ca_pem();
  c.tls_server_name = "localhost";  // in the certificate: connects to 127.0.0.1, verifies "localhost"
  CHECK(CurlTransport(c).send(get("/version")).status == 200);
  c.tls_server_name = "kubernetes.default.svc";  // not in the certificate (and never resolved: CONNECT_TO)
  CHECK_THROWS_WITH_AS(CurlTransport(c).send(get("/version")), doctest::Contains("kubernetes.default.svc"),
                       TransportError);
  c.tls_server_name.clear();
  c.ca_pem = other.ca_pem();  // the wrong CA alone
  CHECK_THROWS_WITH_AS(CurlTransport(c).send(get("/version")), doctest::Contains("certificate"), TransportError);
}

TEST_CASE("CurlTransport: proxy-url tunnels through the proxy even when NO_PROXY would exempt the server") {
  ScopedEnv no_proxy("NO_PROXY", "*");
  ScopedEnv https_proxy("HTTPS_PROXY", std::nullopt);
  TlsServer server;
  ConnectProxy proxy;
  {
    RestConfig c;
    c.server = server.url();
    c.ca_pem = server.ca_pem();
    c.proxy_url = proxy.url();
    c.request_timeout = std::chrono::seconds(20);
    CurlTransport t(c);
    CHECK(t.send(get("/version")).status == 200);
  }
  CHECK(proxy.take_connect_line() == "CONNECT 127.0.0.1:" + std::to_string(server.port()) + " HTTP/1.1");
}

TEST_CASE("effective_proxy: proxy-url first, then Go's ProxyFromEnvironment rules") {
  ScopedEnv a("HTTPS_PROXY", "proxy.corp:3128");
  ScopedEnv b("https_proxy", std::nullopt);
  ScopedEnv c("HTTP_PROXY", "http://plain-proxy:80");
  ScopedEnv d("NO_PROXY", ".internal, 10.0.0.0/8, example.com:6443, fd00::/8");
  ScopedEnv e("no_proxy", std::nullopt);
  const auto proxy_for = [](const std::string& server, const std::string& proxy_url = "") {
    RestConfig cfg;
    cfg.server = server;
    cfg.proxy_url = proxy_url;
    return effective_proxy(cfg);
  };
  CHECK(proxy_for("https://api.example.org:6443") == "http://proxy.corp:3128");
  CHECK(proxy_for("http://api.example.org:8080") == "http://plain-proxy:80");
  CHECK(proxy_for("https://127.0.0.1:6443").empty());  // loopback is never proxied
  CHECK(proxy_for("https://[::1]:6443").empty());
  CHECK(proxy_for("https://localhost:6443").empty());
  CHECK(proxy_for("https://k8s.internal:6443").empty());  // ".internal": subdomains
  CHECK(proxy_for("https://10.3.2.1:6443").empty());      // CIDR
  CHECK(proxy_for("https://[fd00::5]:6443").empty());     // IPv6 CIDR
  CHECK(proxy_for("https://example.com:6443").empty());   // host with matching port
  CHECK(proxy_for("https://sub.example.com:6443").empty());
  CHECK(proxy_for("https://example.com:443") == "http://proxy.corp:3128");  // port differs
  CHECK(proxy_for("https://11.0.0.1:6443") == "http://proxy.corp:3128");
  // proxy-url wins over everything; socks5 lets the proxy resolve names (socks5h).
  CHECK(proxy_for("https://10.3.2.1:6443", "socks5://user:pw@socks:1080") == "socks5h://user:pw@socks:1080");
  CHECK(proxy_for("https://127.0.0.1:6443", "https://p:8443") == "https://p:8443");
}

TEST_CASE("LoggingTransport masks credentials in everything it logs") {
  CHECK(redact_credentials("Authorization: Bearer abc.def-ghi") == "Authorization: Bearer <masked>");
  CHECK(redact_credentials(R"({"h":"basic YWRtaW46czNjcmV0","x":1})") == R"({"h":"basic <masked>","x":1})");
  CHECK(redact_credentials("unbearable bearer") == "unbearable bearer");
  CHECK(redact_credentials("a Basic  b") == "a Basic  <masked>");
  // A URL's password, wherever it is in the text (Go's net/url URL.Redacted); the user name stays.
  CHECK(redact_credentials(R"(url="https://admin:pa:ss@api.example:6443/api?x=1")") ==
        R"(url="https://admin:xxxxx@api.example:6443/api?x=1")");
  CHECK(redact_credentials("proxy socks5://u:p@proxy:1080 and http://u:q@h/") ==
        "proxy socks5://u:xxxxx@proxy:1080 and http://u:xxxxx@h/");
  CHECK(redact_credentials("https://admin@h:6443/a@b") == "https://admin@h:6443/a@b");
  CHECK(redact_credentials("https://h:6443/x?u=a:b@c") == "https://h:6443/x?u=a:b@c");

  ScriptedHttpServer server({{200, R"({"echo":"Bearer sekrit-token"})"}});
  RestConfig c;
  c.server = server.url();
  c.token = "sekrit-token";
  c.request_timeout = std::chrono::seconds(20);
  CurlTransport curl(c);
  std::ostringstream log;
  LoggingTransport t(curl, 9, log);
  HttpRequest req = get("/api/v1/x");
  req.method = "POST";
  req.body = R"({"token":"Bearer sekrit-token"})";
  t.send(req);
  CHECK_FALSE(contains(log.str(), "sekrit"));
  CHECK(contains(log.str(), "Bearer <masked>"));
  server.take_requests();
}
