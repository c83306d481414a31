// SPDX-License-Identifier: MIT
// A request the server refuses, as the OpenAI-style error object clients expect:
// {"error": {"message", "type", "param", "code"}} with a 4xx (or 5xx) status.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace ember::server {

class ApiError : public std::runtime_error {
public:
    ApiError(int http_status, const std::string& message, std::string param_name = {}, std::string error_code = {},
             std::string error_type = "invalid_request_error")
        : std::runtime_error(message),
          status(http_status),
          param(std::move(param_name)),
          code(std::move(error_code)),
          type(std::move(error_type)) {}

    nlohmann::json body() const {
        return {{"error",
                 {{"message", what()},
                  {"type", type},
                  {"param", param.empty() ? nlohmann::json() : nlohmann::json(param)},
                  {"code", code.empty() ? nlohmann::json() : nlohmann::json(code)}}}};
    }

    int status;
    std::string param, code, type;
};

}  // namespace ember::server
