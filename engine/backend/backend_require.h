// SPDX-License-Identifier: MIT
// The backends' argument checks: require_or_throw(ok, prefix, message) throws ember::Error(prefix + message) when ok
// is false. The message is a literal or a callable that builds it, so a passing check costs one comparison and no
// string: these checks run for every operation of every decode step (about 1,300 a step on a 40-layer MoE).
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "ember/error.h"

namespace ember {

template <class Message>
concept RequireMessage = std::convertible_to<Message, const char*> || std::invocable<Message>;

template <RequireMessage Message>
std::string require_message_text(Message&& what) {
    if constexpr (std::invocable<Message>)
        return std::string(what());
    else
        return std::string(static_cast<const char*>(what));
}

template <RequireMessage Message>
void require_or_throw(bool ok, std::string_view prefix, Message&& what) {
    if (!ok) [[unlikely]]
        throw Error(std::string(prefix) + require_message_text(std::forward<Message>(what)));
}

}  // namespace ember
