#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rewrites a SPIR-V module from SPV_NV_cooperative_matrix to SPV_KHR_cooperative_matrix.

Debian 12's glslang compiles GL_NV_cooperative_matrix but not GL_KHR_cooperative_matrix, while RADV offers only
the KHR extension (and NVIDIA both). The instructions map one to one, except that a KHR matrix type names its use
(A, B or accumulator) where an NV type serves all three: one f16 16x16 NV type is both A and B of a 16x16x16
product. So every matrix value is followed through loads, stores, copies and phis to the products that consume it
(all of a connected flow must play one part), and each part of a type gets its own KHR type (new ids past the
bound). A flow this script cannot follow, or one matrix that plays two parts, fails with a message naming it.

Numbers from the SPIR-V registry (spirv.core.grammar.json and the SPV_KHR_cooperative_matrix specification):
capability CooperativeMatrixNV 5357 -> CooperativeMatrixKHR 6022; OpTypeCooperativeMatrixNV 5358 -> KHR 4456
(+ Use id: MatrixAKHR 0, MatrixBKHR 1, MatrixAccumulatorKHR 2); OpCooperativeMatrixLoadNV 5359 -> KHR 4457
(ColumnMajor bool id -> MemoryLayout id: RowMajorKHR 0, ColumnMajorKHR 1, before the Stride); StoreNV 5360 ->
4458 (likewise); MulAddNV 5361 -> 4459 (no operands mask for floats); LengthNV 5362 -> 4460.

usage: spirv_coopmat_khr.py IN.spv OUT.spv
"""
import struct
import sys

MAGIC = 0x07230203

OP_NAME, OP_EXTENSION, OP_CAPABILITY = 5, 10, 17
OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY, OP_TYPE_STRUCT = 21, 22, 28, 29, 30
OP_TYPE_POINTER, OP_TYPE_FUNCTION = 32, 33
OP_CONSTANT_TRUE, OP_CONSTANT_FALSE, OP_CONSTANT = 41, 42, 43
OP_SPEC_CONSTANT_TRUE, OP_SPEC_CONSTANT_FALSE = 48, 49
OP_FUNCTION, OP_FUNCTION_END = 54, 56
OP_VARIABLE, OP_LOAD, OP_STORE, OP_COPY_OBJECT, OP_PHI = 59, 61, 62, 83, 245
# Global instructions that can make a matrix value (a constant accumulator, say).
GLOBAL_VALUES = {1, 44, 46, 51, OP_VARIABLE}  # OpUndef, OpConstantComposite, OpConstantNull, OpSpecConstantComposite

CAP_NV, CAP_KHR = 5357, 6022
TYPE_NV, LOAD_NV, STORE_NV, MULADD_NV, LENGTH_NV = 5358, 5359, 5360, 5361, 5362
TYPE_KHR, LOAD_KHR, STORE_KHR, MULADD_KHR, LENGTH_KHR = 4456, 4457, 4458, 4459, 4460
EXT_NV, EXT_KHR = "SPV_NV_cooperative_matrix", "SPV_KHR_cooperative_matrix"

USE_A, USE_B, USE_ACC = 0, 1, 2
USE_NAMES = {USE_A: "A", USE_B: "B", USE_ACC: "accumulator"}
ROW_MAJOR, COLUMN_MAJOR = 0, 1


class ConversionError(Exception):
    pass


def parse(data):
    """(header words, [[opcode, operand words...], ...]) of a little-endian SPIR-V binary."""
    if len(data) % 4 or len(data) < 20:
        raise ConversionError(f"not a SPIR-V module ({len(data)} bytes)")
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    if words[0] != MAGIC:
        raise ConversionError(f"not a little-endian SPIR-V module (magic {words[0]:#x})")
    insts, i = [], 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise ConversionError(f"instruction at word {i} (opcode {opcode}) has a bad word count {count}")
        insts.append([opcode] + words[i + 1:i + count])
        i += count
    return words[:5], insts


def serialize(header, insts):
    words = list(header)
    for inst in insts:
        words.append((len(inst) << 16) | inst[0])
        words.extend(inst[1:])
    return struct.pack(f"<{len(words)}I", *words)


def encode_string(s):
    raw = s.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def decode_string(words):
    raw = struct.pack(f"<{len(words)}I", *words)
    return raw[:raw.index(b"\0")].decode()


class _Flows:
    """Union-find over matrix values and the variables holding them."""

    def __init__(self):
        self.parent = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


def convert(data):
    header, insts = parse(data)
    bound = header[3]

    coop_types = {}      # NV type id -> its operands (component, scope, rows, columns)
    pointer_types = {}   # pointer type id -> (storage class, coop type id)
    bools = {}           # constant id -> True/False
    int32_types = set()
    constants = {}       # (type, value) -> id of a 32-bit int constant defined before the first coop type
    first_coop = None
    in_function = False
    for index, inst in enumerate(insts):
        op = inst[0]
        if op == TYPE_NV:
            coop_types[inst[1]] = tuple(inst[2:6])
            if first_coop is None:
                first_coop = index
        elif op == OP_TYPE_INT and inst[2] == 32:
            int32_types.add(inst[1])
        elif op == OP_CONSTANT and inst[1] in int32_types and first_coop is None:
            constants.setdefault((inst[1], inst[3]), inst[2])
        elif op == OP_TYPE_POINTER and inst[3] in coop_types:
            pointer_types[inst[1]] = (inst[2], inst[3])
        elif op in (OP_CONSTANT_TRUE, OP_CONSTANT_FALSE):
            bools[inst[2]] = op == OP_CONSTANT_TRUE
        elif op in (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY, OP_TYPE_STRUCT, OP_TYPE_FUNCTION):
            for member in inst[2:]:
                if member in coop_types or member in pointer_types:
                    raise ConversionError(f"type %{inst[1]} holds cooperative matrix type %{member} "
                                          "(arrays, structs and function types of matrices are not handled)")
    if not coop_types:
        raise ConversionError("the module has no OpTypeCooperativeMatrixNV")

    # Every matrix value and matrix variable, its (NV) type, and the flows between them.
    value_type = {}  # id -> coop type id (values) or pointer type id (variables)
    flows = _Flows()
    role = {}        # flow root -> set of uses, filled after the unions
    uses = []        # (id, use)
    other_uses = {}  # id -> opcode of a use this script does not follow
    for inst in insts:
        op = inst[0]
        if op == OP_FUNCTION:
            in_function = True
        elif op == OP_FUNCTION_END:
            in_function = False
        defines = len(inst) >= 3 and (in_function or op in GLOBAL_VALUES) and (
            inst[1] in coop_types or inst[1] in pointer_types)
        if defines:
            value_type[inst[2]] = inst[1]
            flows.find(inst[2])
        if op == OP_LOAD and inst[2] in value_type:
            flows.union(inst[2], inst[3])
        elif op == OP_STORE and inst[1] in value_type:
            flows.union(inst[1], inst[2])
        elif op == OP_COPY_OBJECT and inst[2] in value_type:
            flows.union(inst[2], inst[3])
        elif op == OP_PHI and inst[2] in value_type:
            for incoming in inst[3::2]:
                flows.union(inst[2], incoming)
        elif op == MULADD_NV:
            uses += [(inst[3], USE_A), (inst[4], USE_B), (inst[5], USE_ACC), (inst[2], USE_ACC)]
        elif in_function and op not in (LOAD_NV, STORE_NV, OP_VARIABLE, OP_NAME):
            for word in inst[3:] if defines else inst[1:]:
                if word in value_type:
                    other_uses.setdefault(word, op)
    for value, use in uses:
        if value not in value_type:
            raise ConversionError(f"a product's operand %{value} is not a cooperative matrix this script can follow")
        role.setdefault(flows.find(value), set()).add(use)

    def matrix_type(x):
        t = value_type[x]
        return pointer_types[t][1] if t in pointer_types else t

    # The uses of each type; one flow must have one use.
    type_roles = {t: set() for t in coop_types}
    for x in value_type:
        r = role.get(flows.find(x), set())
        if len(r) > 1:
            names = " and ".join(USE_NAMES[u] for u in sorted(r))
            raise ConversionError(f"cooperative matrix %{x} (type %{matrix_type(x)}) is used as both {names}")
        type_roles[matrix_type(x)] |= r
    new_types = {}  # (NV type, use) -> KHR type id
    new_pointers = {}  # (pointer type, use) -> pointer type id of the use's type
    for t, r in type_roles.items():
        if not r:
            raise ConversionError(f"cooperative matrix type %{t} is never used by a product")
        for n, use in enumerate(sorted(r)):
            if n == 0:
                new_types[(t, use)] = t
            else:
                new_types[(t, use)] = bound
                bound += 1
        if len(r) > 1:
            for x in value_type:
                if matrix_type(x) == t and not role.get(flows.find(x)):
                    raise ConversionError(f"cooperative matrix %{x} of type %{t}, which serves several uses, "
                                          "reaches no product: cannot tell which type it needs")
                if matrix_type(x) == t and x in other_uses:
                    raise ConversionError(f"cooperative matrix %{x} of type %{t}, which serves several uses, "
                                          f"is used by opcode {other_uses[x]}, which this script does not follow")

    def use_of(x):
        r = role.get(flows.find(x))
        return next(iter(r)) if r else next(iter(sorted(type_roles[matrix_type(x)])))

    def retyped(x):
        t = value_type[x]
        if t in pointer_types:
            storage, pointee = pointer_types[t]
            key = (t, use_of(x))
            if new_types[(pointee, key[1])] == pointee:
                return t
            if key not in new_pointers:
                nonlocal bound
                new_pointers[key] = bound
                bound += 1
            return new_pointers[key]
        return new_types[(t, use_of(x))]

    # Rewrite the function bodies first (new pointer types are found there), then the declarations.
    uint_type = coop_types[next(iter(coop_types))][2]
    uint_type = next((i[1] for i in insts if i[0] == OP_CONSTANT and i[2] == uint_type), None)
    if uint_type not in int32_types:
        raise ConversionError("the matrices' row count is not a 32-bit integer constant")
    added_constants = []

    def constant(value):
        nonlocal bound
        key = (uint_type, value)
        if key not in constants:
            constants[key] = bound
            added_constants.append([OP_CONSTANT, uint_type, bound, value])
            bound += 1
        return constants[key]

    def layout(bool_id, what):
        if bool_id not in bools:
            raise ConversionError(f"{what}: ColumnMajor %{bool_id} is not an OpConstantTrue/False")
        return constant(COLUMN_MAJOR if bools[bool_id] else ROW_MAJOR)

    out = []
    for inst in insts:
        op = inst[0]
        inst = list(inst)
        if len(inst) >= 3 and inst[2] in value_type and inst[1] == value_type[inst[2]]:
            inst[1] = retyped(inst[2])
        if op == OP_CAPABILITY and inst[1] == CAP_NV:
            inst = [OP_CAPABILITY, CAP_KHR]
        elif op == OP_EXTENSION and decode_string(inst[1:]) == EXT_NV:
            inst = [OP_EXTENSION] + encode_string(EXT_KHR)
        elif op == LOAD_NV:
            inst = [LOAD_KHR, inst[1], inst[2], inst[3], layout(inst[5], f"load %{inst[2]}"), inst[4]] + inst[6:]
        elif op == STORE_NV:
            inst = [STORE_KHR, inst[1], inst[2], layout(inst[4], f"store of %{inst[2]}"), inst[3]] + inst[5:]
        elif op == MULADD_NV:
            inst = [MULADD_KHR] + inst[1:]
        elif op == LENGTH_NV:
            if len(type_roles[inst[3]]) > 1:
                raise ConversionError(f"OpCooperativeMatrixLengthNV of type %{inst[3]}, which serves several uses")
            inst = [LENGTH_KHR] + inst[1:]
        out.append(inst)

    # Declarations: the Use constants before the first matrix type, each type's per-use types (and pointers) after it.
    declarations = []
    for t, (component, scope, rows, columns) in coop_types.items():
        decl = []
        for use in sorted(type_roles[t]):
            decl.append([TYPE_KHR, new_types[(t, use)], component, scope, rows, columns, constant(use)])
            for (ptr, ptr_use), new_ptr in new_pointers.items():
                if pointer_types[ptr][1] == t and ptr_use == use:
                    decl.append([OP_TYPE_POINTER, new_ptr, pointer_types[ptr][0], new_types[(t, use)]])
        declarations.append((t, decl))
    result = []
    for inst in out:
        if inst[0] == TYPE_NV:
            if inst[1] == next(iter(coop_types)):
                result += added_constants
            result += dict(declarations)[inst[1]]
        else:
            result.append(inst)
    for inst in result:
        if inst[0] in (TYPE_NV, LOAD_NV, STORE_NV, MULADD_NV, LENGTH_NV) or inst[:2] == [OP_CAPABILITY, CAP_NV]:
            raise ConversionError(f"opcode {inst[0]} was left unconverted")
    header = list(header)
    header[3] = bound
    return serialize(header, result)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        with open(argv[1], "rb") as f:
            converted = convert(f.read())
    except (OSError, ConversionError) as e:
        print(f"spirv_coopmat_khr.py: {argv[1]}: {e}", file=sys.stderr)
        return 1
    with open(argv[2], "wb") as f:
        f.write(converted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
