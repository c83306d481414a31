// SPDX-License-Identifier: MIT
// Ember's error type. Every failure the engine reports to a caller is an ember::Error whose message is one line
// that names the file, tensor or key and says what was expected and what was found. Never thrown for
// programming errors (those are assertions); only for bad input and failed I/O.
#pragma once

#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A GPU that failed while it ran (device lost, out of device memory): the model on it is no longer usable, but
// the program is; callers offer to load it again, e.g. on the CPU.
class DeviceError : public Error {
public:
    using Error::Error;
};

}  // namespace ember
