// SPDX-License-Identifier: MIT
// A device that fails on purpose: after a set number of operations every further one throws DeviceError as a lost
// GPU would, so tests (and anyone checking how the app copes) can see a failure in the middle of a turn.
#include <cstdlib>
#include <string>

#include "backend/wrap/device_fault_backend.h"
#include "backend/wrap/forwarding_backend.h"
#include "ember/error.h"

namespace ember {

namespace {

class DeviceFaultBackend final : public ForwardingBackend {
public:
    DeviceFaultBackend(std::unique_ptr<Backend> inner, long long fail_after)
        : ForwardingBackend(std::move(inner)), left_(fail_after), fail_after_(fail_after) {}

private:
    void before_operation() override {
        if (left_ > 0) {
            --left_;
            return;
        }
        throw DeviceError(inner().name() + ": the device was lost (" + kDeviceFaultVariable + "=" +
                          std::to_string(fail_after_) + ")");
    }

    long long left_;
    long long fail_after_;
};

}  // namespace

std::unique_ptr<Backend> with_injected_device_fault(std::unique_ptr<Backend> backend) {
    const char* value = std::getenv(kDeviceFaultVariable);
    if (!value || !*value) return backend;
    char* end = nullptr;
    const long long after = std::strtoll(value, &end, 10);
    if (*end != '\0' || after < 0)
        throw Error(std::string(kDeviceFaultVariable) + " must be a number of operations, not '" + value + "'");
    return std::make_unique<DeviceFaultBackend>(std::move(backend), after);
}

}  // namespace ember
