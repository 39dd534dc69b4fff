// The input format shared by fuzz_status and the status corpus test (tests/corpus/status): a first line
// "CODE[ RETRY-AFTER]" — the HTTP status and the raw Retry-After header value — then the response body. Input
// whose first line has no code is all body, answered 500.
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include "kube/transport.h"

namespace mindie::fuzz {

inline kube::HttpResponse status_response(std::string_view input) {
  kube::HttpResponse resp;
  resp.status = 500;
  const auto eol = input.find('\n');
  const std::string_view first = input.substr(0, eol);
  int code = 0;
  const auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), code);
  if (ec != std::errc() || code < 100 || code > 599) {
    resp.body = std::string(input);
    return resp;
  }
  resp.status = code;
  std::string_view rest = first.substr(static_cast<std::size_t>(end - first.data()));
  if (!rest.empty() && rest.front() == ' ') resp.headers.emplace_back("retry-after", std::string(rest.substr(1)));
  resp.body = eol == std::string_view::npos ? std::string() : std::string(input.substr(eol + 1));
  return resp;
}

}  // namespace mindie::fuzz
