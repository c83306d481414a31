# SPDX-License-Identifier: MIT
"""An independent numpy reference for the ROCmFP4 / ROCmFPX block formats, written from
/work/shared/specs/rocmfp4.md (section numbers below refer to it).

    dequantize(type_id, raw_bytes, n) -> np.float32[n]     ids 100-104, bit-exact (§3, §5)
    quantize(type_id, values, imatrix=None) -> bytes       ids 100-104, the reference quantizers (§4, §5)
    block_error(type_id, x, e) -> np.float32               err(e) of §4.2 for one (sub-)block
    vec_dot_q8_0(type_id, raw_bytes, d_y, qs_y) -> float   the CPU dot product of §7.1 (ids 100, 101)
    self_test()                                            checks the worked example of §8

Type ids: 100 Q4_0_ROCMFP4 (dual scale, 18 B), 101 Q4_0_ROCMFP4_FAST (17 B), 102 Q6_0_ROCMFPX (FP6, 26 B),
103 Q8_0_ROCMFPX (FP8, 33 B), 104 Q3_0_ROCMFPX (FP3, 14 B); 32 weights per block.

The quantizers work in fp32 exactly as the spec describes: every product and sum is a separate fp32 operation (no
fused multiply-add), the error of a candidate scale is accumulated in index order, and the scale search returns the
smallest byte among those with the least error. The search is vectorised over blocks: err(e) is computed for every
candidate byte, then the spiral walk of §4.2 (start byte, early exit, low-side pruning) is replayed to decide which
candidates the spec's search would keep. Early exit never changes the result (a running sum above the best can only
end above it); the pruning can, for FP6, whose negative range reaches -32 while the prune bound uses 31.

Where the spec is silent the behaviour follows the R1 sources it cites (non-finite inputs, FP3/FP6/FP8 search
details) and is noted at the place. FP6 and FP8 round x * (1/s) with the fp32 reciprocal, like §4.1 (the spec's
"lroundf(x/s)" describes the same rounding up to one ulp of x/s).
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
FLT_MAX = np.finfo(np.float32).max

Q4_0_ROCMFP4 = 100
Q4_0_ROCMFP4_FAST = 101
Q6_0_ROCMFPX = 102
Q8_0_ROCMFPX = 103
Q3_0_ROCMFPX = 104

BLOCK_WEIGHTS = 32
BLOCK_BYTES = {Q4_0_ROCMFP4: 18, Q4_0_ROCMFP4_FAST: 17, Q6_0_ROCMFPX: 26, Q8_0_ROCMFPX: 33, Q3_0_ROCMFPX: 14}
TYPE_NAMES = {Q4_0_ROCMFP4: "q4_0_rocmfp4", Q4_0_ROCMFP4_FAST: "q4_0_rocmfp4_fast", Q6_0_ROCMFPX: "q6_0_rocmfpx",
              Q8_0_ROCMFPX: "q8_0_rocmfpx", Q3_0_ROCMFPX: "q3_0_rocmfpx"}


# ---------------------------------------------------------------------------------------------------------------
# §2.2 the half-scale UE4M3 scale byte


def half_scale(e: int) -> np.float32:
    """s(e): E = e >> 3, M = e & 7; E = 0: M * 2^-10, else (8 + M) * 2^(E - 11). 0x7F and bytes >= 0x80 give 0."""
    e = int(e)
    if e > 0x7E:
        return F32(0.0)
    exponent, mantissa = (e >> 3) & 15, e & 7
    if exponent == 0:
        return F32(mantissa * 2.0 ** -10)
    return F32((8 + mantissa) * 2.0 ** (exponent - 11))


SCALES = np.array([half_scale(e) for e in range(256)], dtype=F32)  # indexed by the scale byte
VALID_SCALES = SCALES[1:127]  # bytes 1..126, strictly increasing


# ---------------------------------------------------------------------------------------------------------------
# Code books: code -> value (the scale is applied separately)

FP4_VALUES = np.array([0, 1, 2, 3, 4, 6, 8, 10, 0, -1, -2, -3, -4, -6, -8, -10], dtype=F32)  # §2.1 Codebook10
FP3_VALUES = np.array([0, 1, 2, 4, 0, -1, -2, -4], dtype=F32)  # §5: bit 2 = sign, magnitudes {0, 1, 2, 4}
FP6_VALUES = np.array([m for m in range(32)] + [-32] + [-m for m in range(1, 32)], dtype=F32)  # §5: sign + 0 = -32

FP4_THRESHOLDS = np.array([0.5, 1.5, 2.5, 3.5, 5.0, 7.0, 9.0], dtype=F32)  # §4.1, inclusive: ties go down
FP3_THRESHOLDS = np.array([0.5, 1.5, 3.0], dtype=F32)


# ---------------------------------------------------------------------------------------------------------------
# Dequantization (§3, §5)


def _blocks(type_id: int, raw_bytes, n: int) -> np.ndarray:
    if type_id not in BLOCK_BYTES:
        raise ValueError(f"unknown ROCmFP4/ROCmFPX type id {type_id} (expected 100..104)")
    if n % BLOCK_WEIGHTS != 0:
        raise ValueError(f"{TYPE_NAMES[type_id]}: {n} weights is not a multiple of {BLOCK_WEIGHTS}")
    raw = np.frombuffer(bytes(raw_bytes), dtype=np.uint8) if not isinstance(raw_bytes, np.ndarray) \
        else raw_bytes.reshape(-1).view(np.uint8)
    expected = n // BLOCK_WEIGHTS * BLOCK_BYTES[type_id]
    if raw.size != expected:
        raise ValueError(f"{TYPE_NAMES[type_id]}: {n} weights need {expected} bytes, found {raw.size}")
    return raw.reshape(-1, BLOCK_BYTES[type_id])


def unpack_bits(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """LSB-first bit stream: value i occupies bits [bits*i, bits*i + bits) of the little-endian byte string."""
    stream = np.unpackbits(packed, axis=-1, bitorder="little")[..., :bits * count]
    fields = stream.reshape(*packed.shape[:-1], count, bits).astype(np.uint8)
    return (fields << np.arange(bits, dtype=np.uint8)).sum(axis=-1, dtype=np.uint8)


def pack_bits(codes: np.ndarray, bits: int) -> np.ndarray:
    fields = (codes[..., None] >> np.arange(bits, dtype=np.uint8)) & 1
    stream = fields.reshape(*codes.shape[:-1], codes.shape[-1] * bits).astype(np.uint8)
    return np.packbits(stream, axis=-1, bitorder="little")


def fp4_codes(blocks: np.ndarray) -> np.ndarray:
    """[B, 32] codes: qs[j] holds weight j in its low nibble and weight j + 16 in its high nibble (§2)."""
    qs = blocks[:, :16]
    return np.concatenate([qs & 15, qs >> 4], axis=1)


def dequantize(type_id: int, raw_bytes, n: int) -> np.ndarray:
    """n weights of type 100..104 from their raw blocks, as fp32 (value * scale: one exact fp32 product)."""
    blocks = _blocks(type_id, raw_bytes, n)
    if type_id == Q4_0_ROCMFP4:
        values = FP4_VALUES[fp4_codes(blocks)]
        scales = np.repeat(SCALES[blocks[:, 16:18]], 16, axis=1)  # e[0] for weights 0-15, e[1] for 16-31
    elif type_id == Q4_0_ROCMFP4_FAST:
        values = FP4_VALUES[fp4_codes(blocks)]
        scales = SCALES[blocks[:, 16:17]]
    elif type_id == Q3_0_ROCMFPX:
        values = FP3_VALUES[unpack_bits(blocks[:, :12], 3, 32)]
        scales = np.repeat(SCALES[blocks[:, 12:14]], 16, axis=1)
    elif type_id == Q6_0_ROCMFPX:
        values = FP6_VALUES[unpack_bits(blocks[:, :24], 6, 32)]
        scales = np.repeat(SCALES[blocks[:, 24:26]], 16, axis=1)
    else:  # Q8_0_ROCMFPX
        values = blocks[:, :32].view(np.int8).astype(F32)
        scales = SCALES[blocks[:, 32:33]]
    return (values * scales).astype(F32).reshape(n)


# ---------------------------------------------------------------------------------------------------------------
# Quantization: the per-format rules


class _Format:
    """What differs between the formats inside the shared scale search."""

    def __init__(self, type_id, top, codes, values, skips_nonfinite, nearest_floor):
        self.type_id = type_id
        self.top = F32(top)  # largest positive magnitude: start byte = nearest(max / top); prune bound top * s
        self.codes = codes  # (x, inv) -> codes, fp32 x
        self.values = values  # code -> value
        # R1's FPX search skips non-finite elements; the FP4 search lets them poison err (the block then gets e = 0)
        self.skips_nonfinite = skips_nonfinite
        self.nearest_floor = nearest_floor  # nearest-byte result for a target that is not a positive finite number


def _sign_magnitude_codes(x: np.ndarray, inv, thresholds: np.ndarray, sign_bit: int) -> np.ndarray:
    """§4.1: a = |x * inv| (fp32), inclusive thresholds, sign from x < 0, magnitude 0 is always code 0."""
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.abs(x * inv)
        magnitude = np.searchsorted(thresholds, a, side="left").astype(np.uint8)
    code = np.where((x < 0) & (magnitude > 0), magnitude | sign_bit, magnitude).astype(np.uint8)
    return np.where(np.isfinite(x), code, 0).astype(np.uint8)


def _fp4_codes(x: np.ndarray, inv) -> np.ndarray:
    return _sign_magnitude_codes(x, inv, FP4_THRESHOLDS, 8)


def _fp3_codes(x: np.ndarray, inv) -> np.ndarray:
    return _sign_magnitude_codes(x, inv, FP3_THRESHOLDS, 4)


def _lround(v: np.ndarray) -> np.ndarray:
    """C lroundf: round half away from zero (exact in float64 for every fp32 input)."""
    v64 = v.astype(np.float64)
    return np.sign(v64) * np.floor(np.abs(v64) + 0.5)


def _rounded_integers(x: np.ndarray, inv, low: int, high: int) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.clip(_lround(x * inv), low, high)
    return np.where(np.isfinite(x) & np.isfinite(q), q, 0).astype(np.int32)


def _fp6_codes(x: np.ndarray, inv) -> np.ndarray:
    q = _rounded_integers(x, inv, -32, 31)
    return np.where(q >= 0, q, 32 | (-q & 31)).astype(np.uint8)  # -32 encodes as sign bit with magnitude 0


def _fp8_codes(x: np.ndarray, inv) -> np.ndarray:
    return _rounded_integers(x, inv, -127, 127).astype(np.int8).view(np.uint8)


FORMATS = {
    Q4_0_ROCMFP4: _Format(Q4_0_ROCMFP4, 10, _fp4_codes, FP4_VALUES, False, 1),
    Q4_0_ROCMFP4_FAST: _Format(Q4_0_ROCMFP4_FAST, 10, _fp4_codes, FP4_VALUES, False, 1),
    Q3_0_ROCMFPX: _Format(Q3_0_ROCMFPX, 4, _fp3_codes, FP3_VALUES, True, 0),
    Q6_0_ROCMFPX: _Format(Q6_0_ROCMFPX, 31, _fp6_codes, FP6_VALUES, True, 0),
    Q8_0_ROCMFPX: _Format(Q8_0_ROCMFPX, 127, _fp8_codes,
                          np.arange(256, dtype=np.uint8).view(np.int8).astype(F32), True, 0),
}


# ---------------------------------------------------------------------------------------------------------------
# §4.2 scale search


def nearest_scale_byte(target: np.ndarray, floor: int) -> np.ndarray:
    """The byte in [1, 126] whose s is nearest to target (fp32); an exact midpoint keeps the lower byte."""
    target = np.asarray(target, dtype=F32)
    lo = np.minimum(np.searchsorted(VALID_SCALES, target, side="left") + 1, 126)  # first byte with s >= target
    below = SCALES[np.maximum(lo - 1, 1)]
    above = SCALES[lo]
    with np.errstate(invalid="ignore", over="ignore"):
        pick_lower = (target - below) <= (above - target)
    byte = np.where((lo > 1) & pick_lower, lo - 1, lo)
    valid = np.isfinite(target) & (target > 0)
    return np.where(valid, byte, floor).astype(np.int32)


def _candidate_errors(fmt: _Format, x: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """err(e) for e = 0..126 (column 0 unused), accumulated in fp32 in index order: [B, 127]."""
    errors = np.full((x.shape[0], 127), np.inf, dtype=F32)
    finite = np.isfinite(x)
    for e in range(1, 127):
        s = SCALES[e]
        inv = F32(1.0) / s
        with np.errstate(invalid="ignore", over="ignore"):
            y = fmt.values[fmt.codes(x, inv)] * s
            d = x - y
            term = d * d if weights is None else (weights * d) * d  # C: w[i]*d*d, left to right
        if fmt.skips_nonfinite:
            term = np.where(finite, term, F32(0.0))
        with np.errstate(invalid="ignore", over="ignore"):
            errors[:, e] = np.cumsum(term, axis=1, dtype=F32)[:, -1]
    return errors


def _spiral_search(fmt: _Format, errors, start, max_abs, max_weight, weighted) -> np.ndarray:
    """Replays §4.2 step 3-5 for every block: candidates e0 = start - delta (with low-side pruning) and
    e1 = start + delta, a candidate kept if err < best or (err == best and e < best_e)."""
    count = errors.shape[0]
    rows = np.arange(count)
    if fmt.type_id in (Q4_0_ROCMFP4, Q4_0_ROCMFP4_FAST):
        best_e, best_err = np.zeros(count, np.int32), np.full(count, FLT_MAX, F32)
    else:
        best_e, best_err = start.copy(), np.full(count, np.inf, F32)
    lower_done = np.zeros(count, bool)

    def consider(mask, e):
        err = errors[rows, np.clip(e, 1, 126)]
        keep = mask & ((err < best_err) | ((err == best_err) & (e < best_e)))
        best_err[keep] = err[keep]
        best_e[keep] = e[keep]

    for delta in range(126):
        e0 = start - delta
        lower = ~lower_done & (e0 >= 1) & (e0 <= 126)
        with np.errstate(invalid="ignore", over="ignore"):
            clip = max_abs - fmt.top * SCALES[np.clip(e0, 1, 126)]
            clip_err = (max_weight * clip) * clip if weighted else clip * clip
        prune = lower & (clip > 0) & (clip_err > best_err)
        if weighted and fmt.type_id in (Q4_0_ROCMFP4, Q4_0_ROCMFP4_FAST):
            prune &= max_weight > 0
        lower_done |= prune
        consider(lower & ~prune, e0)
        e1 = start + delta
        consider((delta != 0) & (e1 >= 1) & (e1 <= 126), e1)
    return best_e


def _max_abs(fmt: _Format, x: np.ndarray) -> np.ndarray:
    """max |x| with `if (|x| > max)` semantics: NaN never wins; FPX also ignores infinities."""
    a = np.abs(x)
    usable = np.isfinite(x) if fmt.skips_nonfinite else ~np.isnan(x)
    return np.where(usable, a, F32(0.0)).max(axis=1).astype(F32)


def _max_abs_weight(x: np.ndarray, weights: np.ndarray, max_abs: np.ndarray) -> np.ndarray:
    """The weight of the element with the largest |x| (the larger weight among equal |x|)."""
    at_max = np.abs(x) == max_abs[:, None]
    return np.where(at_max, weights, F32(0.0)).max(axis=1).astype(F32)


def choose_scales(type_id: int, x: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The scale byte of every row of x [B, n] (a sub-block: 16 weights for the two-scale types, 32 otherwise)."""
    fmt = FORMATS[type_id]
    x = np.asarray(x, dtype=F32)
    max_abs = _max_abs(fmt, x)
    start = nearest_scale_byte(max_abs / fmt.top, fmt.nearest_floor)
    if type_id == Q8_0_ROCMFPX and weights is None:
        return np.where((max_abs > 0) & np.isfinite(max_abs), start, 0).astype(np.int32)  # no search (§5)
    errors = _candidate_errors(fmt, x, weights)
    max_weight = _max_abs_weight(x, weights, max_abs) if weights is not None else None
    chosen = _spiral_search(fmt, errors, start, max_abs, max_weight, weights is not None)
    return np.where((max_abs > 0) & np.isfinite(max_abs), chosen, 0).astype(np.int32)


def block_error(type_id: int, x, e: int, weights=None) -> np.float32:
    """err(e) of §4.2 for one sub-block x at scale byte e (the full sum, without early exit)."""
    x = np.asarray(x, dtype=F32).reshape(1, -1)
    w = None if weights is None else np.asarray(weights, dtype=F32).reshape(1, -1)
    return _candidate_errors(FORMATS[type_id], x, w)[0, e]


# ---------------------------------------------------------------------------------------------------------------
# §4.3 imatrix weights


def imatrix_weights(type_id: int, rows: np.ndarray, imatrix: np.ndarray) -> np.ndarray:
    """w_i = imatrix_i * sqrt(sigma^2 + x_i^2), sigma^2 = sum x^2 / n_per_row summed in fp32 in index order;
    w_i = 0 where imatrix_i is not finite or <= 0 (FPX: also where x_i is not finite)."""
    fpx = FORMATS[type_id].skips_nonfinite
    with np.errstate(invalid="ignore", over="ignore"):
        squares = rows * rows
        if fpx:
            squares = np.where(np.isfinite(rows), squares, F32(0.0))
        sigma2 = np.cumsum(squares, axis=1, dtype=F32)[:, -1:] / F32(rows.shape[1])
        weights = imatrix[None, :] * np.sqrt(sigma2 + rows * rows)
    usable = np.isfinite(imatrix)[None, :] & (imatrix > 0)[None, :]
    if fpx:
        usable = usable & np.isfinite(rows)
    return np.where(usable, weights, F32(0.0)).astype(F32)


# ---------------------------------------------------------------------------------------------------------------
# Quantization: whole tensors


def _scale_inverse(scale_bytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = SCALES[scale_bytes]
    with np.errstate(divide="ignore"):
        inv = np.where(s > 0, F32(1.0) / s, F32(0.0)).astype(F32)
    return s, inv


def quantize(type_id: int, values, imatrix=None, chunk_blocks: int = 4096) -> bytes:
    """Raw blocks of type 100..104 for `values` (rows of n_per_row = values.shape[-1] weights; a multiple of 32).
    imatrix: n_per_row importance values reused for every row (§4.3), or None for the plain search."""
    if type_id not in FORMATS:
        raise ValueError(f"unknown ROCmFP4/ROCmFPX type id {type_id} (expected 100..104)")
    values = np.asarray(values, dtype=F32)
    n_per_row = values.shape[-1] if values.ndim else 1
    if n_per_row % BLOCK_WEIGHTS != 0:
        raise ValueError(f"{TYPE_NAMES[type_id]}: row length {n_per_row} is not a multiple of {BLOCK_WEIGHTS}")
    rows = values.reshape(-1, n_per_row)
    weights = None
    if imatrix is not None:
        imatrix = np.asarray(imatrix, dtype=F32).reshape(-1)
        if imatrix.size != n_per_row:
            raise ValueError(f"imatrix has {imatrix.size} entries, the rows have {n_per_row}")
        weights = imatrix_weights(type_id, rows, imatrix)
    blocks = rows.reshape(-1, BLOCK_WEIGHTS)
    block_weights = None if weights is None else weights.reshape(-1, BLOCK_WEIGHTS)
    out = []
    for first in range(0, blocks.shape[0], chunk_blocks):
        part = slice(first, first + chunk_blocks)
        out.append(_quantize_blocks(type_id, blocks[part], None if block_weights is None else block_weights[part]))
    return b"".join(out)


def _quantize_blocks(type_id: int, x: np.ndarray, w: np.ndarray | None) -> bytes:
    fmt = FORMATS[type_id]
    count = x.shape[0]
    if type_id in (Q4_0_ROCMFP4_FAST, Q8_0_ROCMFPX):
        scale_bytes = choose_scales(type_id, x, w).reshape(count, 1)
        _, inv = _scale_inverse(scale_bytes)
    else:  # one scale per half of 16
        halves = x.reshape(count * 2, 16)
        scale_bytes = choose_scales(type_id, halves, None if w is None else w.reshape(count * 2, 16))
        scale_bytes = scale_bytes.reshape(count, 2)
        _, inv = _scale_inverse(scale_bytes)
        inv = np.repeat(inv, 16, axis=1)
    codes = fmt.codes(x, inv)
    if type_id in (Q4_0_ROCMFP4, Q4_0_ROCMFP4_FAST):
        payload = codes[:, :16] | (codes[:, 16:] << 4)
    elif type_id == Q3_0_ROCMFPX:
        payload = pack_bits(codes, 3)
    elif type_id == Q6_0_ROCMFPX:
        payload = pack_bits(codes, 6)
    else:
        payload = codes
    return np.concatenate([payload, scale_bytes.astype(np.uint8)], axis=1).astype(np.uint8).tobytes()


# ---------------------------------------------------------------------------------------------------------------
# §7.1 CPU dot product against a Q8_0 activation block


def vec_dot_q8_0(type_id: int, raw_bytes, d_y, qs_y) -> np.float32:
    """sum over blocks of (s(e) * d_y) * sumi in fp32, block order (ids 100, 101). d_y: fp16 scale per block,
    qs_y: int8 [n_blocks, 32]."""
    qs_y = np.asarray(qs_y, dtype=np.int32).reshape(-1, BLOCK_WEIGHTS)
    blocks = _blocks(type_id, raw_bytes, qs_y.size)
    d_y = np.asarray(d_y, dtype=np.float16).astype(F32).reshape(-1)
    products = FP4_VALUES[fp4_codes(blocks)].astype(np.int32) * qs_y
    total = F32(0.0)
    for b in range(blocks.shape[0]):
        if type_id == Q4_0_ROCMFP4:
            sumi0, sumi1 = int(products[b, :16].sum()), int(products[b, 16:].sum())
            d0, d1 = SCALES[blocks[b, 16]] * d_y[b], SCALES[blocks[b, 17]] * d_y[b]
            total = total + (d0 * F32(sumi0) + d1 * F32(sumi1))
        else:
            total = total + (SCALES[blocks[b, 16]] * d_y[b]) * F32(int(products[b].sum()))
    return F32(total)


# ---------------------------------------------------------------------------------------------------------------
# §8 worked example


WORKED_EXAMPLE = np.array([0, 0.5, -0.5, 1, -1, 1.5, -1.5, 2, -2, 3, -3, 4, -4, 5, -5, 0.5,
                           0.125, -0.375, 1.25, -2.25, 2.5, -2.5, 0.25, -0.5, 0.75, -1, 1.5, -2, 0.3125, -1.0625,
                           1.625, 0], dtype=F32)
WORKED_DUAL = bytes.fromhex("00 91 49 E2 7A F3 1B A4 3C C5 5D E6 1E C7 5F 01 38 30")
WORKED_FAST = bytes.fromhex("00 91 29 C2 4A C3 0B 94 1C A5 3D C6 1E A7 3F 01 38")
WORKED_DUAL_DEQUANTIZED = np.array([0, 0.5, -0.5, 1, -1, 1.5, -1.5, 2, -2, 3, -3, 4, -4, 5, -5, 0.5,
                                    0, -0.25, 1, -2, 2.5, -2.5, 0.25, -0.5, 0.75, -1, 1.5, -2, 0.25, -1, 1.5, 0],
                                   dtype=F32)
WORKED_SEARCH_HALF0 = {0x34: 3.453125, 0x35: 2.2998046875, 0x36: 1.58203125, 0x37: 0.4501953125, 0x38: 0.0,
                       0x39: 1.51953125, 0x3A: 0.953125, 0x3B: 0.99609375}
WORKED_SEARCH_HALF1 = {0x2D: 0.59521484375, 0x2E: 0.375, 0x2F: 0.2041015625, 0x30: 0.1796875, 0x31: 0.30078125,
                       0x32: 0.27734375, 0x33: 0.314453125, 0x34: 0.2890625}
WORKED_SEARCH_FAST = {0x38: 0.8359375, 0x37: 1.03515625, 0x3A: 1.5234375}


def self_test() -> None:
    """Raises AssertionError unless the reference reproduces §8.2, §8.3 and §8.4 exactly."""
    table = {0x01: 2.0 ** -10, 0x08: 2.0 ** -7, 0x30: 0.25, 0x38: 0.5, 0x40: 1.0, 0x7E: 224.0, 0x7F: 0.0, 0x80: 0.0}
    for e, s in table.items():
        assert SCALES[e] == F32(s), f"s(0x{e:02X}) = {SCALES[e]}, expected {s}"
    for e, err in WORKED_SEARCH_HALF0.items():
        got = block_error(Q4_0_ROCMFP4, WORKED_EXAMPLE[:16], e)
        assert got == F32(err), f"half 0 err(0x{e:02X}) = {got}, expected {err}"
    for e, err in WORKED_SEARCH_HALF1.items():
        got = block_error(Q4_0_ROCMFP4, WORKED_EXAMPLE[16:], e)
        assert got == F32(err), f"half 1 err(0x{e:02X}) = {got}, expected {err}"
    for e, err in WORKED_SEARCH_FAST.items():
        got = block_error(Q4_0_ROCMFP4_FAST, WORKED_EXAMPLE, e)
        assert got == F32(err), f"FAST err(0x{e:02X}) = {got}, expected {err}"
    dual = quantize(Q4_0_ROCMFP4, WORKED_EXAMPLE)
    assert dual == WORKED_DUAL, f"dual block {dual.hex(' ')} != {WORKED_DUAL.hex(' ')}"
    fast = quantize(Q4_0_ROCMFP4_FAST, WORKED_EXAMPLE)
    assert fast == WORKED_FAST, f"FAST block {fast.hex(' ')} != {WORKED_FAST.hex(' ')}"
    assert np.array_equal(dequantize(Q4_0_ROCMFP4, dual, 32), WORKED_DUAL_DEQUANTIZED)
    ones = np.ones((1, 32), dtype=np.int8)
    dot_dual = vec_dot_q8_0(Q4_0_ROCMFP4, dual, [1.0], ones)
    dot_fast = vec_dot_q8_0(Q4_0_ROCMFP4_FAST, fast, [1.0], ones)
    assert dot_dual == F32(-1.0), f"dual dot product {dot_dual}, expected -1.0"
    assert dot_fast == F32(-1.5), f"FAST dot product {dot_fast}, expected -1.5"
    assert dot_dual == dequantize(Q4_0_ROCMFP4, dual, 32).sum(dtype=np.float64)


if __name__ == "__main__":
    self_test()
    print("rocmfp4_reference: worked example of rocmfp4.md §8 reproduced")
