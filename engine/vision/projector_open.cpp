// SPDX-License-Identifier: MIT
// vision::open_projector: a projector that owns its mapped file and its backend.
#include "vision/load_projector.h"

namespace ember::vision {

namespace {

class OwningProjector final : public Projector {
public:
    OwningProjector(const std::filesystem::path& path, const std::string& backend, int threads) {
        BackendOptions options;
        options.threads = threads;
        backend_ = make_backend(backend, options);
        file_ = std::make_unique<gguf::File>(gguf::File::open(path));
        inner_ = load_projector(*file_, path, *backend_);
    }
    const Backend& backend() const { return *backend_; }

    const std::string& path() const override { return inner_->path(); }
    int64_t projection_dim() const override { return inner_->projection_dim(); }
    int64_t patch_size() const override { return inner_->patch_size(); }
    int64_t merge() const override { return inner_->merge(); }
    PixelLimits limits() const override { return inner_->limits(); }
    void set_max_pixels(int64_t max_pixels) override { inner_->set_max_pixels(max_pixels); }
    ImageGrid grid(const Image& image) const override { return inner_->grid(image); }
    ImageEmbedding encode(const Image& image) const override { return inner_->encode(image); }

private:
    std::unique_ptr<Backend> backend_;  // declared first: destroyed after the projector that uses it
    std::unique_ptr<gguf::File> file_;
    std::unique_ptr<Projector> inner_;
};

}  // namespace

OpenedProjector open_projector(const std::filesystem::path& path, const std::string& backend, int threads) {
    auto projector = std::make_unique<OwningProjector>(path, backend, threads);
    std::string name = projector->backend().name();
    return {std::move(projector), std::move(name)};
}

}  // namespace ember::vision
