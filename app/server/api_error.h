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
    ApiError(int status, std::string message, std::string param = {}, std::string code = {},
             std::string type = "invalid_request_error")
        : std::runtime_error(message), status(status), param(std::move(param)), code(std::move(code)),
          type(std::move(type)) {}

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
