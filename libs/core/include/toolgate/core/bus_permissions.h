// Who may publish and subscribe what on the bus: one NATS user per service, and the subjects
// each one needs, as data. The launcher renders this table into the nats-server configuration
// of the embedded default, deploy/nats.conf is the same rendering (a test keeps them equal),
// and services name their user (and so their inbox prefix) from it.
//
// Each list is derived from every Subscribe/Publish/Request of a service and the subjects of
// proto/toolgate/v1/toolgate.proto, the inboxes it answers included: only the edge has NATS's
// `allow_responses` (edges answer each other's rare requests). The stages do not: they receive
// every job as a request they forward rather than answer, and nats-server keeps one entry per
// unanswered request per connection, rescanning the table on every message past 4,096 entries
// (it cost 800 us of server CPU per call). Inboxes are per user,
// `_INBOX.<user>.…`, so only the edge can read the edge's replies, and only billing can send
// the executor its settlement acks.
//
// Immutable after static initialisation: thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate::core {

// nats-server's max_payload, in the launcher's configuration and deploy/nats.conf alike: one
// message carries a whole published bundle (registry's --bundle-max-mb, at most 60 MiB, as the
// request body or a CodeReply). 64 MiB is the most nats-server accepts.
inline constexpr long kNatsMaxPayloadBytes = 64L << 20;

struct BusUser {
  std::string name;                    // NATS user name; also the service's name
  std::vector<std::string> publish;    // subjects or wildcards it may publish to
  std::vector<std::string> subscribe;  // subjects or wildcards it may subscribe to
  bool allow_responses = false;        // may answer any request it received, once
};

// Every user: the six services and the launcher (which asks the services' health).
const std::vector<BusUser>& BusUsers();
// The user called name; nullptr for none.
const BusUser* FindBusUser(std::string_view name);

// "_INBOX.<user>": the prefix of every inbox a user's connection makes.
std::string InboxPrefix(std::string_view user);

// Whether user's lists allow publishing to (subscribing to) subject. Replies allowed by
// allow_responses (the edge's) are not counted: they depend on what the user received.
bool MayPublish(const BusUser& user, std::string_view subject);
bool MaySubscribe(const BusUser& user, std::string_view subject);

// The nats-server `authorization { users = [...] }` block for every user. password(user) gives
// the text that follows `password: ` (a quoted value, or a $VARIABLE the server reads from its
// environment).
std::string NatsAuthorization(const std::function<std::string(const std::string& user)>& password);

}  // namespace toolgate::core
