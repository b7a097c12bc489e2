#include "queue/amqp_connection.h"

#include <amqp_tcp_socket.h>

#include <algorithm>
#include <regex>

#include "common/error.h"
#include "common/secret_text.h"

namespace layerlab::queue::amqp {
namespace {

amqp_bytes_t bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}

std::string text(amqp_bytes_t b) {
  return std::string(static_cast<const char*>(b.bytes), b.len);
}

timeval to_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>(ms.count() % 1000 * 1000)};
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

BrokerUrl parse_broker_url(std::string_view url) {
  BrokerUrl out;
  std::string_view base = url;
  std::string_view query;
  if (size_t q = url.find('?'); q != std::string_view::npos) {
    base = url.substr(0, q);
    query = url.substr(q + 1);
  }
  out.text = mask_secrets(url);
  const std::string expected = "; expected amqp://user:pass@host:port/vhost[?queue=NAME]";
  if (starts_with(url, "amqps://"))
    throw invalid_argument("broker URL '" + out.text + "': amqps (TLS) is not supported" +
                           expected);
  if (!starts_with(url, "amqp://"))
    throw invalid_argument("broker URL '" + out.text + "' is not an amqp:// URL" + expected);
  std::string buffer(base);  // amqp_parse_url splits its argument in place
  amqp_connection_info info{};
  if (amqp_parse_url(buffer.data(), &info) != AMQP_STATUS_OK || !info.host || !*info.host)
    throw invalid_argument("broker URL '" + out.text + "' cannot be parsed" + expected);
  out.host = info.host;
  out.port = info.port;
  out.user = info.user ? info.user : "guest";
  out.password = info.password ? info.password : "guest";
  out.vhost = info.vhost && *info.vhost ? info.vhost : "/";
  static const std::regex kName("[A-Za-z0-9._-]{1,200}");
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (!starts_with(pair, "queue="))
      throw invalid_argument("broker URL '" + out.text + "': unknown option '" +
                             std::string(pair.substr(0, pair.find('='))) +
                             "' (the one option is queue=NAME)");
    out.queue = std::string(pair.substr(6));
    if (!std::regex_match(out.queue, kName))
      throw invalid_argument("broker URL '" + out.text + "': queue name '" + out.queue +
                             "' must be 1-200 letters, digits, '.', '_' or '-'");
  }
  return out;
}

Layout layout(const BrokerUrl& url, int delivery_limit) {
  return Layout{url.queue, url.queue + ".dlx", url.queue + ".dead", url.queue + ".dead.store",
                delivery_limit};
}

Connection::Connection(const BrokerUrl& url, std::chrono::seconds heartbeat,
                       std::chrono::milliseconds timeout)
    : url_(url), timeout_(timeout), conn_(amqp_new_connection()) {
  try {
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    if (!socket) throw internal_error(url_.text + ": cannot create a socket");
    timeval tv = to_timeval(timeout_);
    const int st = amqp_socket_open_noblock(socket, url_.host.c_str(), url_.port, &tv);
    if (st != AMQP_STATUS_OK)
      throw unavailable("broker " + url_.text + ": connect: " + amqp_error_string2(st));
    amqp_set_handshake_timeout(conn_, &tv);
    amqp_set_rpc_timeout(conn_, &tv);
    check(amqp_login(conn_, url_.vhost.c_str(), 0, 131072, static_cast<int>(heartbeat.count()),
                     AMQP_SASL_METHOD_PLAIN, url_.user.c_str(), url_.password.c_str()),
          "login");
    amqp_channel_open(conn_, 1);
    check(amqp_get_rpc_reply(conn_), "channel.open");
  } catch (const Error&) {
    amqp_destroy_connection(conn_);
    throw;
  }
}

Connection::~Connection() {
  // A polite close when the socket still works; a dead one is just freed.
  if (!broken_ && amqp_get_sockfd(conn_) >= 0) amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
  amqp_destroy_connection(conn_);
}

void Connection::check(amqp_rpc_reply_t reply, const char* what) const {
  if (reply.reply_type == AMQP_RESPONSE_NORMAL) return;
  broken_ = true;
  const std::string where = "broker " + url_.text + ": " + what + ": ";
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return;
    case AMQP_RESPONSE_NONE:
      throw unavailable(where + "no reply");
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      throw unavailable(where + amqp_error_string2(reply.library_error));
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      break;
  }
  int code = 0;
  std::string reason;
  if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
    auto* m = static_cast<amqp_connection_close_t*>(reply.reply.decoded);
    code = m->reply_code;
    reason = text(m->reply_text);
  } else if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
    auto* m = static_cast<amqp_channel_close_t*>(reply.reply.decoded);
    code = m->reply_code;
    reason = text(m->reply_text);
  }
  const std::string message = where + reason + " (AMQP " + std::to_string(code) + ")";
  switch (code) {
    case AMQP_ACCESS_REFUSED:
    case AMQP_NOT_ALLOWED:  // e.g. the vhost does not exist
      throw failed_precondition(message);
    case AMQP_PRECONDITION_FAILED:
      throw failed_precondition(message +
                                "; a queue of that name exists with other arguments (another "
                                "delivery limit?): use another ?queue= or delete it");
    case AMQP_NOT_FOUND:
      throw failed_precondition(message);
    default:  // connection forced (broker stopping), internal errors: try again later
      throw unavailable(message);
  }
}

void Connection::throw_closed(const amqp_method_t& close, const char* what) const {
  amqp_rpc_reply_t reply{};
  reply.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
  reply.reply = close;
  check(reply, what);
  throw internal_error("broker " + url_.text + ": " + what + ": unhandled close");
}

void Connection::check_status(int status, const char* what) const {
  if (status == AMQP_STATUS_OK) return;
  broken_ = true;
  throw unavailable("broker " + url_.text + ": " + what + ": " + amqp_error_string2(status));
}

void Connection::declare(const Layout& l) {
  amqp_exchange_declare(conn_, 1, bytes(l.dead_exchange), amqp_cstring_bytes("fanout"), 0, 1, 0, 0,
                        amqp_empty_table);
  check(amqp_get_rpc_reply(conn_), "declare the dead-letter exchange");
  amqp_table_entry_t args[3];
  args[0].key = amqp_cstring_bytes("x-queue-type");
  args[0].value.kind = AMQP_FIELD_KIND_UTF8;
  args[0].value.value.bytes = amqp_cstring_bytes("quorum");
  args[1].key = amqp_cstring_bytes("x-delivery-limit");
  args[1].value.kind = AMQP_FIELD_KIND_I32;
  // RabbitMQ counts returns, not deliveries: a limit of n allows n + 1 deliveries.
  args[1].value.value.i32 = l.delivery_limit - 1;
  args[2].key = amqp_cstring_bytes("x-dead-letter-exchange");
  args[2].value.kind = AMQP_FIELD_KIND_UTF8;
  args[2].value.value.bytes = bytes(l.dead_exchange);
  amqp_table_t table{3, args};
  amqp_queue_declare(conn_, 1, bytes(l.trials), 0, 1, 0, 0, table);
  check(amqp_get_rpc_reply(conn_), "declare the trial queue");
  for (const std::string* q : {&l.dead, &l.dead_to_store}) {
    amqp_queue_declare(conn_, 1, bytes(*q), 0, 1, 0, 0, amqp_empty_table);
    check(amqp_get_rpc_reply(conn_), "declare a dead-letter queue");
    amqp_queue_bind(conn_, 1, bytes(*q), bytes(l.dead_exchange), amqp_empty_bytes,
                    amqp_empty_table);
    check(amqp_get_rpc_reply(conn_), "bind a dead-letter queue");
  }
}

void Connection::qos(int prefetch) {
  amqp_basic_qos(conn_, 1, 0, static_cast<uint16_t>(prefetch), 0);
  check(amqp_get_rpc_reply(conn_), "basic.qos");
}

std::string Connection::consume(const std::string& queue) {
  amqp_basic_consume_ok_t* ok =
      amqp_basic_consume(conn_, 1, bytes(queue), amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
  check(amqp_get_rpc_reply(conn_), "basic.consume");
  consumer_tags_.push_back(text(ok->consumer_tag));
  return consumer_tags_.back();
}

void Connection::cancel(const std::string& tag) {
  const auto it = std::find(consumer_tags_.begin(), consumer_tags_.end(), tag);
  if (it == consumer_tags_.end()) return;
  // Deliveries that arrive before cancel-ok are kept by rabbitmq-c for poll_delivery.
  amqp_basic_cancel(conn_, 1, bytes(tag));
  check(amqp_get_rpc_reply(conn_), "basic.cancel");
  consumer_tags_.erase(it);
}

void Connection::cancel() {
  while (!consumer_tags_.empty()) cancel(consumer_tags_.back());
}

void Connection::confirm_select() {
  amqp_confirm_select(conn_, 1);
  check(amqp_get_rpc_reply(conn_), "confirm.select");
  confirming_ = true;
}

void Connection::publish(const std::string& queue, const std::vector<std::string>& bodies) {
  amqp_basic_properties_t props{};
  props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_CONTENT_TYPE_FLAG;
  props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
  props.content_type = amqp_cstring_bytes("application/json");
  const uint64_t first = published_ + 1;
  for (const std::string& body : bodies) {
    check_status(
        amqp_basic_publish(conn_, 1, amqp_empty_bytes, bytes(queue), 0, 0, &props, bytes(body)),
        "publish");
    ++published_;
  }
  if (!confirming_ || bodies.empty()) return;
  // Confirms come as basic.ack (possibly `multiple`) with the publish sequence numbers.
  std::vector<bool> confirmed(bodies.size(), false);
  size_t missing = bodies.size();
  auto mark = [&](uint64_t tag, bool multiple) {
    const uint64_t lo = multiple ? first : std::max(first, tag);
    for (uint64_t t = lo; t <= tag && t <= published_; ++t) {
      if (t < first || confirmed[t - first]) continue;
      confirmed[t - first] = true;
      --missing;
    }
  };
  while (missing > 0) {
    amqp_frame_t frame;
    timeval tv = to_timeval(timeout_);
    const int st = amqp_simple_wait_frame_noblock(conn_, &frame, &tv);
    if (st == AMQP_STATUS_TIMEOUT) {
      broken_ = true;
      throw unavailable("broker " + url_.text + ": publish: " + std::to_string(missing) +
                        " messages not confirmed within " + std::to_string(timeout_.count()) +
                        " ms");
    }
    check_status(st, "wait for publisher confirms");
    if (frame.frame_type != AMQP_FRAME_METHOD) continue;
    switch (frame.payload.method.id) {
      case AMQP_BASIC_ACK_METHOD: {
        auto* a = static_cast<amqp_basic_ack_t*>(frame.payload.method.decoded);
        mark(a->delivery_tag, a->multiple);
        break;
      }
      case AMQP_BASIC_NACK_METHOD:
        broken_ = true;
        throw unavailable("broker " + url_.text + ": publish: the broker refused a message");
      case AMQP_CHANNEL_CLOSE_METHOD:
      case AMQP_CONNECTION_CLOSE_METHOD:
        throw_closed(frame.payload.method, "publish");
      default:
        break;
    }
  }
}

std::optional<Message> Connection::get(const std::string& queue) {
  amqp_rpc_reply_t r = amqp_basic_get(conn_, 1, bytes(queue), 0);
  check(r, "basic.get");
  if (r.reply.id != AMQP_BASIC_GET_OK_METHOD) return std::nullopt;  // get-empty
  const auto* ok = static_cast<amqp_basic_get_ok_t*>(r.reply.decoded);
  const uint64_t tag = ok->delivery_tag;
  const bool redelivered = ok->redelivered != 0;
  amqp_message_t message;
  check(amqp_read_message(conn_, 1, &message, 0), "read a message");
  Message m{tag, text(message.body), redelivered};
  amqp_destroy_message(&message);
  return m;
}

std::optional<Message> Connection::poll_delivery() {
  // Frames queued during an RPC live in the buffers: release them only when none are.
  if (!amqp_frames_enqueued(conn_)) amqp_maybe_release_buffers(conn_);
  amqp_envelope_t envelope;
  timeval zero{0, 0};
  amqp_rpc_reply_t r = amqp_consume_message(conn_, &envelope, &zero, 0);
  if (r.reply_type == AMQP_RESPONSE_NORMAL) {
    Message m{envelope.delivery_tag, text(envelope.message.body), envelope.redelivered != 0};
    amqp_destroy_envelope(&envelope);
    return m;
  }
  if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT)
    return std::nullopt;
  if (r.reply_type != AMQP_RESPONSE_LIBRARY_EXCEPTION ||
      r.library_error != AMQP_STATUS_UNEXPECTED_STATE)
    check(r, "consume");
  // Some other method came first: the broker closing the channel or cancelling us.
  amqp_frame_t frame;
  const int st = amqp_simple_wait_frame_noblock(conn_, &frame, &zero);
  if (st == AMQP_STATUS_TIMEOUT) return std::nullopt;
  check_status(st, "consume");
  if (frame.frame_type != AMQP_FRAME_METHOD) return std::nullopt;
  switch (frame.payload.method.id) {
    case AMQP_CHANNEL_CLOSE_METHOD:
    case AMQP_CONNECTION_CLOSE_METHOD:
      throw_closed(frame.payload.method, "consume");
    case AMQP_BASIC_CANCEL_METHOD:
      broken_ = true;
      throw unavailable("broker " + url_.text +
                        ": the broker cancelled the consumer (queue deleted or moved)");
    default:
      return std::nullopt;
  }
}

bool Connection::buffered() const {
  return amqp_frames_enqueued(conn_) || amqp_data_in_buffer(conn_);
}

int Connection::fd() const {
  return amqp_get_sockfd(conn_);
}

void Connection::ack(uint64_t tag) {
  check_status(amqp_basic_ack(conn_, 1, tag, 0), "basic.ack");
}

void Connection::reject(uint64_t tag) {
  check_status(amqp_basic_reject(conn_, 1, tag, 0), "basic.reject");
}

}  // namespace layerlab::queue::amqp
