// Parsing and validation of user_config.json / env.json. Every rule is checked and every problem collected before
// anything is thrown, so an operator fixes a file in one round instead of one error per run.
#include "mindie/config.h"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "mindie/manifests.h"
#include "util/yaml_json.h"

namespace mindie::config {
namespace json = boost::json;

// ---------------------------------------------------------------------------------------------------------------
// Small shared helpers
// ---------------------------------------------------------------------------------------------------------------

std::string_view to_string(DeployMode m) {
  switch (m) {
    case DeployMode::InferServiceSet: return "infer_service_set";
    case DeployMode::MultiDeployment: return "multi_deployment";
    case DeployMode::SingleContainer: return "single_container";
  }
  return "infer_service_set";
}

std::optional<DeployMode> deploy_mode_from_string(std::string_view s) {
  for (auto m : {DeployMode::InferServiceSet, DeployMode::MultiDeployment, DeployMode::SingleContainer})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

namespace {

// Reads one profile's string map (node_selector, pod_labels), checking label syntax.
std::vector<std::pair<std::string, std::string>> read_label_map(const json::value* v, const std::string& path,
                                                                std::vector<std::string>& problems) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!v) return out;
  if (!v->is_object()) {
    problems.push_back(path + ": must be a mapping of label keys to values");
    return out;
  }
  for (const auto& kv : v->get_object()) {
    const std::string key(kv.key());
    if (!is_qualified_name(key)) problems.push_back(path + "." + key + ": is not a valid label key");
    if (!kv.value().is_string() || !is_label_value(kv.value().get_string()))
      problems.push_back(path + "." + key + ": must be a valid label value (a string)");
    else
      out.emplace_back(key, std::string(kv.value().get_string()));
  }
  return out;
}

}  // namespace

std::vector<HardwareProfile> parse_hardware_profiles(const std::string& yaml_text, const std::string& source) {
  json::value doc;
  try {
    doc = util::yaml_to_json(yaml_text, source);
  } catch (const util::YamlError& e) {
    throw std::invalid_argument(e.what());
  }
  std::vector<std::string> problems;
  std::vector<HardwareProfile> out;
  const json::value* list = doc.is_object() ? doc.get_object().if_contains("profiles") : nullptr;
  if (!doc.is_object() || doc.get_object().size() != 1 || !list || !list->is_array() || list->get_array().empty())
    throw std::invalid_argument(source + ": must be a mapping with one key, profiles: a non-empty list");
  static const std::array<std::string_view, 9> kFields = {"name",         "description",   "npus_per_node",
                                                          "npu_resource", "node_selector", "pod_labels",
                                                          "schedule_policy", "sp_block",
                                                          "mf_transfer_protocol"};
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    const json::value& item = list->get_array()[i];
    std::string path = "profiles[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      problems.push_back(path + ": must be a mapping");
      continue;
    }
    const json::object& o = item.get_object();
    // Name the profile in paths once it has one.
    if (const json::value* n = o.if_contains("name"); n && n->is_string() && !n->get_string().empty())
      path = "profiles." + std::string(n->get_string());
    for (const auto& kv : o)
      if (std::find(kFields.begin(), kFields.end(), kv.key()) == kFields.end())
        problems.push_back(path + "." + std::string(kv.key()) + ": unknown field");
    const auto str = [&](std::string_view key, bool required) -> std::string {
      const json::value* v = o.if_contains(key);
      if (!v) {
        if (required) problems.push_back(path + "." + std::string(key) + ": is required");
        return {};
      }
      if (!v->is_string() || v->get_string().empty()) {
        problems.push_back(path + "." + std::string(key) + ": must be a non-empty string");
        return {};
      }
      return std::string(v->get_string());
    };
    HardwareProfile p;
    p.name = str("name", true);
    p.description = str("description", false);
    p.npu_resource = str("npu_resource", true);
    if (!p.npu_resource.empty() && !is_qualified_name(p.npu_resource))
      problems.push_back(path + ".npu_resource: is not a valid resource name");
    const json::value* n = o.if_contains("npus_per_node");
    if (!n || !n->is_int64() || n->get_int64() < 1 || n->get_int64() > 64)
      problems.push_back(path + ".npus_per_node: must be an integer 1..64");
    else
      p.max_npus_per_pod = static_cast<int>(n->get_int64());
    p.node_selector = read_label_map(o.if_contains("node_selector"), path + ".node_selector", problems);
    if (p.node_selector.empty()) problems.push_back(path + ".node_selector: must select the engine nodes");
    for (const auto& [k, v] : p.node_selector)
      if (k == "accelerator-type") p.accelerator_type = v;
    p.pod_labels = read_label_map(o.if_contains("pod_labels"), path + ".pod_labels", problems);
    p.schedule_policy = str("schedule_policy", false);
    if (!p.schedule_policy.empty() && !is_label_value(p.schedule_policy))
      problems.push_back(path + ".schedule_policy: must look like chip8-node8");
    const std::string rule = str("sp_block", true);
    if (rule == "none") p.sp_block_rule = SpBlockRule::None;
    else if (rule == "pod") p.sp_block_rule = SpBlockRule::PerPod;
    else if (rule == "instance") p.sp_block_rule = SpBlockRule::PerInstance;
    else if (!rule.empty()) problems.push_back(path + ".sp_block: must be none, pod or instance");
    p.sp_block = p.sp_block_rule != SpBlockRule::None;
    p.mf_transfer_protocol = str("mf_transfer_protocol", true);
    if (!p.mf_transfer_protocol.empty() && p.mf_transfer_protocol != "device_rdma" &&
        p.mf_transfer_protocol != "sdma")
      problems.push_back(path + ".mf_transfer_protocol: must be device_rdma or sdma");
    for (const auto& prev : out)
      if (!p.name.empty() && prev.name == p.name) problems.push_back(path + ".name: duplicate profile name");
    out.push_back(std::move(p));
  }
  if (!problems.empty()) {
    std::string msg = source + ": " + std::to_string(problems.size()) + " problem(s)";
    for (const auto& p : problems) msg += "\n* " + p;
    throw std::invalid_argument(msg);
  }
  return out;
}

const std::vector<HardwareProfile>& hardware_profiles() {
  // Parsed once (thread-safe static initialisation). The file is part of the binary, so a problem is a build
  // defect; the unit tests parse it too.
  static const std::vector<HardwareProfile> profiles = [] {
    constexpr std::string_view kPath = "hardware_profiles.yaml";
    const auto& files = manifests::embedded();
    const auto it = files.find(kPath);
    if (it == files.end()) throw std::logic_error("built-in manifest hardware_profiles.yaml is missing");
    try {
      return parse_hardware_profiles(std::string(it->second), "manifests/hardware_profiles.yaml");
    } catch (const std::invalid_argument& e) {
      throw std::logic_error(std::string("built-in manifest is broken: ") + e.what());
    }
  }();
  return profiles;
}

const HardwareProfile* find_hardware_profile(std::string_view name) {
  for (const auto& p : hardware_profiles())
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

/// `s` with control characters as \u00XX: a key holding NUL would otherwise end what() early (a C string) and an
/// ESC would reach the terminal.
std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_what(const std::string& source, const std::vector<Problem>& problems) {
  std::ostringstream os;
  os << printable(source) << ": " << problems.size() << (problems.size() == 1 ? " problem" : " problems");
  for (const auto& p : problems)
    os << "\n* " << (p.path.empty() ? "(document)" : printable(p.path)) << ": " << printable(p.message);
  return os.str();
}

}  // namespace

ValidationError::ValidationError(std::string source, std::vector<Problem> problems)
    : std::runtime_error(format_what(source, problems)), source_(std::move(source)), problems_(std::move(problems)) {}

bool is_dns1123_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  // apimachinery's regex: [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* — no per-part length cap.
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    const std::string_view part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !lower_alnum(part.front()) || !lower_alnum(part.back()) ||
        !std::all_of(part.begin(), part.end(), [&](char c) { return lower_alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_label_value(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool is_qualified_name(std::string_view s) {
  const std::size_t slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    if (!is_dns1123_subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  return !name.empty() && is_label_value(name);
}

std::string describe_value(const json::value& v) {
  std::string text = json::serialize(v);
  if (v.is_double()) {
    // Boost.JSON writes 2.0 as "2E0"; the shortest round-trip form reads like the operator's file.
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_double());
    if (ec == std::errc()) {
      text.assign(buf, end);
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // n: inf/nan never parse from JSON
    }
  }
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean " + text;
    case json::kind::int64:
    case json::kind::uint64: return "integer " + text;
    case json::kind::double_: return "number " + text;
    case json::kind::string: return "string " + text;
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return text;
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Reading JSON text with positions
// ---------------------------------------------------------------------------------------------------------------

// Parses `raw`; on a syntax error returns nullopt and fills `problem` with the line and column of the error.
std::optional<json::value> parse_json(std::string_view raw, Problem& problem) {
  // Python's json module (PyMotor's reader) rejects a byte-order mark too; say so rather than "syntax error".
  if (raw.starts_with("\xEF\xBB\xBF")) {
    problem = {"", "starts with a UTF-8 byte-order mark (BOM); save the file as UTF-8 without BOM"};
    return std::nullopt;
  }
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  json::stream_parser p({}, options);
  json::error_code ec;
  std::size_t consumed = p.write_some(raw.data(), raw.size(), ec);
  if (!ec) p.finish(ec);
  if (!ec) return p.release();
  std::size_t offset = std::min(consumed, raw.size());
  std::size_t line = 1 + std::count(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
  std::size_t line_start = raw.rfind('\n', offset == 0 ? 0 : offset - 1);
  std::size_t column = (line_start == std::string_view::npos || offset == 0) ? offset + 1 : offset - line_start;
  if (raw.empty()) line = 1, column = 1;
  const std::string reason = ec == json::error::too_deep
                                 ? "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"
                                 : ec.message();
  problem = {"", "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
                     reason};
  return std::nullopt;
}


std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// What Boost.JSON's parser lets through, found in a second pass over the text with its SAX interface: a key twice
// in one object (the last silently wins there and in Python's json, PyMotor's reader, so the operator's first value
// is lost without a word) and numbers beyond a double (1e400 reads as infinity). Paths as Reader reports them.
class StructureCheck {
 public:
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  explicit StructureCheck(std::vector<Problem>& problems) : problems_(problems) {}

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return open(true); }
  bool on_object_end(std::size_t, json::error_code&) { return close(); }
  bool on_array_begin(json::error_code&) { return open(false); }
  bool on_array_end(std::size_t, json::error_code&) { return close(); }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) { return key_.append(s), true; }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s);
    Frame& f = stack_.back();
    if (!f.keys.insert(key_).second)
      problems_.push_back({child(f.path, key_), "appears twice in one object: JSON readers keep only the last value, "
                                                "so the first is silently lost; remove one"});
    f.key = std::move(key_);
    key_.clear();
    return true;
  }
  bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, json::error_code&) { return value(), true; }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, json::error_code&) { return value(), true; }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return value(), true; }
  bool on_double(double d, json::string_view text, json::error_code&) {
    const std::string path = value();
    if (!std::isfinite(d))
      problems_.push_back({path, "the number " + std::string(text.substr(0, 40)) +
                                     " is beyond a double's range (it would read as infinity)"});
    return true;
  }
  bool on_bool(bool, json::error_code&) { return value(), true; }
  bool on_null(json::error_code&) { return value(), true; }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    bool object = false;
    std::string path;
    std::set<std::string> keys;
    std::string key;        // the member being read (objects)
    std::size_t index = 0;  // the next element (arrays)
  };
  // The path of the value that starts now, advancing the enclosing array's index.
  std::string value() {
    if (stack_.empty()) return "";
    Frame& f = stack_.back();
    if (f.object) return child(f.path, f.key);
    return f.path + "[" + std::to_string(f.index++) + "]";
  }
  bool open(bool object) {
    std::string path = value();
    stack_.push_back({object, std::move(path), {}, {}, 0});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<Problem>& problems_;
  std::vector<Frame> stack_;
  std::string key_;
};

// StructureCheck's problems of `raw`, which parse_json has accepted.
std::vector<Problem> structure_problems(std::string_view raw) {
  std::vector<Problem> problems;
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  json::basic_parser<StructureCheck> p(options, problems);
  json::error_code ec;
  p.write_some(false, raw.data(), raw.size(), ec);
  return problems;
}

// Collects problems and reads typed fields, reporting wrong types and ranges at their JSON path.
class Reader {
 public:
  explicit Reader(std::vector<Problem>& problems) : problems_(problems) {}

  void add(std::string path, std::string message) { problems_.push_back({std::move(path), std::move(message)}); }

  // The object at obj[key], or nullptr. A present non-object is a problem, as is a missing required section.
  const json::object* object(const json::object* obj, const std::string& path, std::string_view key,
                             bool required) {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    if (!v) {
      if (required && obj) add(child(path, key), "is required (an object)");
      return nullptr;
    }
    if (!v->is_object()) {
      add(child(path, key), "must be an object, got " + describe_value(*v));
      return nullptr;
    }
    return &v->get_object();
  }

  // A JSON integer in [lo, hi]. Floats (even 2.0), numeric strings and booleans are rejected: the runtime
  // components read these fields as integers and deploy.py's int() coercion hid such mistakes.
  std::optional<std::int64_t> integer(const json::object* obj, const std::string& path, std::string_view key,
                                      std::int64_t lo, std::int64_t hi, bool required) {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    const std::string p = child(path, key);
    const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    if (!v) {
      if (required && obj) add(p, "is required (an integer " + range + ")");
      return std::nullopt;
    }
    if (v->is_int64()) {
      std::int64_t i = v->get_int64();
      if (i >= lo && i <= hi) return i;
      add(p, "must be an integer " + range + ", got " + std::to_string(i));
      return std::nullopt;
    }
    if (v->is_uint64()) {
      add(p, "must be an integer " + range + ", got " + describe_value(*v));
      return std::nullopt;
    }
    add(p, "must be a JSON integer " + range + ", got " + describe_value(*v));
    return std::nullopt;
  }

  std::optional<std::string> string(const json::object* obj, const std::string& path, std::string_view key,
                                    bool required) {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    if (!v) {
      if (required && obj) add(child(path, key), "is required (a string)");
      return std::nullopt;
    }
    if (!v->is_string()) {
      add(child(path, key), "must be a string, got " + describe_value(*v));
      return std::nullopt;
    }
    return std::string(v->get_string());
  }

  std::optional<bool> boolean(const json::object* obj, const std::string& path, std::string_view key) {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    if (!v) return std::nullopt;
    if (!v->is_bool()) {
      add(child(path, key), "must be true or false, got " + describe_value(*v));
      return std::nullopt;
    }
    return v->get_bool();
  }

  // A number (integer or not) in [lo, hi].
  std::optional<double> number(const json::object* obj, const std::string& path, std::string_view key, double lo,
                               double hi, bool required) {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    const std::string p = child(path, key);
    if (!v) {
      if (required && obj) add(p, "is required (a number)");
      return std::nullopt;
    }
    if (!v->is_number()) {
      add(p, "must be a number, got " + describe_value(*v));
      return std::nullopt;
    }
    double d = v->to_number<double>();
    if (!(d >= lo && d <= hi)) {
      std::ostringstream os;
      os << "must be between " << lo << " and " << hi << ", got " << json::serialize(*v);
      add(p, os.str());
      return std::nullopt;
    }
    return d;
  }

  // An absolute path (Kubernetes hostPath and mountPath must be absolute; ':' is reserved in mount paths).
  std::optional<std::string> abs_path(const json::object* obj, const std::string& path, std::string_view key) {
    auto s = string(obj, path, key, false);
    if (!s) return std::nullopt;
    if (s->empty() || s->front() != '/' || s->find(':') != std::string::npos ||
        std::any_of(s->begin(), s->end(), [](unsigned char c) { return std::iscntrl(c); })) {
      add(child(path, key), "must be an absolute path without ':' or control characters, got " +
                                describe_value(json::string(*s)));
      return std::nullopt;
    }
    return s;
  }

 private:
  std::vector<Problem>& problems_;
};

// Engine types deploy.py knows and the engine base name each maps to (ConfigMap/runtime naming).
std::optional<std::string> engine_base_of(std::string_view engine_type) {
  if (engine_type == "vllm") return "vllm";
  if (engine_type == "mindie-llm") return "mindie-server";
  if (engine_type == "sglang") return "sglang";
  return std::nullopt;
}

// deploy.py's default engine type when the prefill section names none.
constexpr std::string_view kDefaultEngineType = "mindie-llm";
// deploy.py's log hostPath when no logging_config.host_log_dir is given.
constexpr std::string_view kDefaultHostLogDir = "/root/ascend/log";

// logging_config.host_log_dir of a component section, default kDefaultHostLogDir.
std::string read_host_log_dir(Reader& r, const json::object* section, const std::string& path) {
  const json::object* logging = r.object(section, path, "logging_config", false);
  return r.abs_path(logging, child(path, "logging_config"), "host_log_dir").value_or(std::string(kDefaultHostLogDir));
}

void read_deploy_section(Reader& r, const json::object* deploy, UserConfig& cfg) {
  const std::string path = "motor_deploy_config";

  if (auto job = r.string(deploy, path, "job_id", true)) {
    if (is_dns1123_label(*job))
      cfg.job_id = *job;
    else
      r.add(path + ".job_id",
            "must be a DNS-1123 label (it is the namespace): lower-case letters, digits and '-', starting and "
            "ending with a letter or digit, at most 63 characters; got \"" + *job + "\"");
  }

  if (auto mode = r.string(deploy, path, "deploy_mode", false)) {
    if (auto m = deploy_mode_from_string(*mode))
      cfg.deploy_mode = *m;
    else
      r.add(path + ".deploy_mode",
            "must be one of infer_service_set, multi_deployment, single_container; got \"" + *mode + "\"");
  }

  if (auto image = r.string(deploy, path, "image_name", true)) {
    if (image->empty())
      r.add(path + ".image_name", "must name the container image (it is empty)");
    else if (image->size() > 1024)  // real references are far shorter; this catches pasted junk
      r.add(path + ".image_name", "must be at most 1024 characters, got " + std::to_string(image->size()));
    else if (std::any_of(image->begin(), image->end(),
                         [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); }))
      r.add(path + ".image_name",
            "must not contain whitespace or control characters, got " + describe_value(json::string(*image)));
    else
      cfg.image_name = *image;
  }

  if (auto hw = r.string(deploy, path, "hardware_type", true)) {
    cfg.hardware = find_hardware_profile(*hw);
    if (!cfg.hardware) {
      // The known models come from manifests/hardware_profiles.yaml, so the message follows the data.
      std::string known;
      for (const auto& p : hardware_profiles()) known += (known.empty() ? "" : ", ") + p.name;
      r.add(path + ".hardware_type", "must be one of " + known + "; got \"" + *hw + "\"");
    }
  }

  // PD-hybrid: one union role of hybrid_instances_num instances, prefill and decode at 0 (PyMotor's design).
  const bool hybrid = deploy && deploy->contains("hybrid_instances_num");
  const int max_npus = cfg.hardware ? cfg.hardware->max_npus_per_pod : 16;
  if (hybrid) {
    if (auto n = r.integer(deploy, path, "hybrid_instances_num", 1, 16, true))
      cfg.hybrid_instances = static_cast<int>(*n);
    if (auto n = r.integer(deploy, path, "single_hybrid_instance_pod_num", 1, 64, false))
      cfg.hybrid_pods_per_instance = static_cast<int>(*n);
    if (auto n = r.integer(deploy, path, "hybrid_pod_npu_num", 1, max_npus, true))
      cfg.hybrid_npus_per_pod = static_cast<int>(*n);
    // The union role is an infer-operator role; the other modes have no such workload.
    if (cfg.deploy_mode != DeployMode::InferServiceSet)
      r.add(path + ".hybrid_instances_num", "PD-hybrid (a union role) needs deploy_mode infer_service_set; "
                                            "deploy_mode is " + std::string(to_string(cfg.deploy_mode)));
    // Mixing is ambiguous (which count does scale change?), so the p/d counts may only say 0.
    for (const char* key : {"p_instances_num", "d_instances_num"}) {
      const json::value* v = deploy->if_contains(key);
      if (v && !(v->is_int64() && v->get_int64() == 0))
        r.add(path + "." + key, std::string("must be absent or 0 with hybrid_instances_num (PD-hybrid runs prefill "
                                            "and decode in one union role); got ") + describe_value(*v));
    }
    // Settings of the empty prefill/decode roles would be ignored at best; say so instead.
    for (const char* key : {"single_p_instance_pod_num", "single_d_instance_pod_num", "p_pod_npu_num", "d_pod_npu_num"})
      if (deploy->contains(key))
        r.add(path + "." + key, "is a prefill/decode setting, unused with hybrid_instances_num (PD-hybrid): remove it "
                                "(the union role uses single_hybrid_instance_pod_num and hybrid_pod_npu_num)");
    cfg.p_instances = cfg.d_instances = 0;
  } else {
    // deploy.py and the coordinator accept 1..16 instances per engine role.
    if (auto n = r.integer(deploy, path, "p_instances_num", 1, 16, true)) cfg.p_instances = static_cast<int>(*n);
    if (auto n = r.integer(deploy, path, "d_instances_num", 1, 16, true)) cfg.d_instances = static_cast<int>(*n);
    for (const char* key : {"single_hybrid_instance_pod_num", "hybrid_pod_npu_num"})
      if (deploy && deploy->contains(key))
        r.add(path + "." + key, "is a PD-hybrid setting: it needs hybrid_instances_num");
  }
  if (hybrid) {
    // The empty prefill/decode roles' templates take the union's NPUs (their own settings are refused above).
    cfg.p_npus_per_pod = cfg.d_npus_per_pod = cfg.hybrid_npus_per_pod;
  } else {
    // Pods per instance: one server per pod, so 64 bounds a super-pod sized instance and keeps typos
    // (e.g. 160) from requesting a cluster's worth of pods.
    if (auto n = r.integer(deploy, path, "single_p_instance_pod_num", 1, 64, false))
      cfg.p_pods_per_instance = static_cast<int>(*n);
    if (auto n = r.integer(deploy, path, "single_d_instance_pod_num", 1, 64, false))
      cfg.d_pods_per_instance = static_cast<int>(*n);
    // NPUs per pod cannot exceed what one server of the chosen hardware carries; without a known profile the
    // largest profile bounds the check so the type is still validated.
    if (auto n = r.integer(deploy, path, "p_pod_npu_num", 1, max_npus, true)) cfg.p_npus_per_pod = static_cast<int>(*n);
    if (auto n = r.integer(deploy, path, "d_pod_npu_num", 1, max_npus, true)) cfg.d_npus_per_pod = static_cast<int>(*n);
  }

  if (auto p = r.abs_path(deploy, path, "weight_mount_path")) cfg.weight_mount_path = *p;
  // The coordinator's external NodePort (1025). Absent: infer_service_set takes PyMotor's 31015 (infer-operator
  // refuses a NodePort role Service without one), the other modes let Kubernetes allocate one. 30000..32767 is the
  // API server's default --service-node-port-range; the operator adds the InferService index, always 0 here.
  if (auto n = r.integer(deploy, path, "infer_node_port", 30000, 32767, false))
    cfg.infer_node_port = static_cast<int>(*n);

  const json::object* tls = r.object(deploy, path, "tls_config", false);
  r.object(tls, path + ".tls_config", "north_tls_config", false);
}

// prefill/decode: engine_type, model name, KV transfer switch, bootstrap port, node manager logs.
void read_engine_sections(Reader& r, const json::object& doc, UserConfig& cfg) {
  const json::object* prefill = r.object(&doc, "", "motor_engine_prefill_config", true);
  const json::object* decode = r.object(&doc, "", "motor_engine_decode_config", true);

  std::string engine_type(kDefaultEngineType);
  bool engine_type_ok = true;
  if (auto t = r.string(prefill, "motor_engine_prefill_config", "engine_type", false)) {
    if (engine_base_of(*t)) {
      engine_type = *t;
    } else {
      engine_type_ok = false;
      r.add("motor_engine_prefill_config.engine_type", "must be one of vllm, mindie-llm, sglang; got \"" + *t + "\"");
    }
  }
  if (auto t = r.string(decode, "motor_engine_decode_config", "engine_type", false)) {
    if (!engine_base_of(*t))
      r.add("motor_engine_decode_config.engine_type", "must be one of vllm, mindie-llm, sglang; got \"" + *t + "\"");
    else if (engine_type_ok && prefill && *t != engine_type)
      r.add("motor_engine_decode_config.engine_type",
            "must match motor_engine_prefill_config.engine_type (\"" + engine_type + "\"); got \"" + *t + "\"");
  }
  if (engine_type_ok) {
    cfg.engine_type = engine_type;
    cfg.engine_base = *engine_base_of(engine_type);
    cfg.mf_store = engine_type == "sglang";  // deploy.py: sglang engines get an mf-store
  }

  const json::object* prefill_engine = nullptr;
  for (auto [section, name] : {std::pair{prefill, "motor_engine_prefill_config"},
                               std::pair{decode, "motor_engine_decode_config"}}) {
    const std::string path = name;
    const json::object* model = r.object(section, path, "model_config", false);
    auto model_name = r.string(model, path + ".model_config", "model_name", false);
    if (section == prefill && model_name) cfg.model_name = *model_name;
    const json::object* engine = r.object(section, path, "engine_config", false);
    if (section == prefill) prefill_engine = engine;
    const json::object* kv = r.object(engine, path + ".engine_config", "kv_transfer_config", false);
    auto connector = r.string(kv, path + ".engine_config.kv_transfer_config", "kv_connector", false);
    // deploy.py turns the KV pool on from the prefill section's connector only.
    if (section == prefill && connector && *connector == "MultiConnector") cfg.kv_pool = true;
    r.object(section, path, "motor_nodemanger_config", false);
  }

  // deploy.py passes the prefill bootstrap port to the coordinator verbatim; accept its two spellings.
  if (const json::value* v = prefill_engine ? prefill_engine->if_contains("disaggregation_bootstrap_port") : nullptr) {
    const std::string path = "motor_engine_prefill_config.engine_config.disaggregation_bootstrap_port";
    auto port_text = [](std::string_view s) {
      return !s.empty() && s.size() <= 5 &&
             std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }) &&
             std::stoi(std::string(s)) >= 1 && std::stoi(std::string(s)) <= 65535;
    };
    if (v->is_int64() && v->get_int64() >= 1 && v->get_int64() <= 65535)
      cfg.disaggregation_bootstrap_port = std::to_string(v->get_int64());
    else if (v->is_string() && port_text(v->get_string()))
      cfg.disaggregation_bootstrap_port = std::string(v->get_string());
    else
      r.add(path, "must be a port 1..65535, got " + describe_value(*v));
  }

  // Engine logs: deploy.py reads the node manager's logging_config (top-level section; the published examples
  // also nest it in the prefill section).
  const json::object* nodemanager = r.object(&doc, "", "motor_nodemanger_config", false);
  std::string nm_path = "motor_nodemanger_config";
  if (!nodemanager && prefill && prefill->contains("motor_nodemanger_config") &&
      prefill->at("motor_nodemanger_config").is_object()) {
    nodemanager = &prefill->at("motor_nodemanger_config").get_object();
    nm_path = "motor_engine_prefill_config.motor_nodemanger_config";
  }
  cfg.engine_log_dir = read_host_log_dir(r, nodemanager, nm_path);
}

void read_optional_components(Reader& r, const json::object& doc, UserConfig& cfg) {
  const json::object* pool = r.object(&doc, "", "kv_cache_pool_config", false);
  if (cfg.kv_pool && pool) {
    const std::string path = "kv_cache_pool_config";
    if (auto port = r.integer(pool, path, "port", 1, 65535, false)) cfg.kv_pool_port = static_cast<int>(*port);
    r.number(pool, path, "eviction_high_watermark_ratio", 0.0, 1.0, true);
    r.number(pool, path, "eviction_ratio", 0.0, 1.0, true);
  } else if (cfg.kv_pool && !doc.contains("kv_cache_pool_config")) {
    r.add("kv_cache_pool_config",
          "is required (an object with port, eviction_high_watermark_ratio, eviction_ratio) because "
          "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector is \"MultiConnector\" "
          "(KV pool on)");
  }

  const json::object* conductor = r.object(&doc, "", "kv_conductor_config", false);
  if (auto port = r.integer(conductor, "kv_conductor_config", "http_server_port", 0, 65535, false)) {
    cfg.kv_conductor_port = static_cast<int>(*port);
    cfg.kv_conductor = *port != 0;
  }

}

// The settings update-config may change while pods run (they re-read user_config.json every 10 s), so a wrong
// type or value would reach live components: check each one's type and range (the paths are the published
// deployer's update whitelist).
void read_runtime_settings(Reader& r, const json::object& doc) {
  // Sections whose shape other readers already report are looked up silently here, so no problem is doubled.
  const auto peek = [](const json::object* obj, std::string_view key) -> const json::object* {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    return v && v->is_object() ? &v->get_object() : nullptr;
  };
  // Python logging's level names, which PyMotor's components pass to logging (case-insensitive there too).
  const auto log_level = [&](const json::object* section, const std::string& path) {
    const json::object* logging = peek(section, "logging_config");
    const std::string lpath = child(path, "logging_config");
    if (auto level = r.string(logging, lpath, "log_level", false)) {
      std::string upper = *level;
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
      static const std::array<std::string_view, 6> kLevels = {"DEBUG", "INFO", "WARNING", "WARN", "ERROR",
                                                              "CRITICAL"};
      if (std::find(kLevels.begin(), kLevels.end(), upper) == kLevels.end())
        r.add(child(lpath, "log_level"),
              "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL; got " + describe_value(json::string(*level)));
    }
  };
  constexpr double kMaxSeconds = 7 * 24 * 3600.0;  // a week: longer timeouts are typos
  const json::object* controller = peek(&doc, "motor_controller_config");
  log_level(controller, "motor_controller_config");
  const json::object* observability =
      r.object(controller, "motor_controller_config", "observability_config", false);
  r.boolean(observability, "motor_controller_config.observability_config", "observability_enable");
  r.number(observability, "motor_controller_config.observability_config", "metrics_ttl", 1, kMaxSeconds, false);

  const json::object* coordinator = peek(&doc, "motor_coordinator_config");
  log_level(coordinator, "motor_coordinator_config");
  const std::string epath = "motor_coordinator_config.exception_config";
  const json::object* exception = r.object(coordinator, "motor_coordinator_config", "exception_config", false);
  r.integer(exception, epath, "max_retry", 0, 100, false);
  for (const char* key : {"retry_delay", "first_token_timeout", "infer_timeout"})
    r.number(exception, epath, key, 0, kMaxSeconds, false);
  const std::string tpath = "motor_coordinator_config.timeout_config";
  const json::object* timeouts = r.object(coordinator, "motor_coordinator_config", "timeout_config", false);
  for (const char* key : {"request_timeout", "connection_timeout", "read_timeout", "write_timeout",
                          "keep_alive_timeout"})
    r.number(timeouts, tpath, key, 0, kMaxSeconds, false);

  log_level(peek(&doc, "motor_nodemanger_config"), "motor_nodemanger_config");

  const json::object* north = r.object(&doc, "", "north_config", false);
  r.string(north, "north_config", "name", false);
  if (auto ip = r.string(north, "north_config", "ip", false); ip && ip->empty())
    r.add("north_config.ip", "must not be empty");
  r.integer(north, "north_config", "port", 1, 65535, false);

  const json::object* north_tls = peek(peek(peek(&doc, "motor_deploy_config"), "tls_config"), "north_tls_config");
  const std::string npath = "motor_deploy_config.tls_config.north_tls_config";
  r.boolean(north_tls, npath, "enable_tls");
  for (const char* key : {"ca_file", "cert_file", "key_file", "passwd_file", "crl_file"})
    r.string(north_tls, npath, key, false);
}

}  // namespace

UserConfig parse_user_config(std::string raw, std::string_view source) {
  std::vector<Problem> problems;
  Problem syntax;
  auto parsed = parse_json(raw, syntax);
  if (!parsed) throw ValidationError(std::string(source), {syntax});
  if (!parsed->is_object())
    throw ValidationError(std::string(source), {{"", "must be a JSON object, got " + describe_value(*parsed)}});

  UserConfig cfg;
  problems = structure_problems(raw);
  cfg.raw = std::move(raw);
  cfg.doc = std::move(parsed->get_object());
  Reader r(problems);

  const json::object* deploy = r.object(&cfg.doc, "", "motor_deploy_config", true);
  read_deploy_section(r, deploy, cfg);

  const json::object* controller = r.object(&cfg.doc, "", "motor_controller_config", true);
  const json::object* coordinator = r.object(&cfg.doc, "", "motor_coordinator_config", true);
  // Master/standby runs two pods of the component (deploy.py).
  const json::object* c_standby = r.object(controller, "motor_controller_config", "standby_config", false);
  cfg.controller_standby =
      r.boolean(c_standby, "motor_controller_config.standby_config", "enable_master_standby").value_or(false);
  const json::object* o_standby = r.object(coordinator, "motor_coordinator_config", "standby_config", false);
  cfg.coordinator_standby =
      r.boolean(o_standby, "motor_coordinator_config.standby_config", "enable_master_standby").value_or(false);
  cfg.controller_log_dir = read_host_log_dir(r, controller, "motor_controller_config");
  cfg.coordinator_log_dir = read_host_log_dir(r, coordinator, "motor_coordinator_config");

  read_engine_sections(r, cfg.doc, cfg);
  read_optional_components(r, cfg.doc, cfg);
  read_runtime_settings(r, cfg.doc);

  if (!problems.empty()) throw ValidationError(std::string(source), std::move(problems));
  return cfg;
}

EnvConfig parse_env_config(std::string raw, std::string_view source) {
  Problem syntax;
  auto parsed = parse_json(raw, syntax);
  if (!parsed) throw ValidationError(std::string(source), {syntax});
  if (!parsed->is_object())
    throw ValidationError(std::string(source), {{"", "must be a JSON object, got " + describe_value(*parsed)}});

  // Each section becomes a bash function exporting its variables (deploy.py), so names must be shell
  // identifiers and values scalars; "version" is the file's format tag.
  auto shell_name = [](std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  };
  std::vector<Problem> problems = structure_problems(raw);
  for (const auto& section : parsed->get_object()) {
    const std::string name(section.key());
    if (name == "version") {
      if (!section.value().is_string())
        problems.push_back({name, "must be a string, got " + describe_value(section.value())});
      continue;
    }
    if (!section.value().is_object()) {
      problems.push_back({name, "must be an object of variables, got " + describe_value(section.value())});
      continue;
    }
    for (const auto& var : section.value().get_object()) {
      const std::string path = name + "." + std::string(var.key());
      if (!shell_name(var.key()))
        problems.push_back({path, "is not a valid environment variable name"});
      const auto& v = var.value();
      if (!(v.is_string() || v.is_number() || v.is_bool()))
        problems.push_back({path, "must be a string, number or boolean, got " + describe_value(v)});
      // The environment is a list of C strings: bash drops everything from a NUL on (with a warning).
      else if (v.is_string() && v.get_string().find('\0') != json::string::npos)
        problems.push_back({path, "contains a NUL character (\\u0000), which no environment variable can hold"});
    }
  }
  if (!problems.empty()) throw ValidationError(std::string(source), std::move(problems));
  EnvConfig env;
  env.raw = std::move(raw);
  env.doc = std::move(parsed->get_object());
  return env;
}

// ---------------------------------------------------------------------------------------------------------------
// diff_paths
// ---------------------------------------------------------------------------------------------------------------

namespace {

bool same_scalar(const json::value& a, const json::value& b) {
  // 5 stored as int64 and as uint64 are the same JSON number; 5 and 5.0 are not the same input.
  if (a.is_int64() && b.is_uint64()) return a.get_int64() >= 0 && static_cast<std::uint64_t>(a.get_int64()) == b.get_uint64();
  if (a.is_uint64() && b.is_int64()) return same_scalar(b, a);
  return a == b;
}

void diff(const json::value& a, const json::value& b, const std::string& path, std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    const auto& oa = a.get_object();
    const auto& ob = b.get_object();
    for (const auto& kv : oa) {
      const std::string p = child(path, kv.key());
      if (const json::value* other = ob.if_contains(kv.key()))
        diff(kv.value(), *other, p, out);
      else
        out.push_back(p);
    }
    for (const auto& kv : ob)
      if (!oa.contains(kv.key())) out.push_back(child(path, kv.key()));
    return;
  }
  if (a.is_array() && b.is_array()) {
    const auto& aa = a.get_array();
    const auto& ab = b.get_array();
    // deploy.py's update check: a list whose length changes counts as a change of the list itself.
    if (aa.size() != ab.size()) {
      out.push_back(path);
      return;
    }
    for (std::size_t i = 0; i < aa.size(); ++i) diff(aa[i], ab[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (!same_scalar(a, b)) out.push_back(path);
}

}  // namespace

std::vector<std::string> diff_paths(const json::value& a, const json::value& b) {
  std::vector<std::string> out;
  diff(a, b, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// replace_json_number
// ---------------------------------------------------------------------------------------------------------------

namespace {

// basic_parser handler that tracks the current path and records the byte span of the number at `target`.
// The string_views handed to the number callbacks point into the input buffer (one write of the whole text),
// so the span is exact without re-tokenising.
struct NumberLocator {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  struct Frame {
    bool array;
    std::size_t index;  // next element index for arrays
    std::string key;    // current key for objects
  };

  std::string_view input;
  std::string target;
  std::vector<Frame> stack;
  std::string key_buf;
  const char* number_begin = nullptr;  // set by on_number_part when a number arrives in pieces
  bool found = false;
  bool found_non_number = false;
  std::size_t begin = 0, end = 0;

  std::string current_path() const {
    std::string p;
    for (const auto& f : stack) {
      if (f.array)
        p += "[" + std::to_string(f.index) + "]";
      else
        p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }
  // Called after each complete value: advances the enclosing array's index.
  void value_done() {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  }
  void scalar_at_path() {
    if (current_path() == target) found_non_number = true, found = false;
  }
  bool number(std::string_view s) {
    const char* first = number_begin ? number_begin : s.data();
    const char* last = s.data() + s.size();
    number_begin = nullptr;
    if (current_path() == target) {
      if (first < input.data() || last > input.data() + input.size() || first > last) return false;
      // The last occurrence wins, as in boost::json::parse of duplicate keys.
      found = true;
      found_non_number = false;
      begin = static_cast<std::size_t>(first - input.data());
      end = static_cast<std::size_t>(last - input.data());
    }
    value_done();
    return true;
  }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) {
    scalar_at_path();
    stack.push_back({false, 0, {}});
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    stack.pop_back();
    value_done();
    return true;
  }
  bool on_array_begin(json::error_code&) {
    scalar_at_path();
    stack.push_back({true, 0, {}});
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    stack.pop_back();
    value_done();
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_buf.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    key_buf.append(s.data(), s.size());
    stack.back().key = std::move(key_buf);
    key_buf.clear();
    return true;
  }
  bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, json::error_code&) {
    scalar_at_path();
    value_done();
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    if (!number_begin) number_begin = s.data();
    return true;
  }
  bool on_int64(std::int64_t, json::string_view s, json::error_code&) { return number({s.data(), s.size()}); }
  bool on_uint64(std::uint64_t, json::string_view s, json::error_code&) { return number({s.data(), s.size()}); }
  bool on_double(double, json::string_view s, json::error_code&) { return number({s.data(), s.size()}); }
  bool on_bool(bool, json::error_code&) {
    scalar_at_path();
    value_done();
    return true;
  }
  bool on_null(json::error_code&) {
    scalar_at_path();
    value_done();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

}  // namespace

std::string replace_json_number(std::string_view raw, std::string_view path, std::int64_t value) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  json::basic_parser<NumberLocator> parser(options);
  auto& h = parser.handler();
  h.input = raw;
  h.target = std::string(path);
  json::error_code ec;
  std::size_t consumed = parser.write_some(false, raw.data(), raw.size(), ec);
  if (ec || consumed != raw.size()) throw std::invalid_argument("not valid JSON: " + ec.message());
  if (!h.found)
    throw std::invalid_argument("\"" + std::string(path) + "\" " +
                                (h.found_non_number ? "does not hold a number" : "is not in the document"));
  std::string out;
  out.reserve(raw.size() + 20);
  out.append(raw.substr(0, h.begin));
  out.append(std::to_string(value));
  out.append(raw.substr(h.end));
  return out;
}

}  // namespace mindie::config
