// Connection strings (store and broker URLs) on their way into messages, logs, banners and
// HTTP answers: every secret in them replaced by ***.
#pragma once

#include <string>
#include <string_view>

namespace layerlab {

// `connection` with its secrets masked, for any form libpq or AMQP accepts:
//  - scheme://USERINFO@host...: everything before the last '@' after the scheme is userinfo
//    (a raw password may hold '#', '?', '/', ':' or '@'); the user name before its first ':'
//    stays, the rest becomes ***;
//  - query parameters (?password=, ?pass%77ord=, ?sslpassword=...): a value becomes *** when
//    its key, percent-decoded and lower-cased, contains "pass", "secret" or "token";
//  - libpq keyword/value strings (host=x password='a b'), with the same rule for keywords;
//  - opaque URIs (sqlite:PATH) and plain paths stay as they are.
// It never fails open: a URL whose host part cannot be read, an opaque URI holding an '@',
// or a keyword/value string that does not parse is masked entirely after its scheme.
std::string mask_secrets(std::string_view connection);

// Whether a query key (percent-encoded or not) or a libpq keyword names a secret.
bool is_secret_key(std::string_view key);

}  // namespace layerlab
