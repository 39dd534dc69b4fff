// One reader for every input kubectl-mindie validates (user_config.json, env.json, deploy --overrides, the
// StormService config): typed reads of JSON values that report a wrong type, range or syntax as a Problem at the
// value's path (util::child_path / util::item_path) and go on, so every problem of a file is found in one run.
// YAML inputs are read as JSON values (util::yaml_to_json) and named in YAML's words in messages.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "validation/problem.h"

namespace mindie::validation {

/// The words messages use for containers: JSON's object/array or YAML's mapping/list (the file's own terms).
enum class Notation { Json, Yaml };

/// A short rendering of a JSON value for messages: its kind and its text, cut at 40 characters ("string \"2\"",
/// "number 2.0", "integer 7", "boolean true", "null", and "an object"/"an array" or, in YAML notation,
/// "a mapping"/"a list").
std::string describe_value(const boost::json::value& v, Notation notation = Notation::Json);

/// Key-value pairs in file order (labels, annotations, nodeSelector), keys and values already validated.
using StringMap = std::vector<std::pair<std::string, std::string>>;

/// Collects problems while reading. Each value reader takes the value and its path, returns it typed, or
/// nullopt/nullptr after adding a problem at `path` (a JSON null is a wrong type like any other). The field readers
/// take (object, path of the object, key): an absent key is nullopt, and a problem "is required (...)" when
/// `required` and the object exists; a null object pointer (a missing or mistyped parent, reported once where it
/// was read) reads as absent.
class Reader {
 public:
  explicit Reader(Notation notation = Notation::Json) : notation_(notation) {}

  void add(std::string path, std::string message) { problems_.push_back({std::move(path), std::move(message)}); }
  /// Appends `more` (a parser's syntax or structure problems).
  void add_all(std::vector<Problem> more);
  std::size_t count() const { return problems_.size(); }
  const std::vector<Problem>& problems() const { return problems_; }
  /// Throws ValidationError(`source`, the problems) when there is any.
  void throw_if_any(std::string_view source);
  Notation notation() const { return notation_; }
  /// describe_value in this reader's notation.
  std::string describe(const boost::json::value& v) const { return describe_value(v, notation_); }

  // --- values -------------------------------------------------------------------------------------------------
  const boost::json::object* object(const boost::json::value& v, const std::string& path);
  const boost::json::array* array(const boost::json::value& v, const std::string& path);
  std::optional<std::string> string(const boost::json::value& v, const std::string& path);
  /// true or false; strings such as "true" are refused (the consumers read booleans).
  std::optional<bool> boolean(const boost::json::value& v, const std::string& path);
  /// An integer in [lo, hi]. Floats (even 2.0), numeric strings and booleans are refused: the consumers read these
  /// fields as integers, and a coercion (deploy.py's int()) would hide the mistake. `hint` follows a range error.
  std::optional<std::int64_t> integer(const boost::json::value& v, const std::string& path, std::int64_t lo,
                                      std::int64_t hi, std::string_view hint = {});
  /// A number (integer or not) in [lo, hi].
  std::optional<double> number(const boost::json::value& v, const std::string& path, double lo, double hi);
  /// An absolute path usable as a hostPath and a mountPath: starts with '/', no ':' (the runtime's mount separator),
  /// no control characters.
  std::optional<std::string> abs_path(const boost::json::value& v, const std::string& path);
  /// abs_path for a host folder mounted into pods (hostPath): also no '..' component (Kubernetes' own hostPath rule),
  /// and not the host's root, a system folder (/etc, /usr, /proc, /var/run, the kubelet's and runtimes' state, ...)
  /// or a folder in one, nor the whole of /root, /home, /var or /var/lib.
  std::optional<std::string> host_path(const boost::json::value& v, const std::string& path);
  /// A resource quantity (kube::parse_quantity): a string, or a non-negative integer (YAML `cpu: 4`); as its text.
  std::optional<std::string> quantity(const boost::json::value& v, const std::string& path);

  /// What a string map holds, for its rules (apimachinery ValidateLabels / ValidateAnnotations).
  enum class MapKind { Labels, Annotations, NodeSelector };
  /// A mapping of string values: keys are Kubernetes qualified names; label and nodeSelector values label values;
  /// annotations at most kube::kMaxAnnotationsBytes in keys and values together. Entries with a problem are left
  /// out. A number or boolean value is refused with "(quote it)": YAML reads `version: 2` as a number.
  StringMap string_map(const boost::json::value& v, const std::string& path, MapKind kind);

  /// Every key of `o` not in `known` is a problem that lists the known ones (a misspelt key would otherwise fall
  /// back to a default without a word). A null `o` has none.
  void only(const boost::json::object* o, const std::string& path, std::span<const std::string_view> known);
  void only(const boost::json::object* o, const std::string& path, std::initializer_list<std::string_view> known) {
    only(o, path, std::span<const std::string_view>(known.begin(), known.size()));
  }

  // --- fields -------------------------------------------------------------------------------------------------
  /// obj[key], or nullptr when obj is null or the key absent; then, when `required` and obj is not null, a problem
  /// "is required (`expected`)" at the field's path.
  const boost::json::value* field(const boost::json::object* obj, const std::string& path, std::string_view key,
                                  bool required, std::string_view expected);
  const boost::json::object* object(const boost::json::object* obj, const std::string& path, std::string_view key,
                                    bool required);
  std::optional<std::string> string(const boost::json::object* obj, const std::string& path, std::string_view key,
                                    bool required);
  std::optional<bool> boolean(const boost::json::object* obj, const std::string& path, std::string_view key);
  std::optional<std::int64_t> integer(const boost::json::object* obj, const std::string& path, std::string_view key,
                                      std::int64_t lo, std::int64_t hi, bool required);
  std::optional<double> number(const boost::json::object* obj, const std::string& path, std::string_view key, double lo,
                               double hi, bool required);
  std::optional<std::string> abs_path(const boost::json::object* obj, const std::string& path, std::string_view key,
                                      bool required);
  std::optional<std::string> host_path(const boost::json::object* obj, const std::string& path, std::string_view key,
                                       bool required);
  /// A container image reference: non-empty, at most 1024 characters (real ones are far shorter; this catches
  /// pasted junk), no whitespace or control characters.
  std::optional<std::string> image(const boost::json::object* obj, const std::string& path, std::string_view key,
                                   bool required);
  StringMap string_map(const boost::json::object* obj, const std::string& path, std::string_view key, MapKind kind);

 private:
  std::string object_word() const;  // "an object" / "a mapping"
  Notation notation_;
  std::vector<Problem> problems_;
};

}  // namespace mindie::validation
