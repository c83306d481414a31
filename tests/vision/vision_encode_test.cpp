// SPDX-License-Identifier: MIT
// Embeddings of the small random projector (F32 and F16) against the numpy reference, on the CPU and on every
// Vulkan device this build sees (lavapipe in CI); pairing and the projection_dim check.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "ember/error.h"
#include "ember/vision.h"
#include "vision/load_projector.h"
#include "vision/vision_test_support.h"

namespace ember::vision {
namespace {

std::vector<std::string> backends() {
    std::vector<std::string> names{"cpu"};
    std::string error;
    for (const DeviceInfo& d : list_devices(&error))
        if (d.usable) names.push_back(d.backend + ":" + std::to_string(d.index));
    return names;
}

void check_variant(const std::string& file, const std::string& ref) {
    const nlohmann::json meta = test::vision_meta();
    const std::vector<float> want = test::read_raw<float>(test::vision_fixture(ref));
    const Image image = load_image(test::vision_fixture(meta["image"]));
    for (const std::string& name : backends()) {
        SCOPED_TRACE(name);
        auto backend = make_backend(name);
        const gguf::File gf = gguf::File::open(test::vision_fixture(file));
        std::unique_ptr<Projector> projector;
        ImageEmbedding e;
        try {
            projector = load_projector(gf, test::vision_fixture(file), *backend);
            const auto t0 = std::chrono::steady_clock::now();
            e = projector->encode(image);
            std::printf("  %s on %s: %.3f s\n", file.c_str(), name.c_str(),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        } catch (const Error& err) {
            // A backend whose vision ops are not built yet is reported, not failed (the op suite owns those ops).
            if (std::string(err.what()).find("not available") == std::string::npos) throw;
            std::printf("  %s on %s: skipped (%s)\n", file.c_str(), name.c_str(), err.what());
            continue;
        }
        EXPECT_EQ(e.grid.height, meta["height"].get<int64_t>());
        EXPECT_EQ(e.grid.width, meta["width"].get<int64_t>());
        EXPECT_EQ(e.tokens(), meta["tokens"].get<int64_t>());
        EXPECT_EQ(e.n_embd, meta["projection_dim"].get<int64_t>());
        EXPECT_FALSE(e.downscaled);
        ASSERT_EQ(e.rows.size(), want.size());
        double max_diff = 0, max_ref = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            max_diff = std::max(max_diff, std::abs(double(e.rows[i]) - want[i]));
            max_ref = std::max(max_ref, std::abs(double(want[i])));
        }
        std::printf("  %s on %s: max relative difference %.3g\n", file.c_str(), name.c_str(), max_diff / max_ref);
        EXPECT_LE(max_diff / max_ref, 1e-4) << "max diff " << max_diff << " of " << max_ref;
    }
}

TEST(VisionEncode, F32MatchesReference) {
    check_variant("mmproj-F32.gguf", "embedding_f32.f32");
}
TEST(VisionEncode, F16MatchesReference) {
    check_variant("mmproj-F16.gguf", "embedding_f16.f32");
}

TEST(VisionPairing, MismatchNamesBothFiles) {
    auto backend = make_cpu_backend();
    const auto path = test::vision_fixture("mmproj-F32.gguf");
    const gguf::File gf = gguf::File::open(path);
    const auto projector = load_projector(gf, path, *backend);
    EXPECT_EQ(projector->projection_dim(), 64);
    EXPECT_EQ(projector_mismatch(*projector, 64, "/models/tiny.gguf"), "");
    const std::string m = projector_mismatch(*projector, 2048, "/models/big.gguf");
    EXPECT_NE(m.find(path.string()), std::string::npos) << m;
    EXPECT_NE(m.find("/models/big.gguf"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_EQ(projector->limits().max_pixels, 131072);
    projector->set_max_pixels(20000);
    EXPECT_EQ(projector->limits().max_pixels, 20000);
}

TEST(VisionPairing, ProjectorsBesideBestFirst) {
    const auto dir = std::filesystem::temp_directory_path() / "ember_vision_beside";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const char* n : {"Model-Q8_0.gguf", "mmproj-BF16.gguf", "mmproj-F32.gguf", "mmproj-F16.gguf",
                          "mmproj-Model-Q8_0.gguf", "notes.txt"})
        std::ofstream(dir / n) << "x";
    const auto found = projectors_beside(dir / "Model-Q8_0.gguf");
    ASSERT_EQ(found.size(), 4u);
    EXPECT_EQ(found[0].filename(), "mmproj-Model-Q8_0.gguf");
    EXPECT_EQ(found[1].filename(), "mmproj-F16.gguf");
    EXPECT_EQ(found[2].filename(), "mmproj-F32.gguf");
    EXPECT_EQ(found[3].filename(), "mmproj-BF16.gguf");
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ember::vision
