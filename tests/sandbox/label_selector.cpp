#include "label_selector.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

namespace mindie::sandbox {

using nlohmann::json;

bool is_dns1123_label(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, re);
}

bool is_dns1123_subdomain(const std::string& s) {
  static const std::regex re(R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, re);
}

namespace {

bool is_qualified_name_part(const std::string& s) {
  static const std::regex re("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, re);
}

}  // namespace

bool is_qualified_name(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos) return is_qualified_name_part(s);
  return is_dns1123_subdomain(s.substr(0, slash)) && is_qualified_name_part(s.substr(slash + 1));
}

bool is_label_value(const std::string& s) { return s.empty() || is_qualified_name_part(s); }

namespace {

// Tokens of labels.Lexer: identifiers and the special symbols ! != = == ( ) , < > plus the keywords in/notin.
enum class Tok { Ident, Not, NotEquals, Equals, DoubleEquals, Open, Close, Comma, Gt, Lt, In, NotIn, End };

struct Token {
  Tok kind;
  std::string text;
};

bool is_special(char c) { return c == '!' || c == '=' || c == '(' || c == ')' || c == ',' || c == '<' || c == '>'; }

std::vector<Token> lex(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (is_special(c)) {
      const std::string two = s.substr(i, 2);
      if (two == "!=") out.push_back({Tok::NotEquals, two}), i += 2;
      else if (two == "==") out.push_back({Tok::DoubleEquals, two}), i += 2;
      else {
        static const std::map<char, Tok> single = {{'!', Tok::Not}, {'=', Tok::Equals}, {'(', Tok::Open},
                                                   {')', Tok::Close}, {',', Tok::Comma}, {'<', Tok::Lt},
                                                   {'>', Tok::Gt}};
        out.push_back({single.at(c), std::string(1, c)});
        ++i;
      }
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && !is_special(s[j]) && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    std::string word = s.substr(i, j - i);
    Tok kind = word == "in" ? Tok::In : word == "notin" ? Tok::NotIn : Tok::Ident;
    out.push_back({kind, std::move(word)});
    i = j;
  }
  out.push_back({Tok::End, ""});
  return out;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : toks_(lex(text)) {}

  std::vector<LabelSelector::Requirement> parse() {
    std::vector<LabelSelector::Requirement> reqs;
    if (peek().kind == Tok::End) return reqs;
    while (true) {
      reqs.push_back(requirement());
      const Token t = next();
      if (t.kind == Tok::End) break;
      if (t.kind != Tok::Comma) fail("found '" + t.text + "', expected: ',' or 'end of string'");
      if (peek().kind == Tok::End) fail("found '', expected: identifier after ','");
    }
    return reqs;
  }

 private:
  std::vector<Token> toks_;
  std::size_t pos_ = 0;

  const Token& peek() const { return toks_[pos_]; }
  Token next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  [[noreturn]] static void fail(const std::string& msg) { throw SelectorError("unable to parse requirement: " + msg); }

  std::string key() {
    const Token t = next();
    if (t.kind != Tok::Ident) fail("found '" + t.text + "', expected: identifier");
    if (!is_qualified_name(t.text)) fail("invalid label key \"" + t.text + "\"");
    return t.text;
  }

  std::string value() {
    // A missing value (`k=` or `k=,x`) is the empty string.
    if (peek().kind != Tok::Ident) return "";
    std::string v = next().text;
    if (!is_label_value(v)) fail("invalid label value: \"" + v + "\"");
    return v;
  }

  LabelSelector::Requirement requirement() {
    using Op = LabelSelector::Op;
    if (peek().kind == Tok::Not) {
      next();
      return {key(), Op::DoesNotExist, {}};
    }
    LabelSelector::Requirement r{key(), Op::Exists, {}};
    const Tok k = peek().kind;
    if (k == Tok::Comma || k == Tok::End) return r;
    const Token op = next();
    switch (op.kind) {
      case Tok::Equals:
      case Tok::DoubleEquals: r.op = Op::Equals; r.values = {value()}; return r;
      case Tok::NotEquals: r.op = Op::NotEquals; r.values = {value()}; return r;
      case Tok::Gt:
      case Tok::Lt: {
        r.op = op.kind == Tok::Gt ? Op::GreaterThan : Op::LessThan;
        const Token v = next();
        if (v.kind != Tok::Ident || v.text.size() > 18 || !std::regex_match(v.text, std::regex("^-?[0-9]+$")))
          fail("for 'Gt', 'Lt' operators, exactly one integer value is required");
        r.values = {v.text};
        return r;
      }
      case Tok::In:
      case Tok::NotIn: {
        r.op = op.kind == Tok::In ? Op::In : Op::NotIn;
        if (next().kind != Tok::Open) fail("found '" + toks_[pos_ - 1].text + "', expected: '('");
        std::set<std::string> values;
        while (true) {
          if (peek().kind == Tok::Close) {
            next();
            break;
          }
          values.insert(value());
          const Token sep = next();
          if (sep.kind == Tok::Close) break;
          if (sep.kind != Tok::Comma) fail("found '" + sep.text + "', expected: ',' or ')'");
        }
        if (values.empty()) fail("for 'in', 'notin' operators, values set can't be empty");
        r.values.assign(values.begin(), values.end());
        return r;
      }
      default: fail("found '" + op.text + "', expected: in, notin, =, ==, !=, gt, lt");
    }
  }
};

}  // namespace

LabelSelector LabelSelector::parse(const std::string& text) {
  LabelSelector s;
  s.reqs_ = Parser(text).parse();
  return s;
}

bool LabelSelector::matches(const json& labels) const {
  for (const auto& r : reqs_) {
    const bool has = labels.is_object() && labels.contains(r.key) && labels[r.key].is_string();
    const std::string v = has ? labels[r.key].get<std::string>() : "";
    const auto in_values = [&] { return std::find(r.values.begin(), r.values.end(), v) != r.values.end(); };
    bool ok = false;
    switch (r.op) {
      case Op::Equals:
      case Op::In: ok = has && in_values(); break;
      case Op::NotEquals:
      case Op::NotIn: ok = !has || !in_values(); break;
      case Op::Exists: ok = has; break;
      case Op::DoesNotExist: ok = !has; break;
      case Op::GreaterThan:
      case Op::LessThan: {
        if (!has || !std::regex_match(v, std::regex("^-?[0-9]{1,18}$"))) break;
        const long long lhs = std::stoll(v), rhs = std::stoll(r.values[0]);
        ok = r.op == Op::GreaterThan ? lhs > rhs : lhs < rhs;
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

namespace {

// Fields kube-apiserver lets clients select on (GetAttrs/AddFieldLabelConversionFunc of each type).
bool field_supported(const std::string& kind, const std::string& path) {
  if (path == "metadata.name" || path == "metadata.namespace") return true;
  static const std::map<std::string, std::set<std::string>> extra = {
      {"Pod",
       {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "status.phase",
        "status.podIP", "status.nominatedNodeName"}},
      {"Event",
       {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
        "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
        "reportingComponent", "source", "type"}},
      {"Namespace", {"status.phase"}},
  };
  auto it = extra.find(kind);
  return it != extra.end() && it->second.count(path) > 0;
}

std::string lookup(const json& object, const std::string& path) {
  const json* cur = &object;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(part)) return "";
    cur = &(*cur)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

}  // namespace

FieldSelector FieldSelector::parse(const std::string& text, const std::string& kind) {
  FieldSelector s;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const auto comma = text.find(',', start);
    const std::string term = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    Term t{};
    std::size_t op = std::string::npos, op_len = 0;
    if ((op = term.find("!=")) != std::string::npos) op_len = 2, t.negate = true;
    else if ((op = term.find("==")) != std::string::npos) op_len = 2;
    else if ((op = term.find('=')) != std::string::npos) op_len = 1;
    else throw SelectorError("invalid selector: '" + text + "'; can't understand '" + term + "'");
    t.path = term.substr(0, op);
    t.value = term.substr(op + op_len);
    if (!field_supported(kind, t.path)) throw SelectorError("field label not supported: " + t.path);
    if (kind == "Event" && t.path == "source") t.path = "source.component";  // the Event field label "source"
    s.terms_.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return s;
}

bool FieldSelector::matches(const json& object) const {
  for (const auto& t : terms_)
    if ((lookup(object, t.path) == t.value) == t.negate) return false;
  return true;
}

}  // namespace mindie::sandbox
