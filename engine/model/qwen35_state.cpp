// SPDX-License-Identifier: MIT
// qwen35moe's per-sequence state: KV caches, conv and delta states, snapshots and checkpoints.
#include "model/qwen35_state.h"

#include <algorithm>

namespace ember::model {

namespace {
using gguf::TensorType;
}

Qwen35State::Qwen35State(Backend& backend, const Qwen35HParams& hp, const StateOptions& options,
                         int64_t n_attention, int64_t n_recurrent, int64_t batch, bool mtp)
    : backend_(backend), hp_(hp), options_(options), n_recurrent_(n_recurrent), batch_(batch),
      kv_(backend, n_attention, options.n_ctx, hp.n_head_kv * hp.head_dim, hp.n_head_kv * hp.head_dim,
          options.kv_type) {
    if (options.max_rollback < 0 || options.max_rollback > batch)
        throw Error("max_rollback must be 0 to " + std::to_string(batch));
    const int64_t K1 = hp.conv_kernel - 1;
    const int64_t state_cols = hp.d_k * hp.d_v;
    std::vector<std::pair<size_t, size_t>> planned;
    for (int64_t l = 0; l < n_recurrent; ++l)
        planned.emplace_back(recurrent_arena_.plan(TensorType::F32, K1, hp.conv_dim()),
                           recurrent_arena_.plan(TensorType::F32, hp.h_v, state_cols));
    recurrent_arena_.allocate(backend);
    for (const auto& [c, s] : planned) {
        conv_.push_back(recurrent_arena_.get(c));
        ssm_.push_back(recurrent_arena_.get(s));
    }
    if (n_recurrent > 0) backend_.scale(recurrent_arena_.whole(), 0.0f, recurrent_arena_.whole());

    if (n_recurrent > 0 && options.max_rollback > 0) {
        std::vector<std::pair<size_t, size_t>> snaps;
        for (int64_t l = 0; l < n_recurrent; ++l)
            snaps.emplace_back(snapshot_arena_.plan(TensorType::F32, options.max_rollback, hp.h_v * state_cols),
                               snapshot_arena_.plan(TensorType::F32, options.max_rollback * K1, hp.conv_dim()));
        const size_t before = snapshot_arena_.plan(TensorType::F32, K1, hp.conv_dim());
        snapshot_arena_.allocate(backend);
        for (const auto& [s, c] : snaps) {
            ssm_snap_.push_back(snapshot_arena_.get(s));
            conv_snap_.push_back(snapshot_arena_.get(c));
        }
        conv_before_ = snapshot_arena_.get(before);
    }

    Qwen35Activations& a = act;
    TensorArena& ar = activation_arena_;
    const int64_t e = hp.n_embd, used = hp.n_expert_used;
    auto f32 = [&](int64_t rows, int64_t cols) { return ar.plan(TensorType::F32, rows, cols); };
    const size_t ix = f32(batch, e), ih = f32(batch, e), ih2 = f32(batch, e);
    const size_t ip = f32(batch, hp.n_head * 2 * hp.head_dim), iq = f32(batch, hp.n_head * hp.head_dim),
                 igate = f32(batch, hp.n_head * hp.head_dim), iattn = f32(batch, hp.n_head * hp.head_dim),
                 ik = f32(batch, hp.n_head_kv * hp.head_dim), iv = f32(batch, hp.n_head_kv * hp.head_dim);
    const int64_t conv_cols = n_recurrent > 0 ? hp.conv_dim() : 1;
    const int64_t value_cols = n_recurrent > 0 ? hp.value_dim : 1;
    const size_t imix = f32(batch, conv_cols), iconv = f32(batch, conv_cols), iz = f32(batch, value_cols),
                 io = f32(batch, value_cols), ibeta = f32(batch, hp.h_v), ig = f32(batch, hp.h_v);
    const size_t irouter = f32(batch, hp.n_expert), iids = ar.plan(TensorType::I32, batch, used),
                 iew = f32(batch, used), ieg = f32(batch * used, hp.n_ff_exp), ieu = f32(batch * used, hp.n_ff_exp),
                 ied = f32(batch * used, e), iss = f32(batch, 1), isg = f32(batch, hp.n_ff_shexp),
                 isu = f32(batch, hp.n_ff_shexp), iso = f32(batch, e), icat = f32(mtp ? batch : 1, 2 * e);
    ar.allocate(backend);
    a.x = ar.get(ix), a.h = ar.get(ih), a.h2 = ar.get(ih2);
    a.attn_p = ar.get(ip), a.q = ar.get(iq), a.gate = ar.get(igate), a.attn = ar.get(iattn);
    a.k = ar.get(ik), a.v = ar.get(iv);
    a.mix = ar.get(imix), a.conv = ar.get(iconv), a.z = ar.get(iz), a.o = ar.get(io);
    a.beta = ar.get(ibeta), a.g = ar.get(ig);
    a.router = ar.get(irouter), a.expert_ids = ar.get(iids), a.expert_weights = ar.get(iew);
    a.exp_gate = ar.get(ieg), a.exp_up = ar.get(ieu), a.exp_down = ar.get(ied);
    a.shared_scale = ar.get(iss), a.sh_gate = ar.get(isg), a.sh_up = ar.get(isu), a.sh_out = ar.get(iso), a.mtp_cat = ar.get(icat);
}

size_t Qwen35State::memory_bytes() const {
    size_t total = kv_.bytes() + recurrent_arena_.bytes() + snapshot_arena_.bytes() + activation_arena_.bytes();
    for (const Checkpoint& c : checkpoints_) total += c.buffer->size();
    return total + (logits_buffer_ ? logits_buffer_->size() : 0);
}

Tensor Qwen35State::logits(int64_t rows) {
    if (!logits_buffer_ || logits_rows_ < rows) {
        logits_buffer_ = backend_.allocate(static_cast<size_t>(rows * hp_.n_vocab) * sizeof(float));
        logits_rows_ = rows;
    }
    return make_tensor(*logits_buffer_, TensorType::F32, rows, hp_.n_vocab);
}

void Qwen35State::begin_batch(int64_t n_tokens, int64_t rollback) {
    if (rollback < 0 || rollback > n_tokens) throw Error("rollback must be 0 to the batch size");
    if (rollback > 0 && n_recurrent_ > 0 && rollback > options_.max_rollback)
        throw Error("a rollback of " + std::to_string(rollback) + " tokens was asked for, the state keeps " +
                    std::to_string(options_.max_rollback));
    batch_rollback_ = n_recurrent_ > 0 ? rollback : 0;
    snap_count_ = 0;  // snapshots of an earlier batch no longer apply
    snap_first_ = n_past_ + n_tokens - batch_rollback_;
    positions.resize(static_cast<size_t>(n_tokens));
    mrope.clear();
    slots.resize(static_cast<size_t>(n_tokens));
    for (int64_t i = 0; i < n_tokens; ++i) {
        slots[static_cast<size_t>(i)] = static_cast<int32_t>(n_past_ + i);
        positions[static_cast<size_t>(i)] = static_cast<int32_t>(origin_ + n_past_ + i);
    }
}

std::optional<Tensor> Qwen35State::delta_snapshots(int64_t layer) const {
    if (batch_rollback_ == 0) return std::nullopt;
    return ssm_snap_[static_cast<size_t>(layer)].row_range(0, batch_rollback_);
}

void Qwen35State::save_conv_before(int64_t layer) {
    if (batch_rollback_ > 0) backend_.convert(conv_[static_cast<size_t>(layer)], conv_before_);
}

void Qwen35State::record_conv_snapshots(int64_t layer, const Tensor& mix, int64_t n_tokens) {
    if (batch_rollback_ == 0) return;
    const int64_t K1 = hp_.conv_kernel - 1;
    const Tensor& snaps = conv_snap_[static_cast<size_t>(layer)];
    // The conv state after token t is rows t+1 .. t+K-1 of [conv state before the batch ‖ the batch's inputs]: a
    // run of rows from the saved state, then a run from the inputs (one copy each).
    for (int64_t j = 0; j < batch_rollback_; ++j) {
        const int64_t first = n_tokens - batch_rollback_ + j + 1;  // rows [first, first + K1)
        const Tensor dst = snaps.row_range(j * K1, K1);
        const int64_t from_state = std::clamp<int64_t>(K1 - first, 0, K1), from_inputs = K1 - from_state;
        if (from_state > 0) backend_.convert(conv_before_.row_range(first, from_state), dst.row_range(0, from_state));
        if (from_inputs > 0)
            backend_.convert(mix.row_range(first + from_state - K1, from_inputs), dst.row_range(from_state, from_inputs));
    }
    snap_count_ = batch_rollback_;
}

void Qwen35State::set_origin(int64_t position) {
    if (n_past_ != 0) throw Error("the origin of a state can only be set while it is empty");
    origin_ = position;
}

int64_t Qwen35State::truncate(int64_t keep) {
    if (keep <= origin_) {  // nothing kept (an MTP state with a later origin starts over)
        origin_ = 0;
        keep = 0;
    }
    const int64_t n = std::clamp<int64_t>(keep - origin_, 0, n_past_);
    if (n == n_past_ || n_recurrent_ == 0) {
        n_past_ = n;
        return position();
    }
    // A rolled-back position within the last batch: restore its snapshot.
    const int64_t j = n - snap_first_ - 1;
    if (snap_count_ > 0 && j >= 0 && j < snap_count_) {
        const int64_t K1 = hp_.conv_kernel - 1;
        for (int64_t l = 0; l < n_recurrent_; ++l) {
            backend_.convert(ssm_snap_[static_cast<size_t>(l)].row_range(j, 1),
                             ssm_[static_cast<size_t>(l)].reshaped(hp_.h_v * hp_.d_k * hp_.d_v));
            backend_.convert(conv_snap_[static_cast<size_t>(l)].row_range(j * K1, K1), conv_[static_cast<size_t>(l)]);
        }
        snap_count_ = j;  // rows after j describe positions past the new end
        n_past_ = n;
        return position();
    }
    // Otherwise the latest checkpoint at or before n, or the start.
    snap_count_ = 0;
    const Checkpoint* best = nullptr;
    for (const Checkpoint& c : checkpoints_)
        if (c.position <= n && (!best || c.position > best->position)) best = &c;
    if (best) {
        backend_.convert(make_tensor(*best->buffer, TensorType::F32, 1, recurrent_arena_.whole().cols),
                         recurrent_arena_.whole());
        n_past_ = best->position;
    } else {
        backend_.scale(recurrent_arena_.whole(), 0.0f, recurrent_arena_.whole());
        n_past_ = 0;
    }
    return n_past_;
}

void Qwen35State::checkpoint() {
    if (n_recurrent_ == 0 || options_.max_checkpoints <= 0 || n_past_ == 0) return;
    for (const Checkpoint& c : checkpoints_)
        if (c.position == n_past_) return;
    // Drop checkpoints past the current position (another branch of the conversation), then the oldest.
    std::erase_if(checkpoints_, [&](const Checkpoint& c) { return c.position > n_past_; });
    std::unique_ptr<Buffer> buffer;
    if (static_cast<int>(checkpoints_.size()) >= options_.max_checkpoints) {
        buffer = std::move(checkpoints_.front().buffer);
        checkpoints_.pop_front();
    } else {
        buffer = backend_.allocate(recurrent_arena_.bytes());
    }
    const Tensor whole = recurrent_arena_.whole();
    backend_.convert(whole, make_tensor(*buffer, TensorType::F32, 1, whole.cols));
    checkpoints_.push_back({n_past_, std::move(buffer)});
}

}  // namespace ember::model
