// SPDX-License-Identifier: MIT
// libFuzzer target: any byte string given to the GGUF reader either parses or throws ember::Error; nothing else.
// A parsed file is walked completely (every value, every array element, every tensor's data), and a chat
// template it carries is parsed and rendered as `ember-cli run` would, within tight limits: a hostile embedded
// template (a size blow-up, a range near 2^64) must end as ember::Error, never as an abort.
#include <cstddef>
#include <cstdint>

#include "ember/chat.h"
#include "ember/gguf.h"

namespace {

uint64_t walk(const ember::gguf::Value& v) {
    uint64_t sum = v.raw().size();
    if (v.type() == ember::gguf::ValueType::ARRAY)
        for (uint64_t i = 0; i < v.size(); ++i) sum += walk(v.item(i));
    else if (v.type() == ember::gguf::ValueType::STRING)
        sum += v.as_string().size();
    return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto file = ember::gguf::File::from_memory({reinterpret_cast<const std::byte*>(data), size}, "fuzz");
        volatile uint64_t sink = 0;
        for (const auto& kv : file.metadata()) sink = sink + walk(kv.value);
        for (const auto& t : file.tensors()) {
            const auto bytes = file.tensor_data(t);
            if (!bytes.empty()) sink = sink + static_cast<uint8_t>(bytes.front()) + static_cast<uint8_t>(bytes.back());
        }
        (void)ember::gguf::describe(file);
        if (const auto source = ember::chat::template_from_gguf(file)) {
            ember::chat::Limits limits;
            limits.max_output_bytes = 256 << 10;
            limits.max_steps = 200'000;
            limits.max_time = std::chrono::milliseconds(2000);
            ember::chat::RenderRequest request;
            request.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
            sink = sink +
                   ember::chat::apply_template(ember::chat::Template::parse(*source, "fuzz"), request, limits).size();
        }
    } catch (const ember::Error&) {
    }
    return 0;
}
