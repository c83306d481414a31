// SPDX-License-Identifier: MIT
// Chat turns with images (vision-qwen3vl.md §6) on the tiny qwen35moe vision fixture: a fake projector (a test
// double with deterministic embeddings) for positions, prompt reuse, cached encodings, speculative equality and
// errors; the real small projector fixture (tests/fixtures/make_vision_fixtures.py) end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/error_message.h"
#include "common/fixture_path.h"
#include "backend/backend.h"
#include "model/model.h"
#include "ember/runtime.h"
#include "runtime/session_images.h"

using namespace ember;
using ember::test::fixture_path;

namespace {

using ember::test::error_of;

// Grid: one merged token per 32 x 32 pixels (at least one); embeddings from the pixels' sum and the row index.
class FakeProjector final : public vision::Projector {
public:
    explicit FakeProjector(int64_t dim = 64) : dim_(dim) {}
    const std::string& path() const override { return path_; }
    int64_t projection_dim() const override { return dim_; }
    int64_t patch_size() const override { return 16; }
    int64_t merge() const override { return 2; }
    vision::PixelLimits limits() const override { return {}; }
    void set_max_pixels(int64_t) override {}
    vision::ImageGrid grid(const vision::Image& image) const override {
        vision::ImageGrid g;
        g.patch_rows = 2 * std::max<int64_t>(1, image.height / 32);
        g.patch_cols = 2 * std::max<int64_t>(1, image.width / 32);
        g.height = g.patch_rows * 16;
        g.width = g.patch_cols * 16;
        return g;
    }
    vision::ImageEmbedding encode(const vision::Image& image) const override {
        ++encodes;
        vision::ImageEmbedding e;
        e.grid = grid(image);
        e.n_embd = dim_;
        double sum = 0;
        for (const uint8_t v : image.rgb) sum += v;
        const double phase = sum / static_cast<double>(image.rgb.size() + 1);
        e.rows.resize(static_cast<size_t>(e.tokens() * dim_));
        for (size_t i = 0; i < e.rows.size(); ++i) e.rows[i] = static_cast<float>(std::sin(0.37 * i + phase));
        return e;
    }
    mutable int encodes = 0;

private:
    int64_t dim_;
    std::string path_ = "fake-mmproj.gguf";
};

vision::Image image(int64_t width, int64_t height, uint8_t seed) {
    vision::Image im;
    im.width = width;
    im.height = height;
    im.name = "image-" + std::to_string(seed);
    im.rgb.resize(static_cast<size_t>(width * height * 3));
    for (size_t i = 0; i < im.rgb.size(); ++i) im.rgb[i] = static_cast<uint8_t>(i * 7 + seed * 31);
    return im;
}

std::filesystem::path vision_model() {
    return fixture_path("qwen35moe") / "qwen35moe-vision-f32.gguf";
}

LoadOptions cpu_options() {
    LoadOptions options;
    options.threads = 2;
    options.backend = "cpu";
    return options;
}

std::shared_ptr<LoadedModel> load_with_fake(FakeProjector** fake = nullptr, const std::string& speculation = "auto") {
    LoadOptions options = cpu_options();
    options.speculation = parse_speculation_request(speculation);
    auto model = LoadedModel::load(vision_model(), options);
    auto projector = std::make_unique<FakeProjector>();
    if (fake) *fake = projector.get();
    model->set_projector(std::move(projector));
    return model;
}

// One user message: text, then an image placeholder per image, then more text.
chat::RenderRequest conversation(int images, const std::string& text = "the theater") {
    nlohmann::ordered_json content = nlohmann::ordered_json::array();
    content.push_back({{"type", "text"}, {"text", "look: "}});
    for (int i = 0; i < images; ++i) content.push_back({{"type", "image"}});
    content.push_back({{"type", "text"}, {"text", text}});
    chat::RenderRequest r;
    r.messages.push_back({{"role", "user"}, {"content", content}});
    return r;
}

GenerationOptions greedy(int tokens) {
    GenerationOptions o;
    o.max_tokens = tokens;
    o.ignore_end_of_generation = true;
    return o;
}

int32_t argmax(std::span<const float> v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST(SessionImages, RowsAndPositionsFollowTheSpec) {
    FakeProjector* fake = nullptr;
    auto model = load_with_fake(&fake, "off");
    Session session(model);
    const vision::Image im = image(96, 64, 1);  // merged grid 2 x 3
    const std::vector<vision::Image> images{im};
    const GenerationResult r = session.chat(conversation(1), images, greedy(6));
    EXPECT_EQ(r.stats.image_tokens, 6);
    EXPECT_EQ(fake->encodes, 1);
    ASSERT_EQ(r.tokens.size(), 6u);

    // The same prompt by hand through Model::forward: the image rows at s get (s, s + r, s + c), <|vision_end|>
    // s + max(2, 3), the text after it and every generated token continue from there.
    const int32_t pad = *model->tokenizer().find_token("<|image_pad|>");
    const auto prompt_len = static_cast<size_t>(r.stats.prompt_tokens);
    std::vector<int32_t> prompt(session.cached_tokens().begin(), session.cached_tokens().begin() + prompt_len);
    const auto s = static_cast<size_t>(std::find(prompt.begin(), prompt.end(), pad) - prompt.begin());
    ASSERT_EQ(std::count(prompt.begin(), prompt.end(), pad), 6);
    std::vector<int32_t> t, h, w;
    for (size_t i = 0; i < s; ++i) t.push_back(static_cast<int32_t>(i)), h.push_back(t.back()), w.push_back(t.back());
    for (int32_t row = 0; row < 2; ++row)
        for (int32_t col = 0; col < 3; ++col)
            t.push_back(int32_t(s)), h.push_back(int32_t(s) + row), w.push_back(int32_t(s) + col);
    for (size_t i = s + 6; i < prompt_len; ++i) {
        t.push_back(static_cast<int32_t>(s + 3 + (i - s - 6)));
        h.push_back(t.back());
        w.push_back(t.back());
    }
    const vision::ImageEmbedding emb = fake->encode(im);
    const Model& m = model->model();
    StateOptions so;
    so.n_ctx = 256;
    auto state = m.create_state(so);
    std::vector<float> logits;
    auto run = [&](size_t first, size_t n, bool with_image) {
        std::vector<int32_t> rope;
        for (const auto* axis : {&t, &h, &w}) rope.insert(rope.end(), axis->begin() + first, axis->begin() + first + n);
        ForwardRequest req{std::span<const int32_t>(prompt).subspan(first, n), static_cast<int32_t>(first)};
        const ForwardRequest::EmbeddedRows rows{0, 6, emb.rows};
        if (with_image) req.embedded = std::span(&rows, 1);
        req.rope_positions = rope;
        m.forward(*state, req, logits);
    };
    run(0, s, false);
    run(s, prompt_len - s, true);
    int32_t position = t.back() + 1;
    std::vector<int32_t> expected{argmax(logits)};
    while (expected.size() < 6) {
        const int32_t one[1] = {expected.back()};
        const int32_t rope[3] = {position, position, position};
        ForwardRequest req{one, static_cast<int32_t>(prompt_len + expected.size() - 1)};
        req.rope_positions = rope;
        m.forward(*state, req, logits);
        expected.push_back(argmax(logits));
        ++position;
    }
    EXPECT_EQ(r.tokens, expected);
}

TEST(SessionImages, PromptReuseStopsAtTheFirstChangedImage) {
    FakeProjector* fake = nullptr;
    auto model = load_with_fake(&fake, "off");
    Session session(model);
    const std::vector<vision::Image> a{image(96, 64, 1)}, b{image(96, 64, 2)};
    // Prompts that end with the user's message, so that the next one extends this one exactly.
    chat::RenderRequest conv = conversation(1);
    conv.add_generation_prompt = false;
    const GenerationResult first = session.chat(conv, a, greedy(3));
    EXPECT_EQ(first.stats.reused_tokens, 0);
    EXPECT_GT(first.stats.image_seconds, 0.0);

    // A follow-up turn reuses the whole first prompt, image included, without encoding it again.
    chat::RenderRequest follow = conv;
    follow.messages.push_back({{"role", "user"}, {"content", "and then"}});
    int image_calls = 0;
    GenerationOptions o = greedy(3);
    o.on_image = [&](int, int) { ++image_calls; };
    const GenerationResult second = session.chat(follow, a, o);
    EXPECT_EQ(second.stats.reused_tokens, first.stats.prompt_tokens);
    EXPECT_EQ(second.stats.image_tokens, 6);
    EXPECT_EQ(second.stats.image_seconds, 0.0);
    EXPECT_EQ(image_calls, 0);
    EXPECT_EQ(fake->encodes, 1);

    // Another image in the same place: everything before its first row is reused, nothing from there.
    const int32_t pad = *model->tokenizer().find_token("<|image_pad|>");
    const auto& cached = session.cached_tokens();
    const auto s = std::find(cached.begin(), cached.end(), pad) - cached.begin();
    const GenerationResult third = session.chat(conv, b, o);
    EXPECT_EQ(image_calls, 1);
    EXPECT_EQ(third.stats.reused_tokens, s);
    EXPECT_EQ(third.stats.prefilled_tokens, third.stats.prompt_tokens - s);

    // The same result as a fresh session with image b.
    Session fresh(model);
    EXPECT_EQ(fresh.chat(conv, b, greedy(3)).tokens, third.tokens);
}

namespace {

// Greedy speculative decoding of a two-image conversation gives plain decoding's tokens, and so does a follow-up
// turn that reuses the image prefix.
void expect_drafted_equals_plain(const std::shared_ptr<LoadedModel>& model, const std::string& method) {
    ASSERT_EQ(speculation_name(model->speculation()), method);
    const std::vector<vision::Image> images{image(96, 64, 1), image(40, 70, 3)};
    SessionOptions plain_options;
    plain_options.speculate = false;
    Session plain(model, plain_options), drafted(model);
    const chat::RenderRequest conv = conversation(2, "the theater is");
    const GenerationResult p = plain.chat(conv, images, greedy(40));
    const GenerationResult d = drafted.chat(conv, images, greedy(40));
    EXPECT_EQ(d.tokens, p.tokens);
    EXPECT_EQ(speculation_name(d.stats.speculation), method);
    EXPECT_GT(d.stats.draft_steps, 0);
    EXPECT_EQ(d.stats.image_tokens, 6 + 2);
    chat::RenderRequest follow = conv;
    follow.messages.push_back({{"role", "assistant"}, {"content", p.content}});
    follow.messages.push_back({{"role", "user"}, {"content", "more"}});
    EXPECT_EQ(drafted.chat(follow, images, greedy(20)).tokens, plain.chat(follow, images, greedy(20)).tokens);
}

}  // namespace

TEST(SessionImages, MtpGreedyWithImagesIsTokenForTokenPlainDecoding) {
    expect_drafted_equals_plain(load_with_fake(), "mtp");
}

TEST(SessionImages, ErrorsAreOneLine) {
    LoadOptions options = cpu_options();
    auto bare = LoadedModel::load(vision_model(), options);
    Session no_projector(bare);
    const std::vector<vision::Image> one{image(64, 64, 1)}, two{image(64, 64, 1), image(64, 64, 2)};
    const std::string none = error_of([&] { no_projector.chat(conversation(1), one, greedy(1)); });
    EXPECT_NE(none.find("no vision projector"), std::string::npos) << none;
    EXPECT_NE(none.find("qwen35moe-vision-f32.gguf"), std::string::npos) << none;

    auto model = load_with_fake();
    Session session(model);
    for (const auto& [conv, images] : {std::pair{conversation(1), two}, std::pair{conversation(2), one},
                                       std::pair{conversation(1), std::vector<vision::Image>{}}}) {
        const std::string e = error_of([&] { session.chat(conv, images, greedy(1)); });
        EXPECT_NE(e.find("image placeholder"), std::string::npos) << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
    // The session stays usable.
    EXPECT_EQ(session.chat(conversation(1), one, greedy(2)).tokens.size(), 2u);
    EXPECT_EQ(session.chat(conversation(0), {}, greedy(2)).tokens.size(), 2u);

    const std::string wide = error_of([&] { bare->set_projector(std::make_unique<FakeProjector>(32)); });
    EXPECT_NE(wide.find("fake-mmproj.gguf"), std::string::npos) << wide;
    EXPECT_NE(wide.find("qwen35moe-vision-f32.gguf"), std::string::npos) << wide;

    auto dense = LoadedModel::load(fixture_path("dense") / "qwen3-f32.gguf", options);
    const std::string text_only = error_of([&] { dense->set_projector(std::make_unique<FakeProjector>()); });
    EXPECT_NE(text_only.find("cannot read images"), std::string::npos) << text_only;
    LoadOptions with_mmproj = options;
    with_mmproj.mmproj = fixture_path("vision") / "mmproj-F32.gguf";
    const std::string at_load =
        error_of([&] { LoadedModel::load(fixture_path("dense") / "qwen3-f32.gguf", with_mmproj); });
    EXPECT_NE(at_load.find("cannot read images"), std::string::npos) << at_load;
    EXPECT_NE(at_load.find("mmproj-F32.gguf"), std::string::npos) << at_load;
}

TEST(SessionImages, RealProjectorEndToEnd) {
    LoadOptions options = cpu_options();
    options.mmproj = fixture_path("vision") / "mmproj-F32.gguf";
    auto model = LoadedModel::load(vision_model(), options);
    ASSERT_NE(model->projector(), nullptr);
    const vision::Image im = vision::load_image(fixture_path("vision") / "image_50x70.png");
    const int64_t tokens = model->projector()->grid(im).tokens();
    Session session(model);
    std::vector<std::pair<int, int>> calls;
    GenerationOptions o = greedy(4);
    o.on_image = [&](int done, int total) { calls.emplace_back(done, total); };
    const std::vector<vision::Image> images{im};
    const GenerationResult r = session.chat(conversation(1), images, o);
    EXPECT_EQ(r.stats.image_tokens, tokens);
    EXPECT_GT(r.stats.image_seconds, 0.0);
    EXPECT_EQ(calls, (std::vector<std::pair<int, int>>{{0, 1}}));
    EXPECT_EQ(r.tokens.size(), 4u);
    const int32_t pad = *model->tokenizer().find_token("<|image_pad|>");
    EXPECT_EQ(std::count(session.cached_tokens().begin(), session.cached_tokens().end(), pad), tokens);

    // A lowered pixel limit reaches the projector.
    options.image_max_pixels = 32 * 32 * 4;
    auto limited = LoadedModel::load(vision_model(), options);
    EXPECT_EQ(limited->projector()->limits().max_pixels, 32 * 32 * 4);
}

// The image rows and M-RoPE positions on Vulkan (lavapipe in CI) give the CPU's logits.
TEST(SessionImages, ImageRowsOnVulkanMatchTheCpu) {
    std::unique_ptr<Backend> vulkan;
    try {
        vulkan = make_backend("vulkan");
    } catch (const Error& e) {
        GTEST_SKIP() << e.what();
    }
    const gguf::File file = gguf::File::open(vision_model());
    auto cpu = make_cpu_backend({2});
    const FakeProjector fake;
    const vision::ImageEmbedding emb = fake.encode(image(96, 64, 1));
    const int32_t pad = 275;  // <|image_pad|> of the fixture's vocabulary
    const std::vector<int32_t> tokens{269, 72, 101, 273, pad, pad, pad, pad, pad, pad, 274, 100, 33, 10};
    std::vector<int32_t> rope(3 * tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
        const bool in_image = i >= 4 && i < 10;
        const auto p = static_cast<int32_t>(i < 4 ? i : i < 10 ? 4 : i - 3);
        rope[i] = p;
        rope[tokens.size() + i] = in_image ? 4 + static_cast<int32_t>(i - 4) / 3 : p;
        rope[2 * tokens.size() + i] = in_image ? 4 + static_cast<int32_t>(i - 4) % 3 : p;
    }
    auto logits_on = [&](Backend& backend) {
        auto model = load_model(file, backend);
        StateOptions so;
        so.n_ctx = 64;
        so.kv_type = KvCacheType::f32;
        auto state = model->create_state(so);
        const ForwardRequest::EmbeddedRows rows{4, 6, emb.rows};
        ForwardRequest req{tokens, 0, true};
        req.embedded = std::span(&rows, 1);
        req.rope_positions = rope;
        std::vector<float> logits;
        model->forward(*state, req, logits);
        return logits;
    };
    const std::vector<float> a = logits_on(*cpu), b = logits_on(*vulkan);
    ASSERT_EQ(a.size(), b.size());
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(double(a[i]) - b[i]));
        norm = std::max(norm, std::abs(double(a[i])));
    }
    EXPECT_LT(diff / norm, 1e-3) << vulkan->name();
}

TEST(SessionImages, DflashGreedyWithImagesIsTokenForTokenPlainDecoding) {
    LoadOptions options = cpu_options();
    options.draft_file = fixture_path("dflash") / "draft-qwen35moe-vision.gguf";
    auto model = LoadedModel::load(vision_model(), options);
    model->set_projector(std::make_unique<FakeProjector>());
    expect_drafted_equals_plain(model, "dflash");
}

TEST(SessionImages, CancelStopsBetweenEncodings) {
    FakeProjector* fake = nullptr;
    auto model = load_with_fake(&fake, "off");
    Session session(model);
    const std::vector<vision::Image> images{image(96, 64, 1), image(40, 70, 3)};
    GenerationOptions o = greedy(4);
    std::vector<std::pair<int, int>> calls;
    o.on_image = [&](int done, int total) {
        calls.emplace_back(done, total);
        session.cancel();
    };
    const GenerationResult r = session.chat(conversation(2), images, o);
    EXPECT_EQ(r.stop_reason, StopReason::cancelled);
    EXPECT_TRUE(r.tokens.empty());
    EXPECT_EQ(fake->encodes, 1);
    EXPECT_EQ(calls, (std::vector<std::pair<int, int>>{{0, 2}}));
    // The next turn encodes only the image that is not cached yet.
    o.on_image = [&](int done, int total) { calls.emplace_back(done, total); };
    EXPECT_EQ(session.chat(conversation(2), images, o).tokens.size(), 4u);
    EXPECT_EQ(fake->encodes, 2);
    EXPECT_EQ(calls.back(), std::make_pair(0, 1));
}

TEST(SessionImages, EncodingCacheDropsTheLeastRecentlyUsed) {
    auto embedding = [](int64_t floats) {
        auto e = std::make_shared<vision::ImageEmbedding>();
        e->rows.resize(static_cast<size_t>(floats));
        return e;
    };
    runtime::EncodingCache cache(1000 * sizeof(float));
    cache.insert(1, embedding(400));
    cache.insert(2, embedding(400));
    ASSERT_NE(cache.find(1), nullptr);  // 1 is now the most recent
    cache.insert(3, embedding(400));
    EXPECT_NE(cache.find(1), nullptr);
    EXPECT_EQ(cache.find(2), nullptr);
    EXPECT_NE(cache.find(3), nullptr);
    EXPECT_EQ(cache.bytes(), 800 * sizeof(float));
    cache.insert(4, embedding(5000));  // larger than the bound: kept alone
    EXPECT_EQ(cache.find(1), nullptr);
    EXPECT_NE(cache.find(4), nullptr);
    EXPECT_NE(runtime::image_key(image(8, 8, 1)), runtime::image_key(image(8, 8, 2)));
    EXPECT_NE(runtime::image_key(image(8, 4, 1)), runtime::image_key(image(4, 8, 1)));
}
