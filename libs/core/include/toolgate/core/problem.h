// Platform errors (contract section 2): one catalogue of codes, their HTTP status and title, and
// the RFC 9457 problem+json rendering.
#pragma once

#include <string>
#include <string_view>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// A Problem for a catalogued code with the given detail ("what to do"). An unknown code is a
// programming error and becomes 500 internal_error.
v1::Problem MakeProblem(std::string_view code, std::string_view detail);
// 422 validation_failed with one field error; add more with AddFieldError.
v1::Problem ValidationProblem(std::string_view field, std::string_view message);
void AddFieldError(v1::Problem* problem, std::string_view field, std::string_view message);

// The problem+json body.
std::string RenderProblem(const v1::Problem& problem, std::string_view request_id);

}  // namespace toolgate::core
