// SPDX-License-Identifier: MIT
// The message of the ember::Error a call throws, for the tests that check what a failure says.
#pragma once

#include <string>

#include "ember/error.h"

namespace ember::test {

// "(no error)" when f returns normally; any other exception passes through.
std::string error_of(auto&& f) {
    try {
        f();
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace ember::test
