// SPDX-License-Identifier: MIT
// The command stream of the Vulkan backend. Operations are recorded into command buffers as they are called; every
// kDispatchesPerSubmit dispatches the buffer so far is submitted without waiting (the GPU starts on the first
// layers while the host records the rest), and at a sync point (a read, synchronize(), a full upload arena) the
// last one is submitted and waited for. A forward pass thus costs a few submissions, not one per operation. A barrier goes in only where a dispatch touches a buffer that an
// earlier, unbarriered dispatch wrote (or writes one it read). Small host data an operation needs (token ids,
// positions, rope tables, writes) goes through a mapped upload arena that lives until the submission completes.
#pragma once

#include <chrono>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/vulkan/vk_buffer.h"
#include "backend/vulkan/vk_pipelines.h"
#include "backend/vulkan/vk_profiler.h"

namespace ember::vulkan {

// A bound window of a buffer: [offset, offset + range), with the tensor starting `inner` bytes into it.
struct View {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;
    VkDeviceSize range = 0;
    uint32_t inner = 0;
    uint32_t words() const { return inner / 4; }  // the inner offset in 32-bit words
};

struct Arg {
    View view;
    bool writes = false;
};
inline Arg ro(const View& v) { return {v, false}; }  // read by the dispatch
inline Arg rw(const View& v) { return {v, true}; }   // written (and maybe read)

struct Grid {
    uint32_t x = 1, y = 1, z = 1;
};
// Enough work groups for `groups` in a 2-D grid (shaders fold it back with linear_group()).
Grid linear_grid(uint64_t groups);

class Stream {
public:
    Stream(const Context& ctx, Pipelines& pipelines);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // The window of a tensor of one of this backend's buffers (throws ember::Error for a foreign buffer or a
    // tensor larger than the device can bind at once).
    View view(const Tensor& t) const;
    // Bytes copied to the upload arena for the operations recorded until the next finish().
    View upload(const void* data, size_t bytes);
    template <typename T>
    View upload(std::span<const T> values) {
        return upload(values.data(), values.size_bytes());
    }
    // A small valid window for bindings a shader declares but this call does not use.
    View unused() const;
    // Makes room for `bytes` of uploads first, so that the views of one operation's several uploads stay valid.
    void reserve_upload(size_t bytes);

    void dispatch(const std::string& pipeline, std::initializer_list<Arg> args, const void* push, size_t push_bytes,
                  Grid grid);
    template <typename Push>
    void dispatch(const std::string& pipeline, std::initializer_list<Arg> args, const Push& push, Grid grid) {
        static_assert(sizeof(Push) <= kPushConstantBytes);
        dispatch(pipeline, args, &push, sizeof push, grid);
    }

    void fill_zero(DeviceBuffer& buffer);
    void write(DeviceBuffer& dst, size_t offset, std::span<const std::byte> src);
    void read(DeviceBuffer& src, size_t offset, std::span<std::byte> dst);
    // Submits what was recorded and waits for it.
    void finish();
    bool pending() const { return recording_; }
    // Whether the window v holds what it held at `mark` (a value of mark()): no command recorded since writes to
    // it, and no sync point came between (after one, the host may have written any buffer). Lets the backend reuse
    // a derived buffer, such as activations quantized to Q8_1, instead of deriving it again.
    uint64_t mark() const { return seq_; }
    bool unchanged_since(const View& v, uint64_t mark) const;
    const Context& context() const { return ctx_; }

private:
    void begin();
    void submit_partial();  // submits the commands so far without waiting; recording goes on in a fresh buffer
    void full_barrier();
    struct Range {
        VkBuffer buffer;
        VkDeviceSize begin, end;
    };
    void note_access(const View& v, bool writes);
    bool conflicts(const View& v, bool writes) const;
    size_t arena_alloc(size_t bytes);  // offset in the arena; finishes the stream first when it is full

    const Context& ctx_;
    Pipelines& pipelines_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // the one being recorded: cmds_[used_cmds_ - 1]
    std::vector<VkCommandBuffer> cmds_;
    size_t used_cmds_ = 0;
    uint32_t dispatches_in_cmd_ = 0;
    VkFence fence_ = VK_NULL_HANDLE;
    bool recording_ = false;
    VkPipeline bound_ = VK_NULL_HANDLE;
    std::vector<Range> written_;  // since the last barrier
    std::vector<Range> read_;
    struct Write {
        uint64_t seq;
        Range range;
    };
    std::vector<Write> write_log_;  // since the last sync point, in recording order
    uint64_t seq_ = 1;              // numbers the writes
    uint64_t log_start_ = 1;        // marks below this one predate a sync point
    std::unique_ptr<DeviceBuffer> arena_;
    size_t arena_used_ = 0;
    std::unique_ptr<DeviceBuffer> readback_;
    size_t alignment_ = 16;
    size_t max_range_ = 0;
    std::unique_ptr<Profiler> profiler_;  // only with EMBER_VULKAN_PROFILE
    // With EMBER_VULKAN_PROFILE=host: where the host's time goes between sync points, recording (the GPU already
    // runs the partial submissions meanwhile) or waiting for the GPU. Recording that dominates would call for
    // replaying command buffers; waiting that dominates says the GPU is the limit.
    struct HostTimes {
        bool wanted = false;
        std::chrono::steady_clock::time_point first_record;
        uint64_t since_sync = 0;         // dispatches recorded since the last sync point
        uint64_t syncs = 0, dispatches = 0;  // of the sync points with dispatches (weight uploads have none)
        double record_ns = 0, wait_ns = 0;
        std::string report() const;
    } host_;
};

}  // namespace ember::vulkan
