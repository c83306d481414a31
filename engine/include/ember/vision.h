// SPDX-License-Identifier: MIT
// Vision: images decoded and preprocessed for a vision projector (an mmproj GGUF of the Qwen3-VL merger type), the
// projector itself (a ViT encoder and a merger on the model's backend) and the image-token embeddings it returns
// for the text model. ../specs/vision-qwen3vl.md is the specification; Hugging Face transformers is the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ember/gguf.h"

namespace ember::vision {

// An 8-bit RGB image, rows top to bottom, EXIF orientation already applied.
struct Image {
    int64_t width = 0;
    int64_t height = 0;
    std::vector<uint8_t> rgb;  // width * height * 3
    std::string name;          // the file or attachment name, for messages
};

// The largest image decode_image accepts (the header's claim is checked before any pixel is decoded).
inline constexpr int64_t kMaxDecodedPixels = 100'000'000;

// PNG, JPEG (EXIF orientation applied), BMP, GIF (first frame). Throws ember::Error "NAME: problem" for anything
// else (unsupported format, truncated or corrupt data, an empty image, a header claiming more than
// kMaxDecodedPixels), in bounded time and memory.
Image decode_image(std::span<const std::byte> bytes, const std::string& name);
Image load_image(const std::filesystem::path& path);

// The pixel budget of a resized image (spec §4.1): HF's limits unless the projector's keys or the user set others.
struct PixelLimits {
    int64_t min_pixels = 65'536;
    int64_t max_pixels = 16'777'216;
};

// The size an image is resized to and the patch grids it gives.
struct ImageGrid {
    int64_t height = 0, width = 0;          // resized pixels (multiples of patch_size * merge)
    int64_t patch_rows = 0, patch_cols = 0; // height / patch_size, width / patch_size (both even)
    int64_t merge = 2;
    int64_t merged_rows() const { return patch_rows / merge; }
    int64_t merged_cols() const { return patch_cols / merge; }
    int64_t patches() const { return patch_rows * patch_cols; }
    int64_t tokens() const { return merged_rows() * merged_cols(); }  // image tokens in the text sequence
};

// Spec §4.1 (round half to even, then the limits in double precision). factor = patch_size * merge.
ImageGrid smart_resize(int64_t height, int64_t width, int64_t patch_size, int64_t merge, const PixelLimits& limits);

// Whether smart_resize shrinks an image of this size to the maximum pixel limit (step 2 of spec §4.1).
bool downscaled_by_limits(int64_t height, int64_t width, int64_t patch_size, int64_t merge, const PixelLimits& limits);

// The antialiased bicubic resampling of spec §4.2 alone (PyTorch's interpolate(mode="bicubic", antialias=True,
// align_corners=False) on the pixels as floats, width first, then height; rounded half to even and clamped back
// to 8 bits as the Hugging Face processor does): out_height x out_width RGB.
std::vector<uint8_t> resize_bicubic_antialias(const Image& image, int64_t out_height, int64_t out_width);

// Spec §4.2: bicubic resampling with antialias to grid.height x grid.width, per-channel normalisation, two
// identical frames, patches in merge-block order, each [C = 3][T = 2][patch][patch]:
// [grid.patches(), 3 * 2 * patch_size * patch_size] floats.
std::vector<float> preprocess(const Image& image, const ImageGrid& grid, int64_t patch_size,
                              std::span<const float, 3> mean, std::span<const float, 3> std);

// What a projector turned one image into: [n_tokens, n_embd] rows, merged-grid row-major.
struct ImageEmbedding {
    ImageGrid grid;
    int64_t n_embd = 0;
    std::vector<float> rows;
    bool downscaled = false;  // the image was larger than the pixel limit and was resized down to it
    int64_t tokens() const { return grid.tokens(); }
};

// A vision projector (general.architecture = clip, clip.projector_type = qwen3vl_merger) bound to a backend.
class Projector {
public:
    virtual ~Projector() = default;
    virtual const std::string& path() const = 0;
    virtual int64_t projection_dim() const = 0;  // the text model's embedding length it feeds
    virtual int64_t patch_size() const = 0;
    virtual int64_t merge() const = 0;
    virtual PixelLimits limits() const = 0;      // the keys' limits (or HF's), lowered by set_max_pixels
    virtual void set_max_pixels(int64_t max_pixels) = 0;
    virtual ImageGrid grid(const Image& image) const = 0;
    // Preprocesses and encodes. Throws ember::Error naming the image on bad input.
    virtual ImageEmbedding encode(const Image& image) const = 0;
};

// A projector file opened on a backend of its own (make_backend's names: "cpu", "vulkan", "cuda", ...), for
// encoding images without a text model (ember-cli embed-image). Throws ember::Error "PATH: problem" for a file that
// is not a Qwen3-VL merger projector (another projector type, a missing tensor, a wrong shape), and like
// LoadOptions::backend for a backend this build or machine lacks.
struct OpenedProjector {
    std::unique_ptr<Projector> projector;  // owns its file and backend
    std::string backend;                   // the backend's name for its device
};
OpenedProjector open_projector(const std::filesystem::path& path, const std::string& backend, int threads = 0);

// A projector file's facts as its keys and tensors give them (for ember-gguf inspect); throws like load_projector
// for a file that is not a Qwen3-VL merger projector.
struct ProjectorInfo {
    std::string projector_type;
    int64_t block_count = 0, width = 0, feed_forward = 0, heads = 0, patch_size = 0, merge = 0;
    int64_t projection_dim = 0, position_grid = 0;  // position_grid: side of the learned position table
    float layer_norm_eps = 1e-6f;
    PixelLimits limits;
    bool limits_from_keys = false;
    std::string weight_type;  // of the matrices, e.g. "f16"
};
ProjectorInfo read_projector_info(const gguf::File& file, const std::filesystem::path& path);

// The one-line error when a projector does not fit a text model (projection_dim != n_embd), naming both files;
// empty when it fits.
std::string projector_mismatch(const Projector& projector, int64_t n_embd, const std::filesystem::path& model_path);

// The projector files that sit beside a model (mmproj*.gguf in its folder), best first.
std::vector<std::filesystem::path> projectors_beside(const std::filesystem::path& model_path);
// The projector a model pairs with when none is named: the first of projectors_beside that Ember reads and whose
// projection_dim is the model's embedding length (from the keys and tensor table alone: no weights are read);
// none for a file that is not a text model or when nothing fits.
std::optional<std::filesystem::path> fitting_projector_beside(const std::filesystem::path& model_path);

}  // namespace ember::vision
