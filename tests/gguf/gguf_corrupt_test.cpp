// SPDX-License-Identifier: MIT
// Table-driven: every damaged file the fixture generator writes (tests/fixtures/make_gguf_fixtures.py, with the
// expected text beside it) must end in its own one-line ember::Error, from a file and from memory alike.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/fixture_path.h"
#include "ember/gguf.h"

using namespace ember::gguf;
using ember::test::fixture_path;

namespace {

std::map<std::string, std::string> expected_errors() {
    std::ifstream in(fixture_path("gguf/corrupt/EXPECTED.json"));
    return nlohmann::json::parse(in).get<std::map<std::string, std::string>>();
}

std::vector<std::byte> read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), {});
    std::vector<std::byte> out(chars.size());
    std::memcpy(out.data(), chars.data(), chars.size());
    return out;
}

}  // namespace

TEST(GgufCorrupt, EachFileHasItsOwnOneLineError) {
    const auto cases = expected_errors();
    ASSERT_GE(cases.size(), 25u);
    std::set<std::string> messages;
    for (const auto& [name, expected] : cases) {
        const auto path = fixture_path("gguf/corrupt") / name;
        std::string message;
        try {
            File::open(path);
        } catch (const ember::Error& e) {
            message = e.what();
        }
        SCOPED_TRACE(name);
        ASSERT_FALSE(message.empty()) << "no error for " << name;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
        EXPECT_NE(message.find(expected), std::string::npos) << message;
        EXPECT_LT(message.size(), 1200u);  // the unknown-type message lists the known types; nothing longer
        messages.insert(message.substr(path.string().size()));
    }
    EXPECT_EQ(messages.size(), cases.size()) << "two corrupt files gave the same error";
}

TEST(GgufCorrupt, SameErrorsFromMemory) {
    for (const auto& [name, expected] : expected_errors()) {
        const auto bytes = read_all(fixture_path("gguf/corrupt") / name);
        try {
            File::from_memory(bytes, name);
            ADD_FAILURE() << "no error for " << name;
        } catch (const ember::Error& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    }
}

TEST(GgufCorrupt, EveryTruncationOfAValidFileFailsCleanly) {
    const auto bytes = read_all(fixture_path("gguf/valid/rich.gguf"));
    const File whole = File::from_memory(bytes, "rich");
    // Cutting anywhere before the end of the last tensor's data must give an error, never a crash.
    const uint64_t needed = whole.data_offset() + whole.tensors().back().offset + whole.tensors().back().n_bytes;
    for (size_t cut = 0; cut < needed; cut += (cut < whole.data_offset() ? 1 : 97)) {
        EXPECT_THROW(File::from_memory(std::span(bytes).first(cut), "cut"), ember::Error) << cut;
    }
}

TEST(GgufCorrupt, SingleByteFlipsNeverCrash) {
    auto bytes = read_all(fixture_path("gguf/valid/rich.gguf"));
    const File whole = File::from_memory(bytes, "rich");
    const uint64_t header_end = whole.data_offset();
    int errors = 0;
    for (uint64_t i = 0; i < header_end; ++i) {
        const std::byte saved = bytes[i];
        for (uint8_t flip : {0x01, 0x80, 0xFF}) {
            bytes[i] = saved ^ std::byte{flip};
            try {
                const File f = File::from_memory(bytes, "flip");
                for (const KeyValue& kv : f.metadata()) (void)kv.value.type_name();
            } catch (const ember::Error&) {
                ++errors;
            }
        }
        bytes[i] = saved;
    }
    EXPECT_GT(errors, 0);
}
