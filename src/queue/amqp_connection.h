// A blocking AMQP 0-9-1 connection (rabbitmq-c) with one channel, and the broker URL and
// queue layout layerlab uses. Private to src/queue/.
//
// Errors: the broker unreachable, the connection lost or closed by the broker (restart,
// heartbeat timeout) -> kUnavailable (drop the Connection, back off, connect again);
// refused credentials, an unknown vhost, a queue declared with other arguments ->
// kFailedPrecondition (configuration: retrying will not help). Messages name the broker
// URL with the password hidden.
//
// Thread-safety: none; one thread uses a Connection at a time.
#pragma once

#include <amqp.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::queue::amqp {

// amqp://user:pass@host:port/vhost[?queue=NAME] (vhost percent-encoded: %2f is "/").
struct BrokerUrl {
  std::string host;
  int port = 5672;
  std::string user = "guest";
  std::string password = "guest";
  std::string vhost = "/";
  std::string queue = "layerlab.trials";  // the trial queue; its dead letters are derived
  std::string text;                       // the URL with the password hidden, for messages
};
// kInvalidArgument naming the URL (password hidden) and what is wrong with it.
BrokerUrl parse_broker_url(std::string_view url);

// The queues of one layerlab deployment on a broker.
struct Layout {
  std::string trials;         // durable quorum queue: one message per trial to run
  std::string dead_exchange;  // fanout: where the broker sends trials past the limit
  std::string dead;           // keeps dead-lettered trials for operators to inspect
  std::string dead_to_store;  // the same messages, for the coordinator to fail in the store
  int delivery_limit = 3;     // deliveries of a message before the broker dead-letters it
};
Layout layout(const BrokerUrl& url, int delivery_limit);

struct Message {
  uint64_t tag = 0;
  std::string body;
  bool redelivered = false;  // delivered before to a consumer that did not ack it
};

class Connection {
 public:
  // Connects, logs in (heartbeat interval `heartbeat`; 0 turns heartbeats off) and opens
  // channel 1. Gives up after `timeout` for the TCP connect and each RPC.
  Connection(const BrokerUrl& url, std::chrono::seconds heartbeat,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Declares (idempotently) the queues of `l` and their binding.
  void declare(const Layout& l);
  // The prefetch of consumers started after this call (those started before keep theirs).
  void qos(int prefetch);
  // Starts a consumer of `queue` on the channel; returns its tag. Several may run at once.
  std::string consume(const std::string& queue);
  // Stops one consumer, or every one; deliveries already sent can still be read (and must
  // be acked or rejected). The broker returns to the queue, marked redelivered, what it had
  // assigned to that consumer but not sent yet.
  void cancel(const std::string& tag);
  void cancel();
  void confirm_select();

  // Publishes persistent messages to `queue` (default exchange) and, in confirm mode,
  // waits until the broker has confirmed every one (kUnavailable if any is nacked or the
  // confirms do not come within the timeout).
  void publish(const std::string& queue, const std::vector<std::string>& bodies);

  // basic.get: the next message of `queue`, to ack; nullopt when it is empty.
  std::optional<Message> get(const std::string& queue);

  // The next delivery to the consumer, if one can be read without waiting.
  std::optional<Message> poll_delivery();
  // Whether poll_delivery may have something without the socket becoming readable.
  bool buffered() const;
  int fd() const;

  void ack(uint64_t tag);
  void reject(uint64_t tag);  // without requeue: the broker dead-letters it

 private:
  void check(amqp_rpc_reply_t reply, const char* what) const;
  void check_status(int status, const char* what) const;
  // The broker closed the channel or connection (a method read outside an RPC): throws.
  [[noreturn]] void throw_closed(const amqp_method_t& close, const char* what) const;

  const BrokerUrl url_;
  const std::chrono::milliseconds timeout_;
  amqp_connection_state_t conn_;
  mutable bool broken_ = false;  // an error was seen: close without the handshake
  bool confirming_ = false;
  std::vector<std::string> consumer_tags_;
  uint64_t published_ = 0;  // messages published in confirm mode (their sequence numbers)
};

}  // namespace layerlab::queue::amqp
