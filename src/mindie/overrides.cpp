// Parsing and validation of deploy --overrides files. Every problem is collected before anything is thrown, as for
// user_config.json. The rules mirror Kubernetes' own validation of the same fields (k8s.io/apimachinery label and
// annotation rules, k8s.io/kubernetes pkg/apis/core/validation for tolerations, volumes and mounts) so a file that
// passes here renders objects the API server accepts.
#include "mindie/overrides.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "kube/names.h"
#include "mindie/render.h"
#include "util/json_path.h"
#include "util/strings.h"
#include "util/yaml_json.h"
#include "validation/json_document.h"
#include "validation/reader.h"

namespace mindie::overrides {
namespace json = boost::json;
using util::child_path;
using util::item_path;
using validation::Reader;

namespace {

// Fields of a role's overrides, in the order the reference lists them.
constexpr std::array<std::string_view, 10> kRoleFields = {"resources",    "labels",          "annotations",
                                                          "nodeSelector", "tolerations",     "volumes",
                                                          "volumeMounts", "faultScheduling", "faultRetryTimes",
                                                          "gangSchedule"};

// No ".." path element, no control characters (Kubernetes rejects ".." in hostPath, subPath and item paths).
bool relative_path_ok(std::string_view p) {
  if (std::any_of(p.begin(), p.end(), [](unsigned char c) { return std::iscntrl(c); })) return false;
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t slash = p.find('/', start);
    const std::size_t len = slash == std::string_view::npos ? std::string_view::npos : slash - start;
    const std::string_view part = p.substr(start, len);
    if (part == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

// An absolute path as Kubernetes accepts it for hostPath/mountPath: starts with '/', no ".." element.
bool absolute_path(std::string_view p) { return !p.empty() && p.front() == '/' && relative_path_ok(p); }

// labels, annotations, nodeSelector: Kubernetes' key and value rules (validation::Reader::string_map).
void read_string_map(Reader& r, const json::value& v, const std::string& path, Reader::MapKind kind,
                     json::object& out) {
  for (auto& [key, value] : r.string_map(v, path, kind)) out[key] = std::move(value);
}

void read_resources(Reader& r, const json::value& v, const std::string& path, RoleOverrides& out) {
  const json::object* o = r.object(v, path);
  if (!o) return;
  r.only(o, path, std::array<std::string_view, 2>{"requests", "limits"});
  for (auto [key, target] : {std::pair{"requests", &out.requests}, std::pair{"limits", &out.limits}}) {
    const json::value* list = o->if_contains(key);
    if (!list) continue;
    const std::string lpath = child_path(path, key);
    const json::object* m = r.object(*list, lpath);
    if (!m) continue;
    for (const auto& kv : *m) {
      const std::string p = child_path(lpath, kv.key());
      if (!kube::is_qualified_name(kv.key())) {
        r.add(p, "is not a valid resource name (cpu, memory, ephemeral-storage, hugepages-2Mi, example.com/gpu)");
        continue;
      }
      if (auto q = r.quantity(kv.value(), p)) (*target)[kv.key()] = *q;
    }
  }
  // Kubernetes rejects a request above its limit (core validation, ResourceRequirements).
  for (const auto& kv : out.requests) {
    const json::value* limit = out.limits.if_contains(kv.key());
    if (limit && *kube::parse_quantity(kv.value().get_string()) > *kube::parse_quantity(limit->get_string()))
      r.add(child_path(child_path(path, "requests"), kv.key()), "request " + std::string(kv.value().get_string()) +
                                                                    " exceeds the limit " +
                                                                    std::string(limit->get_string()));
  }
}

void read_tolerations(Reader& r, const json::value& v, const std::string& path, json::array& out) {
  const json::array* a = r.array(v, path);
  if (!a) return;
  static constexpr std::array<std::string_view, 5> kFields = {"key", "operator", "value", "effect",
                                                              "tolerationSeconds"};
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string p = item_path(path, i);
    const json::object* t = r.object((*a)[i], p);
    if (!t) continue;
    r.only(t, p, kFields);
    json::object norm;
    bool ok = true;
    const auto str = [&](std::string_view key) -> std::string {
      const json::value* f = t->if_contains(key);
      if (!f) return {};
      auto s = r.string(*f, child_path(p, key));
      ok = ok && s.has_value();
      return s.value_or("");
    };
    const std::string key = str("key"), op = str("operator"), value = str("value"), effect = str("effect");
    if (!key.empty() && !kube::is_qualified_name(key))
      r.add(child_path(p, "key"), "is not a valid taint key"), ok = false;
    if (!op.empty() && op != "Exists" && op != "Equal")
      r.add(child_path(p, "operator"), "must be Exists or Equal, got \"" + op + "\""), ok = false;
    const bool exists = op == "Exists";
    if (key.empty() && !exists)
      r.add(child_path(p, "operator"), "must be Exists when key is empty (a toleration of every taint)"), ok = false;
    if (exists && !value.empty()) r.add(child_path(p, "value"), "must be empty when operator is Exists"), ok = false;
    if (!exists && !kube::is_label_value(value))
      r.add(child_path(p, "value"), "is not a valid taint value"), ok = false;
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute")
      r.add(child_path(p, "effect"), "must be NoSchedule, PreferNoSchedule or NoExecute, got \"" + effect + "\""),
          ok = false;
    std::optional<std::int64_t> seconds;
    if (const json::value* s = t->if_contains("tolerationSeconds")) {
      seconds = r.integer(*s, child_path(p, "tolerationSeconds"), 0, 31536000);
      ok = ok && seconds.has_value();
      if (seconds && effect != "NoExecute")
        r.add(child_path(p, "tolerationSeconds"), "needs effect NoExecute (Kubernetes ignores it otherwise)"),
            ok = false;
    }
    if (!ok) continue;
    if (!key.empty()) norm["key"] = key;
    norm["operator"] = exists ? "Exists" : "Equal";
    if (!exists) norm["value"] = value;
    if (!effect.empty()) norm["effect"] = effect;
    if (seconds) norm["tolerationSeconds"] = *seconds;
    out.push_back(std::move(norm));
  }
}

// A volume's items ([{key, path, mode}]) and defaultMode, shared by configMap and secret.
void read_projection(Reader& r, const json::object& src, const std::string& p, json::object& norm) {
  if (const json::value* m = src.if_contains("defaultMode"))
    if (auto mode = r.integer(*m, child_path(p, "defaultMode"), 0, 0777, " (a file mode, 0o0..0o777)"))
      norm["defaultMode"] = *mode;
  if (const json::value* o = src.if_contains("optional"))
    if (auto b = r.boolean(*o, child_path(p, "optional"))) norm["optional"] = *b;
  if (const json::value* items = src.if_contains("items")) {
    const json::array* a = r.array(*items, child_path(p, "items"));
    if (!a) return;
    json::array out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const std::string ip = item_path(child_path(p, "items"), i);
      const json::object* it = r.object((*a)[i], ip);
      if (!it) continue;
      r.only(it, ip, std::array<std::string_view, 3>{"key", "path", "mode"});
      json::object n;
      const json::value* key = r.field(it, ip, "key", true, "a string");
      const json::value* path = r.field(it, ip, "path", true, "a string");
      if (key)
        if (auto s = r.string(*key, child_path(ip, "key"))) n["key"] = *s;
      if (path)
        if (auto s = r.string(*path, child_path(ip, "path"))) {
          if (s->empty() || s->front() == '/' || !relative_path_ok(*s))
            r.add(child_path(ip, "path"), "must be a relative path without '..'");
          n["path"] = *s;
        }
      if (const json::value* mode = it->if_contains("mode"))
        if (auto m = r.integer(*mode, child_path(ip, "mode"), 0, 0777)) n["mode"] = *m;
      out.push_back(std::move(n));
    }
    norm["items"] = std::move(out);
  }
}

// Volume sources accepted in overrides (the ones node-local LLM deployments use); each with Kubernetes' fields.
constexpr std::array<std::string_view, 6> kVolumeSources = {
    "hostPath", "emptyDir", "configMap", "secret", "persistentVolumeClaim", "nfs"};

// The source `kind` (one of kVolumeSources) of a volume, `src` at path `sp`, with Kubernetes' fields checked.
json::object read_volume_source(Reader& r, std::string_view kind, const json::object& src, const std::string& sp) {
  json::object s;
  const auto required_string = [&](std::string_view key) -> std::optional<std::string> {
    const json::value* f = r.field(&src, sp, key, true, "a string");
    if (!f) return std::nullopt;
    auto str = r.string(*f, child_path(sp, key));
    if (str && str->empty()) r.add(child_path(sp, key), "must not be empty");
    return str;
  };
  const auto read_only = [&]() {
    if (const json::value* ro = src.if_contains("readOnly"))
      if (auto b = r.boolean(*ro, child_path(sp, "readOnly"))) s["readOnly"] = *b;
  };
  if (kind == "hostPath") {
    r.only(&src, sp, std::array<std::string_view, 2>{"path", "type"});
    if (auto hp = required_string("path")) {
      if (!absolute_path(*hp)) r.add(child_path(sp, "path"), "must be an absolute path without '..'");
      s["path"] = *hp;
    }
    if (const json::value* t = src.if_contains("type"))
      if (auto type = r.string(*t, child_path(sp, "type"))) {
        static constexpr std::array<std::string_view, 8> kTypes = {
            "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"};
        if (std::find(kTypes.begin(), kTypes.end(), *type) == kTypes.end())
          r.add(child_path(sp, "type"),
                "must be one of DirectoryOrCreate, Directory, FileOrCreate, File, Socket, "
                "CharDevice, BlockDevice (or empty)");
        s["type"] = *type;
      }
  } else if (kind == "emptyDir") {
    r.only(&src, sp, std::array<std::string_view, 2>{"medium", "sizeLimit"});
    if (const json::value* m = src.if_contains("medium"))
      if (auto medium = r.string(*m, child_path(sp, "medium"))) {
        if (*medium != "" && *medium != "Memory" && !medium->starts_with("HugePages"))
          r.add(child_path(sp, "medium"), "must be empty, Memory or HugePages[-<size>]");
        s["medium"] = *medium;
      }
    if (const json::value* l = src.if_contains("sizeLimit"))
      if (auto q = r.quantity(*l, child_path(sp, "sizeLimit"))) s["sizeLimit"] = *q;
  } else if (kind == "configMap" || kind == "secret") {
    const std::string_view name_key = kind == "configMap" ? "name" : "secretName";
    r.only(&src, sp, std::array<std::string_view, 4>{name_key, "items", "defaultMode", "optional"});
    if (auto n = required_string(name_key)) {
      if (!kube::is_dns1123_subdomain(*n)) r.add(child_path(sp, name_key), "is not a valid object name");
      s[name_key] = *n;
    }
    read_projection(r, src, sp, s);
  } else if (kind == "persistentVolumeClaim") {
    r.only(&src, sp, std::array<std::string_view, 2>{"claimName", "readOnly"});
    if (auto n = required_string("claimName")) {
      if (!kube::is_dns1123_subdomain(*n)) r.add(child_path(sp, "claimName"), "is not a valid object name");
      s["claimName"] = *n;
    }
    read_only();
  } else if (kind == "nfs") {
    r.only(&src, sp, std::array<std::string_view, 3>{"server", "path", "readOnly"});
    if (auto server = required_string("server")) s["server"] = *server;
    if (auto np = required_string("path")) {
      if (!absolute_path(*np)) r.add(child_path(sp, "path"), "must be an absolute path without '..'");
      s["path"] = *np;
    }
    read_only();
  }
  return s;
}

void read_volumes(Reader& r, const json::value& v, const std::string& path, json::array& out) {
  const json::array* a = r.array(v, path);
  if (!a) return;
  std::set<std::string> names;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string p = item_path(path, i);
    const json::object* vol = r.object((*a)[i], p);
    if (!vol) continue;
    std::array<std::string_view, kVolumeSources.size() + 1> known{};
    known[0] = "name";
    std::copy(kVolumeSources.begin(), kVolumeSources.end(), known.begin() + 1);
    r.only(vol, p, known);
    json::object norm;
    const json::value* name = r.field(vol, p, "name", true, "a string");
    if (auto n = name ? r.string(*name, child_path(p, "name")) : std::nullopt) {
      if (!kube::is_dns1123_label(*n))
        r.add(child_path(p, "name"), "\"" + *n + "\" is not a DNS-1123 label (lower-case letters, digits, '-')");
      else if (!names.insert(*n).second) r.add(child_path(p, "name"), "duplicate volume name \"" + *n + "\"");
      norm["name"] = *n;
    }
    std::vector<std::string_view> sources;
    for (auto s : kVolumeSources)
      if (vol->contains(s)) sources.push_back(s);
    if (sources.size() != 1) {
      r.add(p, sources.empty() ? "needs one volume source: " + util::join(kVolumeSources, ", ")
                               : "has several volume sources (" + util::join(sources, ", ") + "); give exactly one");
      continue;
    }
    const std::string_view kind = sources.front();
    const std::string sp = child_path(p, std::string(kind));
    const json::object* src = r.object(vol->at(kind), sp);
    if (!src) continue;
    norm[kind] = read_volume_source(r, kind, *src, sp);
    out.push_back(std::move(norm));
  }
}

void read_volume_mounts(Reader& r, const json::value& v, const std::string& path, json::array& out) {
  const json::array* a = r.array(v, path);
  if (!a) return;
  std::set<std::string> paths;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string p = item_path(path, i);
    const json::object* m = r.object((*a)[i], p);
    if (!m) continue;
    r.only(m, p, std::array<std::string_view, 4>{"name", "mountPath", "readOnly", "subPath"});
    json::object norm;
    for (const char* key : {"name", "mountPath"}) {
      const json::value* f = r.field(m, p, key, true, "a string");
      if (!f) continue;
      auto s = r.string(*f, child_path(p, key));
      if (!s) continue;
      if (std::string_view(key) == "mountPath") {
        // ':' separates host and container paths in the runtime's mount syntax; Kubernetes rejects it too.
        if (!absolute_path(*s) || s->find(':') != std::string::npos)
          r.add(child_path(p, "mountPath"), "must be an absolute path without ':' or '..'");
        else if (!paths.insert(*s).second) r.add(child_path(p, "mountPath"), "\"" + *s + "\" is mounted twice");
      }
      norm[key] = *s;
    }
    if (const json::value* ro = m->if_contains("readOnly"))
      if (auto b = r.boolean(*ro, child_path(p, "readOnly"))) norm["readOnly"] = *b;
    if (const json::value* sub = m->if_contains("subPath"))
      if (auto s = r.string(*sub, child_path(p, "subPath"))) {
        if (!s->empty() && (s->front() == '/' || !relative_path_ok(*s)))
          r.add(child_path(p, "subPath"), "must be a relative path without '..'");
        norm["subPath"] = *s;
      }
    out.push_back(std::move(norm));
  }
}

// File modes written with a leading zero (defaultMode: 0440): YAML 1.2, which this file is read as, takes them as
// decimal (440 = 0o670), while kubectl's YAML 1.1 reader takes them as octal. Refuse the ambiguity rather than
// grant other permissions than meant; the value is checked on the text because the parsed number cannot tell.
void check_octal_modes(std::string_view raw, Reader& r) {
  std::size_t line = 1;
  bool comment = false;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\n') {
      ++line;
      comment = false;
      continue;
    }
    if (raw[i] == '#' && (i == 0 || raw[i - 1] == ' ' || raw[i - 1] == '\t' || raw[i - 1] == '\n')) comment = true;
    if (comment) continue;
    for (std::string_view key : {"defaultMode", "mode"}) {
      if (raw.substr(i, key.size()) != key) continue;
      if (i > 0 && (std::isalnum(static_cast<unsigned char>(raw[i - 1])) || raw[i - 1] == '_')) continue;
      std::size_t j = i + key.size();
      while (j < raw.size() && (raw[j] == ' ' || raw[j] == '"' || raw[j] == '\'')) ++j;
      if (j >= raw.size() || raw[j] != ':') continue;
      ++j;
      while (j < raw.size() && raw[j] == ' ') ++j;
      std::size_t k = j;
      while (k < raw.size() && std::isdigit(static_cast<unsigned char>(raw[k]))) ++k;
      if (k - j >= 2 && raw[j] == '0')
        r.add("", "line " + std::to_string(line) + ": " + std::string(key) + " " + std::string(raw.substr(j, k - j)) +
                      " has a leading zero, which YAML 1.2 reads as decimal and kubectl as octal: write it as 0o" +
                      std::string(raw.substr(j + 1, k - j - 1)) + " (octal) or in decimal");
    }
  }
}

void read_role(Reader& r, const json::object& o, const std::string& path, RoleOverrides& out) {
  r.only(&o, path, kRoleFields);
  if (const json::value* v = o.if_contains("resources")) read_resources(r, *v, child_path(path, "resources"), out);
  if (const json::value* v = o.if_contains("labels"))
    read_string_map(r, *v, child_path(path, "labels"), Reader::MapKind::Labels, out.labels);
  if (const json::value* v = o.if_contains("annotations"))
    read_string_map(r, *v, child_path(path, "annotations"), Reader::MapKind::Annotations, out.annotations);
  if (const json::value* v = o.if_contains("nodeSelector"))
    read_string_map(r, *v, child_path(path, "nodeSelector"), Reader::MapKind::NodeSelector, out.node_selector);
  if (const json::value* v = o.if_contains("tolerations"))
    read_tolerations(r, *v, child_path(path, "tolerations"), out.tolerations);
  if (const json::value* v = o.if_contains("volumes")) read_volumes(r, *v, child_path(path, "volumes"), out.volumes);
  if (const json::value* v = o.if_contains("volumeMounts"))
    read_volume_mounts(r, *v, child_path(path, "volumeMounts"), out.volume_mounts);
  if (const json::value* v = o.if_contains("faultScheduling"))
    if (auto s = r.string(*v, child_path(path, "faultScheduling"))) {
      if (*s == "grace") out.fault_scheduling = FaultScheduling::Grace;
      else if (*s == "force") out.fault_scheduling = FaultScheduling::Force;
      else if (*s == "off") out.fault_scheduling = FaultScheduling::Off;
      else r.add(child_path(path, "faultScheduling"), "must be grace, force or off, got \"" + *s + "\"");
    }
  // MindCluster documents fault-retry-times as 0..100 (pod label table).
  if (const json::value* v = o.if_contains("faultRetryTimes"))
    if (auto n = r.integer(*v, child_path(path, "faultRetryTimes"), 0, 100))
      out.fault_retry_times = static_cast<int>(*n);
  if (const json::value* v = o.if_contains("gangSchedule"))
    if (auto b = r.boolean(*v, child_path(path, "gangSchedule"))) out.gang_schedule = *b;
}

}  // namespace

Overrides parse_overrides(std::string raw, std::string_view source) {
  Overrides out;
  out.source = std::string(source);
  std::vector<json::value> docs;
  try {
    docs = util::yaml_to_json_all(raw, out.source);
  } catch (const util::YamlError& e) {
    throw validation::ValidationError(out.source, {{"", validation::yaml_syntax_message(e.what(), out.source)}});
  }
  if (docs.size() > 1)
    throw validation::ValidationError(out.source, {{"", "holds " + std::to_string(docs.size()) +
                                                            " YAML documents; an overrides file is one mapping"}});
  Reader r(validation::Notation::Yaml);
  check_octal_modes(raw, r);
  const json::value doc = docs.empty() ? json::value() : docs.front();
  if (!doc.is_null()) {
    if (const json::object* top = r.object(doc, "")) {
      r.only(top, "", std::array<std::string_view, 1>{"roles"});
      const json::value* roles = top->if_contains("roles");
      if (roles && !roles->is_null()) {
        if (const json::object* ro = r.object(*roles, "roles")) {
          const auto& known = render::role_names();
          for (const auto& kv : *ro) {
            const std::string name(kv.key());
            const std::string path = child_path("roles", name);
            if (std::find(known.begin(), known.end(), name) == known.end()) {
              r.add(path, "unknown role; known roles: " + util::join(known, ", "));
              continue;
            }
            if (kv.value().is_null()) continue;  // `prefill:` with nothing under it
            if (const json::object* o = r.object(kv.value(), path)) read_role(r, *o, path, out.roles[name]);
          }
        }
      }
    }
  }
  r.throw_if_any(out.source);
  out.raw = std::move(raw);
  return out;
}

}  // namespace mindie::overrides
