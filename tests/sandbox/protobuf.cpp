#include "protobuf.h"

#include "base64.h"

#include <cstdint>
#include <map>
#include <string_view>

namespace mindie::sandbox {

using nlohmann::json;

namespace {

enum class F { String, Bytes, Int, Bool, Message, MapString, MapBytes, Time };

struct FieldDesc {
  FieldDesc(std::string n, F k, bool r = false, std::string m = "")
      : name(std::move(n)), kind(k), repeated(r), message(std::move(m)) {}
  std::string name;
  F kind;
  bool repeated;
  std::string message;  // type name for F::Message
};

using MessageDesc = std::map<int, FieldDesc>;

// Message layouts from k8s.io/api/*/generated.proto and apimachinery's meta/v1 generated.proto.
const std::map<std::string, MessageDesc>& descriptors() {
  static const std::map<std::string, MessageDesc> d = {
      {"TypeMeta", {{1, {"apiVersion", F::String}}, {2, {"kind", F::String}}}},
      {"Unknown",
       {{1, {"typeMeta", F::Message, false, "TypeMeta"}},
        {2, {"raw", F::Bytes}},
        {3, {"contentEncoding", F::String}},
        {4, {"contentType", F::String}}}},
      {"ObjectMeta",
       {{1, {"name", F::String}},
        {2, {"generateName", F::String}},
        {3, {"namespace", F::String}},
        {5, {"uid", F::String}},
        {6, {"resourceVersion", F::String}},
        {7, {"generation", F::Int}},
        {8, {"creationTimestamp", F::Time}},
        {11, {"labels", F::MapString}},
        {12, {"annotations", F::MapString}},
        {13, {"ownerReferences", F::Message, true, "OwnerReference"}},
        {14, {"finalizers", F::String, true}}}},
      {"OwnerReference",
       {{1, {"kind", F::String}},
        {3, {"name", F::String}},
        {4, {"uid", F::String}},
        {5, {"apiVersion", F::String}},
        {6, {"controller", F::Bool}},
        {7, {"blockOwnerDeletion", F::Bool}}}},
      {"ConfigMap",
       {{1, {"metadata", F::Message, false, "ObjectMeta"}},
        {2, {"data", F::MapString}},
        {3, {"binaryData", F::MapBytes}},
        {4, {"immutable", F::Bool}}}},
      {"Namespace",
       {{1, {"metadata", F::Message, false, "ObjectMeta"}}, {2, {"spec", F::Message, false, "NamespaceSpec"}}}},
      {"NamespaceSpec", {{1, {"finalizers", F::String, true}}}},
      {"ServiceAccount",
       {{1, {"metadata", F::Message, false, "ObjectMeta"}},
        {2, {"secrets", F::Message, true, "ObjectReference"}},
        {3, {"imagePullSecrets", F::Message, true, "LocalObjectReference"}},
        {4, {"automountServiceAccountToken", F::Bool}}}},
      {"ObjectReference",
       {{1, {"kind", F::String}}, {2, {"namespace", F::String}}, {3, {"name", F::String}}, {4, {"uid", F::String}},
        {5, {"apiVersion", F::String}}}},
      {"LocalObjectReference", {{1, {"name", F::String}}}},
      {"Role", {{1, {"metadata", F::Message, false, "ObjectMeta"}}, {2, {"rules", F::Message, true, "PolicyRule"}}}},
      {"ClusterRole",
       {{1, {"metadata", F::Message, false, "ObjectMeta"}},
        {2, {"rules", F::Message, true, "PolicyRule"}},
        {3, {"aggregationRule", F::Message, false, "AggregationRule"}}}},
      {"AggregationRule", {{1, {"clusterRoleSelectors", F::Message, true, "LabelSelector"}}}},
      {"LabelSelector", {{1, {"matchLabels", F::MapString}}}},
      {"PolicyRule",
       {{1, {"verbs", F::String, true}},
        {2, {"apiGroups", F::String, true}},
        {3, {"resources", F::String, true}},
        {4, {"resourceNames", F::String, true}},
        {5, {"nonResourceURLs", F::String, true}}}},
      {"RoleBinding",
       {{1, {"metadata", F::Message, false, "ObjectMeta"}},
        {2, {"subjects", F::Message, true, "Subject"}},
        {3, {"roleRef", F::Message, false, "RoleRef"}}}},
      {"ClusterRoleBinding",
       {{1, {"metadata", F::Message, false, "ObjectMeta"}},
        {2, {"subjects", F::Message, true, "Subject"}},
        {3, {"roleRef", F::Message, false, "RoleRef"}}}},
      {"Subject",
       {{1, {"kind", F::String}}, {2, {"apiGroup", F::String}}, {3, {"name", F::String}}, {4, {"namespace", F::String}}}},
      {"RoleRef", {{1, {"apiGroup", F::String}}, {2, {"kind", F::String}}, {3, {"name", F::String}}}},
      {"Time", {{1, {"seconds", F::Int}}, {2, {"nanos", F::Int}}}},
  };
  return d;
}

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) throw ProtobufError("truncated varint");
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    throw ProtobufError("varint too long");
  }

  std::string_view bytes() {
    const std::uint64_t len = varint();
    if (len > data_.size() - pos_) throw ProtobufError("truncated length-delimited field");
    const auto out = data_.substr(pos_, len);
    pos_ += len;
    return out;
  }

  void skip(int wire_type) {
    switch (wire_type) {
      case 0: varint(); break;
      case 1: advance(8); break;
      case 2: bytes(); break;
      case 5: advance(4); break;
      default: throw ProtobufError("unsupported wire type " + std::to_string(wire_type));
    }
  }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;

  void advance(std::size_t n) {
    if (n > data_.size() - pos_) throw ProtobufError("truncated fixed field");
    pos_ += n;
  }
};

json decode_message(std::string_view data, const std::string& type, int depth);

json decode_map_entry(std::string_view data, bool bytes_value, std::string& key) {
  Reader r(data);
  json value = "";
  while (!r.done()) {
    const std::uint64_t tag = r.varint();
    const int field = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    if (wire != 2) {
      r.skip(wire);
      continue;
    }
    const auto b = r.bytes();
    if (field == 1) key = std::string(b);
    else if (field == 2) value = bytes_value ? base64_encode(b) : std::string(b);
  }
  return value;
}

json decode_message(std::string_view data, const std::string& type, int depth) {
  if (depth > 16) throw ProtobufError("message nesting too deep");
  const auto it = descriptors().find(type);
  if (it == descriptors().end()) throw ProtobufError("cannot decode protobuf message " + type);
  const MessageDesc& desc = it->second;
  json out = json::object();
  Reader r(data);
  while (!r.done()) {
    const std::uint64_t tag = r.varint();
    const int field = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    const auto f = desc.find(field);
    const bool varint_kind = f != desc.end() && (f->second.kind == F::Int || f->second.kind == F::Bool);
    if (f == desc.end() || (varint_kind ? wire != 0 : wire != 2)) {
      r.skip(wire);  // fields the sandbox does not model
      continue;
    }
    const FieldDesc& fd = f->second;
    json value;
    switch (fd.kind) {
      case F::String: value = std::string(r.bytes()); break;
      case F::Bytes: value = base64_encode(r.bytes()); break;
      case F::Int: value = static_cast<std::int64_t>(r.varint()); break;
      case F::Bool: value = r.varint() != 0; break;
      case F::Message: value = decode_message(r.bytes(), fd.message, depth + 1); break;
      case F::Time: {
        const json t = decode_message(r.bytes(), "Time", depth + 1);
        if (t.value("seconds", 0) == 0) continue;
        value = t["seconds"];  // kept as seconds; the server sets timestamps itself anyway
        break;
      }
      case F::MapString:
      case F::MapBytes: {
        std::string key;
        json v = decode_map_entry(r.bytes(), fd.kind == F::MapBytes, key);
        out[fd.name][key] = v;
        continue;
      }
    }
    if (fd.repeated) out[fd.name].push_back(value);
    else out[fd.name] = value;
  }
  // omitempty: drop zero values the Go encoder always writes.
  for (auto i = out.begin(); i != out.end();) {
    const json& v = i.value();
    const bool empty = (v.is_string() && v.get_ref<const std::string&>().empty()) ||
                       (v.is_number() && v == 0) || (v.is_object() && v.empty()) || (v.is_array() && v.empty()) ||
                       (v.is_boolean() && !v.get<bool>() && i.key() != "automountServiceAccountToken");
    i = empty ? out.erase(i) : std::next(i);
  }
  return out;
}

}  // namespace

json decode_kubernetes_protobuf(const std::string& body) {
  static const std::string magic("k8s\0", 4);
  if (body.compare(0, magic.size(), magic) != 0) throw ProtobufError("missing the k8s protobuf prefix");
  const std::string_view envelope = std::string_view(body).substr(magic.size());
  // The envelope's raw field holds the object's own encoding, decoded with the kind named in typeMeta.
  Reader r(envelope);
  std::string api_version, kind;
  std::string_view raw;
  while (!r.done()) {
    const std::uint64_t tag = r.varint();
    const int field = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    if (wire != 2) {
      r.skip(wire);
      continue;
    }
    const auto b = r.bytes();
    if (field == 1) {
      const json tm = decode_message(b, "TypeMeta", 0);
      api_version = tm.value("apiVersion", "");
      kind = tm.value("kind", "");
    } else if (field == 2) {
      raw = b;
    }
  }
  if (kind.empty()) throw ProtobufError("protobuf envelope without a kind");
  json obj = decode_message(raw, kind, 0);
  obj["apiVersion"] = api_version;
  obj["kind"] = kind;
  return obj;
}

}  // namespace mindie::sandbox
