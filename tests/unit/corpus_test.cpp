// Corpus tests for the input parsers: every file under tests/corpus/<parser>/ is fed to its parser, which must
// accept it or raise its own structured error (validation::ValidationError, kube::KubeconfigError, util::YamlError) —
// never crash, hang, exhaust memory or let another exception type escape. Files named ok_* must be accepted, every
// other file must be rejected; tests/corpus/status holds error answers, which must all decode. Inputs that once crashed
// or hung a parser stay here as regression tests; the same folders seed the libFuzzer targets (tests/fuzz/README.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "fuzz/status_input.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "mindie/config.h"
#include "mindie/env_config.h"
#include "util/json_text.h"
#include "util/yaml_json.h"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace mindie;

namespace {

const fs::path kCorpus = fs::path(MINDIE_SOURCE_DIR) / "tests" / "corpus";

// The files of tests/corpus/<dir>, sorted so failures are reported in a stable order.
std::vector<fs::path> corpus_files(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kCorpus / dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Feeds every file of `dir` to `parse`, which returns for an accepted input and throws Error for a rejected one.
template <class Error>
void check_corpus(const std::string& dir, const std::function<void(const std::string& text, const fs::path&)>& parse) {
  const auto files = corpus_files(dir);
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    const std::string name = dir + "/" + file.filename().string();
    const bool want_ok = file.filename().string().rfind("ok_", 0) == 0;
    const std::string text = read_bytes(file);
    try {
      parse(text, file);
      CHECK_MESSAGE(want_ok, name << " was accepted but must be rejected");
    } catch (const Error& e) {
      CHECK_MESSAGE(!want_ok, name << " was rejected: " << std::string(e.what()));
      CHECK_MESSAGE(std::string(e.what()).size() > 0, name << ": empty error message");
    } catch (const std::exception& e) {
      FAIL_CHECK(name << " raised a foreign exception " << typeid(e).name() << ": " << std::string(e.what()));
    }
  }
}

// A converted document must survive json_to_yaml -> yaml_to_json unchanged (the -o yaml output reads back).
void check_yaml_round_trip(const json::value& v) {
  const json::value back = util::yaml_to_json(util::json_to_yaml(v), "round trip");
  CHECK_MESSAGE(back == v, "YAML round trip changed " << json::serialize(v).substr(0, 200));
}

}  // namespace

TEST_CASE("user_config corpus: every input is accepted or rejected with a ValidationError") {
  check_corpus<validation::ValidationError>("user_config", [](const std::string& text, const fs::path& file) {
    const auto cfg = config::parse_user_config(text, file.filename().string());
    // JSON allows strings YAML cannot carry (U+FFFF); printing such a config as YAML must fail, not alter it.
    try {
      check_yaml_round_trip(cfg.doc);
    } catch (const util::YamlError& e) {
      CHECK_MESSAGE(std::string(e.what()).starts_with("cannot emit"), std::string(e.what()));
    }
  });
}

TEST_CASE("env corpus: every input is accepted or rejected with a ValidationError") {
  check_corpus<validation::ValidationError>("env", [](const std::string& text, const fs::path& file) {
    config::parse_env_config(text, file.filename().string());
  });
}

TEST_CASE("kubeconfig corpus: every input is accepted or rejected with a KubeconfigError") {
  check_corpus<kube::KubeconfigError>("kubeconfig", [](const std::string& text, const fs::path& file) {
    kube::parse_kubeconfig(text, file.filename().string(), file.parent_path().string(), kube::KubeconfigFlags{});
  });
}

TEST_CASE("yaml corpus: every input converts or is rejected with a YamlError, and converted documents round-trip") {
  check_corpus<util::YamlError>("yaml", [](const std::string& text, const fs::path& file) {
    for (const auto& doc : util::yaml_to_json_all(text, file.filename().string())) check_yaml_round_trip(doc);
  });
}

TEST_CASE("replace_json_number on the user_config corpus edits exactly one number or throws invalid_argument") {
  const std::string path = "motor_deploy_config.p_instances_num";
  for (const auto& file : corpus_files("user_config")) {
    const std::string name = "user_config/" + file.filename().string();
    const std::string text = read_bytes(file);
    try {
      const std::string out = util::replace_json_number(text, path, 7);
      // Accepted input is JSON, so the edited text must parse and hold the new value (depth limit as the library).
      json::parse_options opts;
      opts.max_depth = 128;
      json::error_code ec;
      const json::value v = json::parse(out, ec, {}, opts);
      REQUIRE_MESSAGE(!ec, name << ": edited text is not JSON: " << ec.message());
      CHECK_MESSAGE(v.at_pointer("/motor_deploy_config/p_instances_num") == 7, name);
    } catch (const std::invalid_argument&) {
      // A rejected input: not JSON, or no number at the path.
    } catch (const std::exception& e) {
      FAIL_CHECK(name << " raised a foreign exception " << typeid(e).name() << ": " << std::string(e.what()));
    }
  }
  CHECK(util::replace_json_number(read_bytes(kCorpus / "user_config" / "ok_example.json"), path, 3).size() > 0);
}

TEST_CASE("status corpus: every error answer decodes to an ApiError naming code, reason, message and path") {
  const auto files = corpus_files("status");
  REQUIRE_FALSE(files.empty());
  kube::HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/namespaces/ns/configmaps/motor-config?limit=1";
  for (const auto& file : files) {
    CAPTURE(file.filename().string());
    const kube::HttpResponse resp = fuzz::status_response(read_bytes(file));
    const kube::ApiError e = kube::decode_api_error(req, resp);
    CHECK(e.code() == resp.status);
    CHECK_FALSE(e.reason().empty());
    CHECK_FALSE(e.status_message().empty());
    CHECK(e.retry_after_seconds() >= 0);
    CHECK(e.retry_after_seconds() <= 86400);
    const std::string text = e.render();
    CHECK(std::string(e.what()) == text);  // no NUL from the body cuts the C string short
    CHECK(text.rfind("Error from server (" + e.reason() + "): " + e.status_message(), 0) == 0);
    for (const auto& c : e.causes())
      CHECK(text.find("\n* " + (c.field.empty() ? "" : c.field + ": ") + c.message) != std::string::npos);
    CHECK(text.find("(HTTP " + std::to_string(resp.status) + ", GET /api/v1/namespaces/ns/configmaps/motor-config)") !=
          std::string::npos);
  }
}
