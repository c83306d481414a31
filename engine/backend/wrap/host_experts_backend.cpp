// SPDX-License-Identifier: MIT
// The host-experts placement: a model larger than the GPU keeps its expert matrices in host memory (the file
// mapping, used in place) and multiplies them on the CPU; every other weight and operation stays on the GPU. Per
// mixture-of-experts product the activations and expert ids come to the host and the products go back.
#include <unordered_set>

#include "backend/wrap/forwarding_backend.h"
#include "ember/error.h"

namespace ember {

namespace {

// Expert weights on the host, known to the backend for as long as they live (a freed address may come back as a
// device buffer).
class HostWeights final : public Buffer {
public:
    HostWeights(std::unique_ptr<Buffer> inner, std::unordered_set<const Buffer*>& registry)
        : inner_(std::move(inner)), registry_(registry) {
        registry_.insert(this);
    }
    ~HostWeights() override { registry_.erase(this); }
    size_t size() const override { return inner_->size(); }
    std::byte* host() override { return inner_->host(); }

private:
    std::unique_ptr<Buffer> inner_;
    std::unordered_set<const Buffer*>& registry_;
};

class HostExpertsBackend final : public ForwardingBackend {
public:
    HostExpertsBackend(std::unique_ptr<Backend> device, std::unique_ptr<Backend> host)
        : ForwardingBackend(std::move(device)), host_(std::move(host)) {}

    std::string name() const override { return inner().name() + " + experts on " + host_->name(); }

    std::unique_ptr<Buffer> map_expert_weights(std::span<const std::byte> bytes) override {
        return std::make_unique<HostWeights>(host_->map_weights(bytes), host_buffers_);
    }

    BackendCounters counters() const override {
        BackendCounters c = inner().counters();
        const BackendCounters h = host_->counters();
        c.weight_bytes += h.weight_bytes;
        c.expert_weight_bytes += h.expert_weight_bytes;
        return c;
    }

protected:
    void do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                           const Tensor& out) override {
        if (!on_host(w)) return inner().matmul_experts(w, n_experts, x, ids, out);
        const Tensor hx = to_host(x, 0), hids = to_host(ids, 1), hout = host_like(out, 2);
        host_->matmul_experts(w, n_experts, hx, hids, hout);
        back_to_device(hout, out);
    }

    void do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                 const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                 const Tensor& out) override {
        if (!on_host(w_gate) && !on_host(w_up))
            return inner().matmul_experts_gated(act, w_gate, w_up, n_experts, x, ids, up_scratch, out);
        if (!on_host(w_gate) || !on_host(w_up))
            throw Error("host experts: the gate and up matrices of one layer are on different devices");
        const Tensor hx = to_host(x, 0), hids = to_host(ids, 1), hout = host_like(out, 2);
        const Tensor hup = host_like(up_scratch, 3);
        host_->matmul_experts_gated(act, w_gate, w_up, n_experts, hx, hids, hup, hout);
        back_to_device(hout, out);
    }

    // Down weights on the host: the plain operations, whose expert product runs there.
    void do_moe_down_combine(const MoeDownArgs& a) override {
        if (!on_host(*a.down)) return inner().moe_down_combine(a);
        Backend::do_moe_down_combine(a);
    }
    void do_moe_gate_up(const MoeGateUpArgs& a) override {
        if (!on_host(*a.gate_exps) && !on_host(*a.up_exps)) return inner().moe_gate_up(a);
        Backend::do_moe_gate_up(a);
    }

    // Expert biases come from map_weights and stay on the device; a bias mapped with the experts is added on the host.
    void do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) override {
        if (!on_host(bias)) return inner().add_expert_bias(bias, ids, out);
        const Tensor hids = to_host(ids, 1), hout = to_host(out, 2);
        host_->add_expert_bias(bias, hids, hout);
        back_to_device(hout, out);
    }

private:
    bool on_host(const Tensor& w) const { return host_buffers_.contains(w.buffer); }

    // Host scratch `slot`, at least `bytes` long, reused across calls.
    Buffer& scratch(int slot, size_t bytes) {
        std::unique_ptr<Buffer>& b = scratch_[slot];
        if (!b || b->size() < bytes) b = host_->allocate(bytes);
        return *b;
    }

    Tensor host_like(const Tensor& t, int slot) {
        if (!t.contiguous()) throw Error("host experts: activations must be contiguous");
        return make_tensor(scratch(slot, t.bytes()), t.type, t.rows, t.cols);
    }

    Tensor to_host(const Tensor& t, int slot) {
        const Tensor h = host_like(t, slot);
        inner().read(t, std::span<std::byte>(h.buffer->host(), t.bytes()));
        return h;
    }

    void back_to_device(const Tensor& h, const Tensor& device) {
        inner().write(device, std::span<const std::byte>(h.buffer->host(), h.bytes()));
    }

    std::unique_ptr<Backend> host_;
    std::unordered_set<const Buffer*> host_buffers_;
    std::unique_ptr<Buffer> scratch_[4];
};

}  // namespace

std::unique_ptr<Backend> make_host_experts_backend(std::unique_ptr<Backend> device, std::unique_ptr<Backend> host) {
    return std::make_unique<HostExpertsBackend>(std::move(device), std::move(host));
}

}  // namespace ember
