// The one validation reader; see reader.h.
#include "validation/reader.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "kube/limits.h"
#include "kube/names.h"
#include "util/json_path.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace mindie::validation {
namespace json = boost::json;
using util::child_path;

std::string describe_value(const json::value& v, Notation notation) {
  // Boost.JSON writes 2.0 as "2E0"; the shortest round-trip form reads like the operator's file.
  std::string text = v.is_double() ? util::float_text(v.get_double()) : json::serialize(v);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  const bool yaml = notation == Notation::Yaml;
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean " + text;
    case json::kind::int64:
    case json::kind::uint64: return "integer " + text;
    case json::kind::double_: return "number " + text;
    case json::kind::string: return "string " + text;
    case json::kind::array: return yaml ? "a list" : "an array";
    case json::kind::object: return yaml ? "a mapping" : "an object";
  }
  return text;
}

void Reader::add_all(std::vector<Problem> more) {
  for (auto& p : more) problems_.push_back(std::move(p));
}

void Reader::throw_if_any(std::string_view source) {
  if (!problems_.empty()) throw ValidationError(std::string(source), std::move(problems_));
}

std::string Reader::object_word() const { return notation_ == Notation::Yaml ? "a mapping" : "an object"; }

const json::object* Reader::object(const json::value& v, const std::string& path) {
  if (v.is_object()) return &v.get_object();
  add(path, "must be " + object_word() + ", got " + describe(v));
  return nullptr;
}

const json::array* Reader::array(const json::value& v, const std::string& path) {
  if (v.is_array()) return &v.get_array();
  add(path, std::string(notation_ == Notation::Yaml ? "must be a list" : "must be an array") + ", got " + describe(v));
  return nullptr;
}

std::optional<std::string> Reader::string(const json::value& v, const std::string& path) {
  if (v.is_string()) return std::string(v.get_string());
  add(path, "must be a string, got " + describe(v));
  return std::nullopt;
}

std::optional<bool> Reader::boolean(const json::value& v, const std::string& path) {
  if (v.is_bool()) return v.get_bool();
  add(path, "must be true or false, got " + describe(v));
  return std::nullopt;
}

std::optional<std::int64_t> Reader::integer(const json::value& v, const std::string& path, std::int64_t lo,
                                            std::int64_t hi, std::string_view hint) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (v.is_int64()) {
    const std::int64_t i = v.get_int64();
    if (i >= lo && i <= hi) return i;
    add(path, "must be an integer " + range + ", got " + std::to_string(i) + std::string(hint));
  } else if (v.is_uint64()) {
    add(path, "must be an integer " + range + ", got " + describe(v));
  } else if (notation_ == Notation::Json) {
    add(path, "must be a JSON integer " + range + ", got " + describe(v));
  } else {
    // A quoted number is the likely mistake behind a string; say how to fix it.
    add(path, std::string(v.is_string() ? "must be an integer (unquoted) " : "must be an integer ") + range + ", got " +
                  describe(v));
  }
  return std::nullopt;
}

std::optional<double> Reader::number(const json::value& v, const std::string& path, double lo, double hi) {
  if (!v.is_number()) {
    add(path, "must be a number, got " + describe(v));
    return std::nullopt;
  }
  const double d = v.to_number<double>();
  if (!(d >= lo && d <= hi)) {
    std::ostringstream os;
    os << "must be between " << lo << " and " << hi << ", got "
       << (v.is_double() ? util::float_text(d) : json::serialize(v));
    add(path, os.str());
    return std::nullopt;
  }
  return d;
}

std::optional<std::string> Reader::abs_path(const json::value& v, const std::string& path) {
  auto s = string(v, path);
  if (!s) return std::nullopt;
  if (s->empty() || s->front() != '/' || s->find(':') != std::string::npos ||
      std::any_of(s->begin(), s->end(), [](unsigned char c) { return std::iscntrl(c); })) {
    add(path, "must be an absolute path without ':' or control characters, got " + describe(v));
    return std::nullopt;
  }
  return s;
}

namespace {

// Host folders a hostPath must not be nor lie in: a pod mounting one reads (or, for the read-write log folders,
// writes) the host's system files, credentials (/etc/kubernetes, the kubelet's pod secrets) or the container runtime's
// socket (/run, /var/run). The Pod Security Standards' "baseline" profile forbids hostPath volumes altogether for
// that reason (kubernetes/website content/en/docs/concepts/security/pod-security-standards.md, "HostPath Volumes").
constexpr std::string_view kSystemFolders[] = {"/bin",
                                               "/boot",
                                               "/dev",
                                               "/etc",
                                               "/lib",
                                               "/lib32",
                                               "/lib64",
                                               "/libx32",
                                               "/proc",
                                               "/run",
                                               "/sbin",
                                               "/sys",
                                               "/usr",
                                               "/var/run",
                                               "/var/lib/kubelet",
                                               "/var/lib/containerd",
                                               "/var/lib/docker",
                                               "/var/lib/etcd"};
// Folders whose sub-folders are users' and services' own (/root/ascend/log is deploy.py's log folder): one of those
// is fine, the whole is every user's keys.
constexpr std::string_view kWholeFolders[] = {"/", "/root", "/home", "/var", "/var/lib"};

// The components of a path between its '/'s, the empty ones included.
std::vector<std::string_view> path_parts(std::string_view p) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t slash = p.find('/', start);
    parts.push_back(p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// `p` without empty and "." components ("//etc/." is "/etc"); "/" for the root.
std::string folded_path(std::string_view p) {
  std::string out;
  for (const auto part : path_parts(p))
    if (!part.empty() && part != ".") out += "/" + std::string(part);
  return out.empty() ? "/" : out;
}

}  // namespace

std::optional<std::string> Reader::host_path(const json::value& v, const std::string& path) {
  auto s = abs_path(v, path);
  if (!s) return std::nullopt;
  const auto parts = path_parts(*s);
  if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
    // As Kubernetes refuses ".." in a hostPath (kubernetes/kubernetes pkg/apis/core/validation/validation.go,
    // validatePathNoBacksteps): what it names depends on how it is read.
    add(path, "must not contain '..', got " + describe(v));
    return std::nullopt;
  }
  const std::string folded = folded_path(*s);
  for (const auto whole : kWholeFolders)
    if (folded == whole) {
      add(path, "must not be the whole of the host's " + std::string(whole) +
                    ": it is mounted from the host into the pods; name a folder of its own (such as /mnt/weight)");
      return std::nullopt;
    }
  for (const auto sys : kSystemFolders)
    if (folded == sys || folded.starts_with(std::string(sys) + "/")) {
      add(path, "is the host's " + std::string(sys) + (folded == sys ? "" : " (a folder in it)") +
                    ", a system folder: it is mounted from the host into the pods, which would read (or write) the "
                    "host's own files; name a folder of its own (such as /mnt/weight)");
      return std::nullopt;
    }
  return s;
}

std::optional<std::string> Reader::quantity(const json::value& v, const std::string& path) {
  std::string text;
  if (v.is_int64() && v.get_int64() < 0) {
    add(path, "must not be negative, got " + std::to_string(v.get_int64()));
    return std::nullopt;
  }
  if (v.is_int64()) {
    text = std::to_string(v.get_int64());
  } else if (v.is_string()) {
    text = std::string(v.get_string());
  } else {
    add(path, "must be a quantity such as \"500m\", \"4\" or \"64Gi\" (quote decimals), got " + describe(v));
    return std::nullopt;
  }
  if (!kube::parse_quantity(text)) {
    add(path, "\"" + text + "\" is not a non-negative quantity (such as \"500m\", \"4\", \"64Gi\")");
    return std::nullopt;
  }
  return text;
}

StringMap Reader::string_map(const json::value& v, const std::string& path, MapKind kind) {
  StringMap out;
  const json::object* m = object(v, path);
  if (!m) return out;
  std::size_t total = 0;  // annotations: every string entry counts, valid or not, so the size is told in one round
  for (const auto& kv : *m) {
    const std::string p = child_path(path, kv.key());
    bool ok = true;
    if (!kube::is_qualified_name(kv.key())) {
      add(p, "key must be " + std::string(kube::kQualifiedNameRule));
      ok = false;
    }
    if (!kv.value().is_string()) {
      // YAML reads `version: 2` and `enabled: true` as a number and a boolean: quoting them is the fix.
      const bool scalar = kv.value().is_number() || kv.value().is_bool();
      add(p, "must be a string, got " + describe(kv.value()) + (scalar ? " (quote it)" : ""));
      continue;
    }
    const std::string value(kv.value().get_string());
    total += kv.key().size() + value.size();
    if (kind != MapKind::Annotations && !kube::is_label_value(value)) {
      add(p, "must be " + std::string(kube::kLabelValueRule) + "; got " + json::serialize(kv.value()));
      ok = false;
    }
    if (ok) out.emplace_back(std::string(kv.key()), value);
  }
  // apimachinery ValidateAnnotations: keys and values together at most 256 KiB per object.
  if (kind == MapKind::Annotations) {
    if (total > kube::kMaxAnnotationsBytes)
      add(path, "must total at most 256 KiB (keys and values), got " + std::to_string(total) + " bytes");
  }
  return out;
}

void Reader::only(const json::object* o, const std::string& path, std::span<const std::string_view> known) {
  if (!o) return;
  const std::string list = util::join(known, ", ");
  for (const auto& kv : *o)
    if (std::find(known.begin(), known.end(), kv.key()) == known.end())
      add(child_path(path, kv.key()), "is not a known key; expected one of: " + list);
}

const json::value* Reader::field(const json::object* obj, const std::string& path, std::string_view key, bool required,
                                 std::string_view expected) {
  const json::value* v = obj ? obj->if_contains(key) : nullptr;
  if (!v && required && obj) add(child_path(path, key), "is required (" + std::string(expected) + ")");
  return v;
}

const json::object* Reader::object(const json::object* obj, const std::string& path, std::string_view key,
                                   bool required) {
  const json::value* v = field(obj, path, key, required, object_word());
  return v ? object(*v, child_path(path, key)) : nullptr;
}

std::optional<std::string> Reader::string(const json::object* obj, const std::string& path, std::string_view key,
                                          bool required) {
  const json::value* v = field(obj, path, key, required, "a string");
  return v ? string(*v, child_path(path, key)) : std::nullopt;
}

std::optional<bool> Reader::boolean(const json::object* obj, const std::string& path, std::string_view key) {
  const json::value* v = field(obj, path, key, false, "");
  return v ? boolean(*v, child_path(path, key)) : std::nullopt;
}

std::optional<std::int64_t> Reader::integer(const json::object* obj, const std::string& path, std::string_view key,
                                            std::int64_t lo, std::int64_t hi, bool required) {
  const json::value* v = field(obj, path, key, required,
                               "an integer " + std::to_string(lo) + ".." + std::to_string(hi));
  return v ? integer(*v, child_path(path, key), lo, hi) : std::nullopt;
}

std::optional<double> Reader::number(const json::object* obj, const std::string& path, std::string_view key, double lo,
                                     double hi, bool required) {
  const json::value* v = field(obj, path, key, required, "a number");
  return v ? number(*v, child_path(path, key), lo, hi) : std::nullopt;
}

std::optional<std::string> Reader::abs_path(const json::object* obj, const std::string& path, std::string_view key,
                                            bool required) {
  const json::value* v = field(obj, path, key, required, "a string");
  return v ? abs_path(*v, child_path(path, key)) : std::nullopt;
}

std::optional<std::string> Reader::host_path(const json::object* obj, const std::string& path, std::string_view key,
                                             bool required) {
  const json::value* v = field(obj, path, key, required, "a string");
  return v ? host_path(*v, child_path(path, key)) : std::nullopt;
}

std::optional<std::string> Reader::image(const json::object* obj, const std::string& path, std::string_view key,
                                         bool required) {
  auto s = string(obj, path, key, required);
  if (!s) return std::nullopt;
  const std::string p = child_path(path, key);
  if (s->empty()) add(p, "must name the container image (it is empty)");
  else if (s->size() > 1024) add(p, "must be at most 1024 characters, got " + std::to_string(s->size()));
  else if (std::any_of(s->begin(), s->end(), [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); }))
    add(p, "must not contain whitespace or control characters, got " + describe(json::string(*s)));
  else return s;
  return std::nullopt;
}

StringMap Reader::string_map(const json::object* obj, const std::string& path, std::string_view key, MapKind kind) {
  const json::value* v = field(obj, path, key, false, "");
  return v ? string_map(*v, child_path(path, key), kind) : StringMap{};
}

}  // namespace mindie::validation
