// SPDX-License-Identifier: MIT
// The backend "auto" on fake device lists: a real GPU before a software one, the CPU when only software is there,
// experts on the host or the CPU with a notice when the model does not fit, the backend preferred per vendor.
#include <gtest/gtest.h>

#include "backend/backend.h"

namespace ember {
namespace {

constexpr uint64_t GiB = 1024ull * 1024 * 1024;

DeviceInfo device(std::string backend, int index, std::string name, std::string type, uint64_t local_bytes,
                  uint32_t vendor, uint64_t host_bytes = 0) {
    DeviceInfo d;
    d.backend = std::move(backend);
    d.index = index;
    d.name = std::move(name);
    d.type = std::move(type);
    d.vendor_id = vendor;
    d.usable = true;
    d.heaps.push_back({local_bytes, true, false});
    if (host_bytes) d.heaps.push_back({host_bytes, false, true});
    return d;
}

DeviceInfo lavapipe() {
    return device("vulkan", 1, "llvmpipe (LLVM 15.0.6, 256 bits)", "CPU", 24 * GiB, 0x10005);
}
DeviceInfo rtx4090() {
    return device("vulkan", 0, "NVIDIA GeForce RTX 4090", "discrete GPU", 24 * GiB, 0x10de, 32 * GiB);
}

MemoryNeeds needs(uint64_t weights, uint64_t experts, uint64_t state = 1 * GiB) {
    MemoryNeeds n;
    n.weights = weights;
    n.expert_weights = experts;
    n.state = state;
    n.scratch = GiB / 4;
    return n;
}

// The CPU backend with the whole model on it.
testing::AssertionResult is_the_cpu(const DeviceChoice& c) {
    if (c.backend == "cpu" && c.placement == Placement::cpu) return testing::AssertionSuccess();
    return testing::AssertionFailure() << "backend " << c.backend << ", placement " << placement_name(c.placement);
}

TEST(DeviceChoice, RealGpuBeforeLavapipe) {
    const std::vector<DeviceInfo> devices = {lavapipe(), rtx4090()};
    const DeviceChoice c = choose_device(devices, needs(4 * GiB, 0), {});
    EXPECT_EQ(c.backend, "vulkan:0");
    EXPECT_EQ(c.placement, Placement::gpu);
    EXPECT_EQ(c.device, "NVIDIA GeForce RTX 4090");
    EXPECT_NE(c.reason.find("discrete GPU"), std::string::npos) << c.reason;
    EXPECT_TRUE(c.notice.empty());
}

TEST(DeviceChoice, OnlyLavapipeMeansTheCpu) {
    const std::vector<DeviceInfo> devices = {lavapipe()};
    const DeviceChoice c = choose_device(devices, needs(1 * GiB, 0), {});
    EXPECT_TRUE(is_the_cpu(c));
    EXPECT_NE(c.reason.find("llvmpipe"), std::string::npos) << c.reason;
    EXPECT_TRUE(c.notice.empty()) << "a machine without a GPU is no reason for a warning";
}

TEST(DeviceChoice, NoDevicesMeansTheCpu) {
    const DeviceChoice c = choose_device({}, needs(1 * GiB, 0), {});
    EXPECT_EQ(c.backend, "cpu");
    EXPECT_EQ(c.reason, "no GPU found");
}

TEST(DeviceChoice, UnusableDevicesAreSkipped) {
    DeviceInfo old = rtx4090();
    old.usable = false;
    const std::vector<DeviceInfo> devices = {old};
    EXPECT_EQ(choose_device(devices, needs(1 * GiB, 0), {}).backend, "cpu");
}

TEST(DeviceChoice, TooBigForTheGpuKeepsTheExpertsOnTheHost) {
    const std::vector<DeviceInfo> devices = {lavapipe(), rtx4090()};
    // A 35B-A3B model at 4 bits: 19 GiB, 17 of them experts, on a 24 GiB card with 32 GiB of RAM.
    const DeviceChoice c = choose_device(devices, needs(19 * GiB, 17 * GiB, 4 * GiB), {.host_memory = 64 * GiB});
    EXPECT_EQ(c.backend, "vulkan:0");
    EXPECT_EQ(c.placement, Placement::gpu_host_experts);
    EXPECT_NE(c.notice.find("experts run on the CPU"), std::string::npos) << c.notice;
}

TEST(DeviceChoice, MemoryLimitCapsTheGpu) {
    const std::vector<DeviceInfo> devices = {device("cuda", 0, "NVIDIA H200", "discrete GPU", 140 * GiB, 0x10de)};
    const DeviceChoice whole = choose_device(devices, needs(19 * GiB, 17 * GiB), {});
    EXPECT_EQ(whole.placement, Placement::gpu);
    const DeviceChoice capped = choose_device(devices, needs(19 * GiB, 17 * GiB), {.gpu_memory_limit = 8 * GiB});
    EXPECT_EQ(capped.placement, Placement::gpu_host_experts);
    EXPECT_EQ(capped.memory_budget, 8 * GiB);
}

TEST(DeviceChoice, DenseModelTooBigFallsBackToTheCpuWithANotice) {
    const std::vector<DeviceInfo> devices = {rtx4090()};
    const DeviceChoice c = choose_device(devices, needs(40 * GiB, 0), {});
    EXPECT_TRUE(is_the_cpu(c));
    EXPECT_NE(c.notice.find("does not fit"), std::string::npos) << c.notice;
    EXPECT_NE(c.notice.find("RTX 4090"), std::string::npos) << c.notice;
}

TEST(DeviceChoice, ExpertsThatDoNotFitTheHostEitherMeanTheCpu) {
    const std::vector<DeviceInfo> devices = {rtx4090()};
    const DeviceChoice c = choose_device(devices, needs(60 * GiB, 55 * GiB), {.host_memory = 32 * GiB});
    EXPECT_EQ(c.placement, Placement::cpu);
    EXPECT_FALSE(c.notice.empty());
}

TEST(DeviceChoice, DiscreteBeforeIntegratedAndLargerFirst) {
    const std::vector<DeviceInfo> devices = {
        device("vulkan", 0, "AMD Radeon 780M", "integrated GPU", 1 * GiB, 0x1002, 30 * GiB),
        device("vulkan", 1, "NVIDIA RTX A2000", "discrete GPU", 6 * GiB, 0x10de),
        device("vulkan", 2, "NVIDIA RTX 6000", "discrete GPU", 48 * GiB, 0x10de)};
    EXPECT_EQ(choose_device(devices, needs(2 * GiB, 0), {}).backend, "vulkan:2");
}

TEST(DeviceChoice, IntegratedGpuCountsTheMemoryItsDriverLetsItUse) {
    // Strix Halo under RADV: a 512 MiB carve-out plus system memory the GPU may map (GTT).
    const DeviceInfo apu =
        device("vulkan", 0, "AMD Radeon 8060S (RADV GFX1151)", "integrated GPU", GiB / 2, 0x1002, 110 * GiB);
    EXPECT_EQ(device_memory_budget(apu), GiB / 2 + 110 * GiB);
    const std::vector<DeviceInfo> devices = {apu};
    const DeviceChoice c = choose_device(devices, needs(19 * GiB, 17 * GiB), {});
    EXPECT_EQ(c.placement, Placement::gpu);
}

TEST(DeviceChoice, AmdGpuSeenThroughVulkanAndHipTakesTheConfiguredBackend) {
    const std::vector<DeviceInfo> devices = {
        device("hip", 0, "AMD Radeon Graphics", "integrated GPU", 96 * GiB, 0x1002),
        device("vulkan", 0, "AMD Radeon 8060S (RADV GFX1151)", "integrated GPU", 90 * GiB, 0x1002, 8 * GiB)};
    EXPECT_EQ(choose_device(devices, needs(19 * GiB, 17 * GiB), {}).backend, "vulkan:0");
    EXPECT_EQ(choose_device(devices, needs(19 * GiB, 17 * GiB), {.amd_backend = "hip"}).backend, "hip:0");
}

TEST(DeviceChoice, NvidiaGpuSeenThroughVulkanAndCudaTakesCuda) {
    const std::vector<DeviceInfo> devices = {device("vulkan", 0, "NVIDIA H200", "discrete GPU", 140 * GiB, 0x10de),
                                             device("cuda", 0, "NVIDIA H200", "discrete GPU", 139 * GiB, 0x10de)};
    EXPECT_EQ(choose_device(devices, needs(19 * GiB, 17 * GiB), {}).backend, "cuda:0");
}

TEST(DeviceChoice, ANamedGpuIsNeverSwappedForTheCpu) {
    const std::vector<DeviceInfo> devices = {lavapipe(), rtx4090()};
    const DeviceChoice fits = place_on_backend("vulkan", devices, needs(4 * GiB, 0), {});
    EXPECT_EQ(fits.backend, "vulkan:0");
    EXPECT_EQ(fits.placement, Placement::gpu);
    const DeviceChoice split = place_on_backend("vulkan:0", devices, needs(30 * GiB, 26 * GiB), {});
    EXPECT_EQ(split.placement, Placement::gpu_host_experts);
    const DeviceChoice software = place_on_backend("vulkan:llvmpipe", devices, needs(4 * GiB, 0), {});
    EXPECT_EQ(software.backend, "vulkan:1");
    EXPECT_EQ(software.placement, Placement::gpu);
    EXPECT_EQ(place_on_backend("cpu", devices, needs(4 * GiB, 0), {}).placement, Placement::cpu);
}

TEST(DeviceChoice, SoftwareDevicesAreRecognisedByTypeOrName) {
    EXPECT_TRUE(is_software_device(lavapipe()));
    DeviceInfo swiftshader = rtx4090();
    swiftshader.name = "SwiftShader Device (Subzero)";
    EXPECT_TRUE(is_software_device(swiftshader));
    EXPECT_FALSE(is_software_device(rtx4090()));
    EXPECT_EQ(device_memory_budget(lavapipe()), 0u);
}

}  // namespace
}  // namespace ember
