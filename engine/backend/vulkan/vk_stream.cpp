// SPDX-License-Identifier: MIT
// The Vulkan command stream: recording dispatches and copies, barriers, submission and waiting.
#include "backend/vulkan/vk_stream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ember/error.h"

namespace ember::vulkan {

namespace {

constexpr size_t kArenaBytes = size_t{64} << 20;
constexpr uint32_t kDispatchesPerSubmit = 96;

}  // namespace

Grid linear_grid(uint64_t groups) {
    constexpr uint64_t max_x = 65535;
    if (groups == 0) return {0, 1, 1};
    if (groups <= max_x) return {static_cast<uint32_t>(groups), 1, 1};
    const uint64_t y = (groups + max_x - 1) / max_x;
    if (y > max_x) throw Error("vulkan backend: a dispatch of " + std::to_string(groups) + " work groups is too large");
    return {static_cast<uint32_t>(max_x), static_cast<uint32_t>(y), 1};
}

Stream::Stream(const Context& ctx, Pipelines& pipelines) : ctx_(ctx), pipelines_(pipelines) {
    const Api& vk = ctx.api();
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = ctx.queue_family();
    check(vk.vkCreateCommandPool(ctx.device(), &pci, nullptr, &pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vk.vkCreateFence(ctx.device(), &fci, nullptr, &fence_), "vkCreateFence");
    alignment_ = std::max<size_t>(16, ctx.limits().minStorageBufferOffsetAlignment);
    max_range_ = ctx.limits().maxStorageBufferRange;
    arena_ = std::make_unique<DeviceBuffer>(ctx, kArenaBytes, ctx.memory().staging);
    if (Profiler::wanted(ctx)) profiler_ = std::make_unique<Profiler>(ctx);
    const char* env = std::getenv("EMBER_VULKAN_PROFILE");
    host_.wanted = env && std::strcmp(env, "host") == 0;
}

Stream::~Stream() {
    try {
        finish();
    } catch (const Error&) {
        // A lost device while shutting down: nothing is left to save.
    }
    if (profiler_) std::fputs(profiler_->report().c_str(), stderr);
    if (host_.wanted) std::fputs(host_.report().c_str(), stderr);
    profiler_.reset();
    arena_.reset();
    readback_.reset();
    const Api& vk = ctx_.api();
    vk.vkDestroyFence(ctx_.device(), fence_, nullptr);
    vk.vkDestroyCommandPool(ctx_.device(), pool_, nullptr);
}

View Stream::view(const Tensor& t) const {
    auto* buffer = dynamic_cast<DeviceBuffer*>(t.buffer);
    if (!buffer) throw Error("vulkan backend: a tensor's buffer was not made by this backend");
    // The last row may be shorter than the stride (column views).
    const size_t end = t.rows > 0 ? t.offset + static_cast<size_t>(t.rows - 1) * t.row_stride +
                                        gguf::row_bytes(t.type, t.cols)
                                  : t.offset;
    if (end > buffer->size()) throw Error("vulkan backend: a tensor runs past the end of its buffer");
    View v;
    v.buffer = buffer->handle();
    v.offset = t.offset / alignment_ * alignment_;
    v.inner = static_cast<uint32_t>(t.offset - v.offset);
    v.range = std::min<size_t>((end - v.offset + 3) / 4 * 4, buffer->allocated() - v.offset);
    if (v.range == 0) v.range = 4;
    if (v.range > max_range_)
        throw Error("vulkan backend: a tensor of " + std::to_string(t.bytes()) + " bytes exceeds the device's " +
                    std::to_string(max_range_) + "-byte binding limit");
    return v;
}

View Stream::unused() const { return View{arena_->handle(), 0, 16, 0}; }

size_t Stream::arena_alloc(size_t bytes) {
    const size_t rounded = (bytes + alignment_ - 1) / alignment_ * alignment_;
    if (rounded > kArenaBytes) throw Error("vulkan backend: " + std::to_string(bytes) + " bytes of operation data");
    if (arena_used_ + rounded > kArenaBytes) finish();
    const size_t at = arena_used_;
    arena_used_ += rounded;
    return at;
}

void Stream::reserve_upload(size_t bytes) {
    if (arena_used_ + bytes + 8 * alignment_ > kArenaBytes) finish();
}

View Stream::upload(const void* data, size_t bytes) {
    const size_t at = arena_alloc(std::max<size_t>(bytes, 4));
    if (bytes) std::memcpy(arena_->host() + at, data, bytes);
    return View{arena_->handle(), at, std::max<size_t>((bytes + 3) / 4 * 4, 4), 0};
}

void Stream::begin() {
    if (recording_) return;
    if (host_.wanted && used_cmds_ == 0) host_.first_record = std::chrono::steady_clock::now();
    if (used_cmds_ == cmds_.size()) {
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VkCommandBuffer fresh = VK_NULL_HANDLE;
        check(ctx_.api().vkAllocateCommandBuffers(ctx_.device(), &ai, &fresh), "vkAllocateCommandBuffers");
        cmds_.push_back(fresh);
    }
    cmd_ = cmds_[used_cmds_++];
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(ctx_.api().vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    recording_ = true;
    bound_ = VK_NULL_HANDLE;
    dispatches_in_cmd_ = 0;
    if (profiler_) profiler_->begin(cmd_);
}

void Stream::submit_partial() {
    // The hazards recorded so far stay: a barrier in the next buffer also orders it after this submission's
    // commands (barriers cover everything earlier in submission order on the queue). The upload arena is not
    // reused before finish() waits for everything.
    const Api& vk = ctx_.api();
    check(vk.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    check(vk.vkQueueSubmit(ctx_.queue(), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
    recording_ = false;
    begin();
}

void Stream::full_barrier() {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    ctx_.api().vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (profiler_) profiler_->note_barrier();
    written_.clear();
    read_.clear();
}

bool Stream::conflicts(const View& v, bool writes) const {
    const auto overlaps = [&](const Range& r) {
        return r.buffer == v.buffer && r.begin < v.offset + v.range && v.offset < r.end;
    };
    if (std::any_of(written_.begin(), written_.end(), overlaps)) return true;
    return writes && std::any_of(read_.begin(), read_.end(), overlaps);
}

void Stream::note_access(const View& v, bool writes) {
    const Range r{v.buffer, v.offset, v.offset + v.range};
    (writes ? written_ : read_).push_back(r);
    if (writes) write_log_.push_back({++seq_, r});
}

bool Stream::unchanged_since(const View& v, uint64_t mark) const {
    if (mark < log_start_) return false;
    for (auto it = write_log_.rbegin(); it != write_log_.rend() && it->seq > mark; ++it)
        if (it->range.buffer == v.buffer && it->range.begin < v.offset + v.range && v.offset < it->range.end)
            return false;
    return true;
}

void Stream::dispatch(const std::string& pipeline, std::initializer_list<Arg> args, const void* push,
                      size_t push_bytes, Grid grid) {
    if (args.size() > kMaxBindings) throw Error("vulkan backend: too many bindings for " + pipeline);
    const VkPipeline p = pipelines_.get(pipeline);
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
    begin();
    const Api& vk = ctx_.api();
    bool hazard = false;
    for (const Arg& a : args) hazard = hazard || conflicts(a.view, a.writes);
    if (hazard) full_barrier();
    for (const Arg& a : args) note_access(a.view, a.writes);

    if (p != bound_) {
        vk.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p);
        bound_ = p;
    }
    VkDescriptorBufferInfo infos[kMaxBindings];
    VkWriteDescriptorSet writes[kMaxBindings];
    uint32_t i = 0;
    for (const Arg& a : args) {
        infos[i] = {a.view.buffer, a.view.offset, a.view.range};
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
        ++i;
    }
    vk.vkCmdPushDescriptorSetKHR(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, i, writes);
    vk.vkCmdPushConstants(cmd_, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<uint32_t>(push_bytes), push);
    vk.vkCmdDispatch(cmd_, grid.x, grid.y, grid.z);
    // With a profiler every submission is waited for, so that its timestamps can be read before the pool resets.
    ++host_.since_sync;
    if (++dispatches_in_cmd_ >= kDispatchesPerSubmit && !profiler_) submit_partial();
    if (profiler_)
        profiler_->after_dispatch(cmd_, pipeline + " " + std::to_string(uint64_t{grid.x} * grid.y * grid.z) + "g");
}

void Stream::fill_zero(DeviceBuffer& buffer) {
    if (buffer.host() && !recording_) {
        log_start_ = ++seq_;
        std::memset(buffer.host(), 0, buffer.allocated());
        return;
    }
    begin();
    const View whole{buffer.handle(), 0, buffer.allocated(), 0};
    if (conflicts(whole, true)) full_barrier();
    ctx_.api().vkCmdFillBuffer(cmd_, buffer.handle(), 0, VK_WHOLE_SIZE, 0);
    note_access(whole, true);
}

void Stream::write(DeviceBuffer& dst, size_t offset, std::span<const std::byte> src) {
    if (offset + src.size() > dst.size()) throw Error("vulkan backend: write past the end of a buffer");
    if (dst.host()) {
        finish();  // recorded work may still read the old bytes
        log_start_ = ++seq_;
        std::memcpy(dst.host() + offset, src.data(), src.size());
        return;
    }
    const size_t chunk_max = kArenaBytes / 2;
    size_t done = 0;
    while (done < src.size()) {
        const size_t n = std::min(chunk_max, src.size() - done);
        const size_t at = arena_alloc(n);
        std::memcpy(arena_->host() + at, src.data() + done, n);
        begin();
        const View target{dst.handle(), offset + done, n, 0};
        if (conflicts(target, true)) full_barrier();
        const VkBufferCopy region{at, offset + done, n};
        ctx_.api().vkCmdCopyBuffer(cmd_, arena_->handle(), dst.handle(), 1, &region);
        note_access(target, true);
        done += n;
    }
}

void Stream::read(DeviceBuffer& src, size_t offset, std::span<std::byte> dst) {
    if (offset + dst.size() > src.size()) throw Error("vulkan backend: read past the end of a buffer");
    if (src.host()) {
        finish();
        std::memcpy(dst.data(), src.host() + offset, dst.size());
        return;
    }
    if (!readback_ || readback_->size() < dst.size())
        readback_ = std::make_unique<DeviceBuffer>(ctx_, std::max<size_t>(dst.size(), size_t{1} << 20),
                                                   ctx_.memory().readback);
    begin();
    full_barrier();
    const VkBufferCopy region{offset, 0, dst.size()};
    ctx_.api().vkCmdCopyBuffer(cmd_, src.handle(), readback_->handle(), 1, &region);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    ctx_.api().vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                                    nullptr, 0, nullptr);
    finish();
    std::memcpy(dst.data(), readback_->host(), dst.size());
}

void Stream::finish() {
    if (!recording_) {
        arena_used_ = 0;
        return;
    }
    const Api& vk = ctx_.api();
    recording_ = false;
    written_.clear();
    read_.clear();
    write_log_.clear();
    log_start_ = ++seq_;
    check(vk.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    const auto submitted = std::chrono::steady_clock::now();
    check(vk.vkQueueSubmit(ctx_.queue(), 1, &si, fence_), "vkQueueSubmit");
    // The fence's signal covers every command earlier in submission order, the partial submissions included.
    check(vk.vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    if (host_.wanted && host_.since_sync > 0) {
        const auto done = std::chrono::steady_clock::now();
        ++host_.syncs;
        host_.dispatches += host_.since_sync;
        host_.record_ns += std::chrono::duration<double, std::nano>(submitted - host_.first_record).count();
        host_.wait_ns += std::chrono::duration<double, std::nano>(done - submitted).count();
    }
    host_.since_sync = 0;
    check(vk.vkResetFences(ctx_.device(), 1, &fence_), "vkResetFences");
    if (profiler_) profiler_->collect();
    for (size_t i = 0; i < used_cmds_; ++i) check(vk.vkResetCommandBuffer(cmds_[i], 0), "vkResetCommandBuffer");
    used_cmds_ = 0;
    arena_used_ = 0;
}

std::string Stream::HostTimes::report() const {
    const double n = static_cast<double>(std::max<uint64_t>(syncs, 1));
    char line[400];
    std::snprintf(line, sizeof line,
                  "vulkan host times: %llu sync points with %llu dispatches; per sync point %.3f ms recording "
                  "(%.2f us a dispatch) and %.3f ms waiting for the GPU; waiting is %.1f %% of the total\n",
                  static_cast<unsigned long long>(syncs), static_cast<unsigned long long>(dispatches),
                  record_ns / n / 1e6, dispatches ? record_ns / static_cast<double>(dispatches) / 1e3 : 0.0,
                  wait_ns / n / 1e6, record_ns + wait_ns > 0 ? 100.0 * wait_ns / (record_ns + wait_ns) : 0.0);
    return line;
}

}  // namespace ember::vulkan
