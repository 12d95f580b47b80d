// The reason phrase of an HTTP status, for the responses Toolgate writes itself (the edge's
// front, the admin port, the egress gateway). Pure; thread-safe.
#pragma once

namespace toolgate::core {

// "OK", "Not Found", ...: the phrase of RFC 9110 for the statuses Toolgate answers with, and
// "Unknown" for any other (a handler may choose any status from 200 to 599; clients ignore the
// phrase).
const char* ReasonPhrase(int status);

}  // namespace toolgate::core
