#include "common/secret_text.h"

#include <optional>

namespace layerlab {
namespace {

constexpr std::string_view kMask = "***";

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The key percent-decoded and lower-cased; nullopt when an escape is malformed.
std::optional<std::string> decoded_key(std::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (c == '%') {
      const int hi = i + 2 < key.size() ? hex_value(key[i + 1]) : -1;
      const int lo = i + 2 < key.size() ? hex_value(key[i + 2]) : -1;
      if (hi < 0 || lo < 0) return std::nullopt;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// The length of a leading "scheme:" (RFC 3986: a letter, then letters, digits, + - .), or 0.
size_t scheme_length(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) return 0;
  size_t i = 1;
  while (i < s.size() &&
         (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
    ++i;
  return i < s.size() && s[i] == ':' ? i + 1 : 0;
}

// key=value&key=value with the values of secret keys masked. A key whose escapes are
// malformed counts as secret: what it decodes to is unknown.
std::string mask_query(std::string_view query) {
  std::string out;
  while (true) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && is_secret_key(item.substr(0, eq))) {
      out += item.substr(0, eq + 1);
      out += kMask;
    } else {
      out += item;
    }
    if (amp == std::string_view::npos) return out;
    out += '&';
    query.remove_prefix(amp + 1);
  }
}

// scheme://[userinfo@]hosts[/path][?query]; `authority` is where the part after "//" starts.
std::string mask_hierarchical(std::string_view url, size_t authority) {
  const std::string_view prefix = url.substr(0, authority);
  std::string out(prefix);
  std::string_view rest = url.substr(authority);
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    const size_t colon = userinfo.find(':');
    const size_t odd = userinfo.find_first_of("/?#&=");
    if (colon == std::string_view::npos && odd == std::string_view::npos) {
      out += userinfo;  // a user name alone
    } else if (colon < odd) {
      out += userinfo.substr(0, colon + 1);
      out += kMask;
    } else {  // an '@' past the host (in the path or query): all of it hidden
      out += kMask;
    }
    out += '@';
    rest.remove_prefix(at + 1);
  }
  const std::string_view hosts = rest.substr(0, rest.find_first_of("/?"));
  constexpr std::string_view kHostChars =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_~%:,[]";
  if (hosts.find_first_not_of(kHostChars) != std::string_view::npos) {
    out.resize(prefix.size());
    return out += kMask;
  }
  const size_t question = rest.find('?');
  out += rest.substr(0, question);
  if (question != std::string_view::npos) {
    out += '?';
    out += mask_query(rest.substr(question + 1));
  }
  return out;
}

// libpq's keyword = value list: values bare (up to white space) or single-quoted, with
// backslash escapes in both. nullopt when it does not parse as one.
std::optional<std::string> mask_keyword_values(std::string_view text) {
  std::string out;
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < text.size() && is_space(text[i])) out += text[i++];
  };
  while (true) {
    skip_space();
    if (i == text.size()) return out;
    const size_t key_start = i;
    while (i < text.size() && !is_space(text[i]) && text[i] != '=') ++i;
    const std::string_view key = text.substr(key_start, i - key_start);
    out += key;
    skip_space();
    if (key.empty() || i == text.size() || text[i] != '=') return std::nullopt;
    out += text[i++];
    skip_space();
    const size_t value_start = i;
    if (i < text.size() && text[i] == '\'') {
      for (++i; i < text.size() && text[i] != '\''; ++i)
        if (text[i] == '\\') ++i;
      if (i >= text.size()) return std::nullopt;  // no closing quote
      ++i;
    } else {
      for (; i < text.size() && !is_space(text[i]); ++i)
        if (text[i] == '\\') ++i;
      if (i > text.size()) i = text.size();
    }
    const std::string_view value = text.substr(value_start, i - value_start);
    // dbname may itself be a URL or a keyword/value string, which libpq expands.
    const bool nested = value.find_first_of("@=") != std::string_view::npos;
    out += is_secret_key(key) || nested ? kMask : value;
  }
}

}  // namespace

bool is_secret_key(std::string_view key) {
  // service=NAME is not one: it names an entry of a pg_service.conf file, which keeps the
  // entry's password in that file; the name itself may be shown.
  const std::optional<std::string> k = decoded_key(key);
  if (!k) return true;
  for (const std::string_view word : {"pass", "secret", "token"})
    if (k->find(word) != std::string::npos) return true;
  return false;
}

std::string mask_secrets(std::string_view connection) {
  if (const size_t scheme = scheme_length(connection); scheme > 0) {
    if (connection.substr(scheme, 2) == "//") return mask_hierarchical(connection, scheme + 2);
    // An opaque URI (sqlite:PATH): an '@' in it may end a mistyped userinfo.
    if (connection.find('@', scheme) != std::string_view::npos)
      return std::string(connection.substr(0, scheme)) + std::string(kMask);
    const size_t question = connection.find('?', scheme);
    if (question == std::string_view::npos) return std::string(connection);
    return std::string(connection.substr(0, question + 1)) +
           mask_query(connection.substr(question + 1));
  }
  if (connection.find('=') == std::string_view::npos) return std::string(connection);
  return mask_keyword_values(connection).value_or(std::string(kMask));
}

}  // namespace layerlab
