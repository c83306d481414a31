# SPDX-License-Identifier: MIT
"""The library through ember-models: import with companion pairing, verify, rm, models found in the folder and in
the Hugging Face cache layout, the fit estimate, catalog search and usage errors."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from conftest import fixture_root, sha256

UNIT = "ember-test/Tiny-MTP-GGUF"
MODEL = "Tiny-MTP-Q8_0.gguf"


def unit_file(name: str) -> Path:
    return fixture_root() / "hub" / UNIT / name


def copy_unit(to: Path, names=(MODEL, "mmproj-F32.gguf", "chat_template.jinja")) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    for n in names:
        shutil.copy(unit_file(n), to / n)
    return to / MODEL


def files_by_name(entry: dict) -> dict:
    return {Path(f["path"]).name: f for f in entry["files"]}


def test_empty_library(cli):
    assert cli.library() == []
    r = cli.run("list")
    assert r.returncode == 0 and "no models in" in r.stdout


def test_import_pairs_companions_and_reads_capabilities(cli, tmp_path):
    model = copy_unit(tmp_path / "downloads")
    r = cli.run("--json", "import", str(model))
    assert r.returncode == 0, r.stderr
    e = cli.entry(MODEL)
    assert e["source"] == "import" and e["ready"]
    assert sorted(e["capabilities"]) == ["mtp", "thinking", "vision"]
    files = files_by_name(e)
    assert {n: f["role"] for n, f in files.items()} == {
        MODEL: "model", "mmproj-F32.gguf": "vision_projector", "chat_template.jinja": "template"}
    assert files[MODEL]["sha256"] == sha256(unit_file(MODEL))
    assert e["folder"] == str(tmp_path / "downloads")


def test_import_without_companions_has_no_vision(cli, tmp_path):
    model = copy_unit(tmp_path / "alone", names=(MODEL,))
    assert cli.run("import", str(model)).returncode == 0
    e = cli.entry(MODEL)
    assert sorted(e["capabilities"]) == ["mtp", "thinking"]  # the thinking template is embedded in the GGUF
    assert len(e["files"]) == 1


def test_import_pairs_a_standalone_draft_beside_the_model(cli, tmp_path):
    model = copy_unit(tmp_path / "drafted", names=(MODEL, "mmproj-F32.gguf"))
    # Any valid GGUF stands in for the draft: the pairing goes by name (catalog.h roleForFileName).
    shutil.copy(unit_file("mmproj-F32.gguf"), tmp_path / "drafted" / "dflash-Tiny-MTP-Q8_0.gguf")
    assert cli.run("import", str(model)).returncode == 0
    e = cli.entry(MODEL)
    assert {n: f["role"] for n, f in files_by_name(e).items()} == {
        MODEL: "model", "mmproj-F32.gguf": "vision_projector", "dflash-Tiny-MTP-Q8_0.gguf": "draft"}
    assert len(cli.library()) == 1, "the draft is a companion, not a model of its own"


def test_import_rejects_what_is_not_a_gguf(cli, tmp_path):
    bad = tmp_path / "bad.gguf"
    shutil.copy(fixture_root() / "hub" / "ember-test" / "Broken-GGUF" / "broken.gguf", bad)
    r = cli.run("import", str(bad))
    assert r.returncode == 1
    assert "bad magic" in r.stderr and str(bad) in r.stderr
    assert cli.library() == []
    txt = tmp_path / "notes.txt"
    txt.write_text("x")
    r = cli.run("import", str(txt))
    assert r.returncode == 1 and "not a .gguf file" in r.stderr


def test_verify_catches_a_changed_byte_and_a_missing_file(cli, hub):
    assert cli.run("pull", "tiny-mtp-vision").returncode == 0
    model = cli.models / UNIT / MODEL
    data = bytearray(model.read_bytes())
    data[2_000_000] ^= 1
    model.write_bytes(bytes(data))
    r = cli.run("verify", f"{UNIT}/{MODEL}")
    assert r.returncode == 1
    assert "sha256 mismatch" in r.stderr and str(model) in r.stderr
    e = cli.entry(MODEL)
    assert not e["ready"] and files_by_name(e)[MODEL]["status"] == "failed"

    shutil.copy(unit_file(MODEL), model)
    r = cli.run("verify", str(model))
    assert r.returncode == 0, r.stderr
    assert cli.entry(MODEL)["ready"]

    (cli.models / UNIT / "chat_template.jinja").unlink()
    r = cli.run("verify", MODEL)  # a unique suffix of the id
    assert r.returncode == 1 and "the file is missing" in r.stderr


def test_rm_deletes_what_ember_downloaded_and_keeps_imports(cli, hub, tmp_path):
    assert cli.run("pull", "tiny-mtp-vision").returncode == 0
    r = cli.run("rm", f"{UNIT}/{MODEL}")
    assert r.returncode == 0, r.stderr
    assert not (cli.models / UNIT / MODEL).exists() and not (cli.models / UNIT / "mmproj-F32.gguf").exists()
    assert cli.library() == []

    model = copy_unit(tmp_path / "mine")
    assert cli.run("import", str(model)).returncode == 0
    assert cli.run("rm", str(model)).returncode == 0
    assert model.exists(), "rm deleted a file Ember did not download"
    r = cli.run("rm", "nothing-like-this")
    assert r.returncode == 1 and "not in the library" in r.stderr


def test_models_dropped_into_the_folder_are_listed_unverified(cli):
    copy_unit(cli.models / "manual")
    e = cli.entry(MODEL)
    assert e["source"] == "folder" and not e["ready"]
    assert "vision" in e["capabilities"]
    r = cli.run("verify", str(cli.models / "manual" / MODEL))
    assert r.returncode == 0, r.stderr


def test_hugging_face_cache_layout(cli, tmp_path):
    cache = Path(cli.env["HF_HUB_CACHE"])
    repo = cache / "models--ember-test--Tiny-MTP-GGUF"
    (repo / "blobs").mkdir(parents=True)
    snap = repo / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    for name in (MODEL, "mmproj-F32.gguf"):
        blob = repo / "blobs" / sha256(unit_file(name))
        shutil.copy(unit_file(name), blob)
        os.symlink(os.path.relpath(blob, snap), snap / name)
    e = cli.entry(MODEL)
    assert e is not None and e["source"] == "hf-cache" and e["repo"] == "ember-test/Tiny-MTP-GGUF"
    assert files_by_name(e)[MODEL]["sha256"] == sha256(unit_file(MODEL))  # from the blob's name
    assert "vision" in e["capabilities"]
    r = cli.run("verify", str(snap / MODEL))
    assert r.returncode == 0, r.stderr

    # A blob whose content does not match its name.
    blob = repo / "blobs" / sha256(unit_file(MODEL))
    data = bytearray(blob.read_bytes())
    data[-1] ^= 0xFF
    blob.write_bytes(bytes(data))
    r = cli.run("verify", str(snap / MODEL))
    assert r.returncode == 1 and "sha256 mismatch" in r.stderr


def test_fit_estimate_of_a_model(cli, tmp_path):
    expected = json.loads((fixture_root() / "EXPECTED.json").read_text())["mtp_model"]
    model = copy_unit(tmp_path / "m")
    r = cli.run("--json", "--context", "8192", "fit", str(model))
    assert r.returncode == 0, r.stderr
    fit = json.loads(r.stdout)
    assert fit["kv_cache"] == expected["kv_bytes_per_position"] * 8192
    assert fit["recurrent_state"] == expected["recurrent_state_bytes"] * 4  # MTP: 3 drafted tokens + live state
    assert fit["projector"] > 0 and fit["verdict"] == "fits"
    assert fit["total"] == fit["weights"] + fit["projector"] + fit["kv_cache"] + fit["recurrent_state"]
    r = cli.run("fit", str(model))
    assert r.returncode == 0 and "fits: needs" in r.stdout


def test_fit_before_download_uses_the_listing_and_the_catalog(cli, hub):
    expected = json.loads((fixture_root() / "EXPECTED.json").read_text())["mtp_model"]
    r = cli.run("--json", "--context", "8192", "fit", "tiny-mtp-vision")
    assert r.returncode == 0, r.stderr
    fit = json.loads(r.stdout)
    assert fit["weights"] == unit_file(MODEL).stat().st_size  # the listing's size: the file is not here
    assert fit["projector"] == unit_file("mmproj-F32.gguf").stat().st_size
    assert fit["kv_cache"] == expected["kv_bytes_per_position"] * 8192
    assert fit["recurrent_state"] == expected["recurrent_state_bytes"] * 4
    assert fit["shape_known"] and fit["verdict"] == "fits"
    assert not (cli.models / UNIT).exists()
    r = cli.run("fit", "broken")
    assert r.returncode == 0 and "weights only" in r.stdout
    r = cli.run("fit", "no-such-id")
    assert r.returncode == 1 and "no such catalog id" in r.stderr


def test_search_the_catalog(cli):
    r = cli.run("--json", "search", "tiny", "vision")
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout)
    assert [e["id"] for e in found] == ["tiny-mtp-vision"]
    assert found[0]["files"][1] == {"path": "mmproj-F32.gguf", "role": "vision_projector", "verified": True}


def test_built_in_catalog_search(cli):
    args = [a for a in cli.args("search", "qwen3.6") if True]
    i = args.index("--catalog")
    del args[i:i + 2]
    import subprocess
    r = subprocess.run(args, env=cli.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "plunderstruck/Qwen3.6-35B-A3B-MTP-ROCmFP4-GGUF" in r.stdout and "(unverified name)" in r.stdout


def test_usage_errors_exit_2(cli):
    for args in ([], ["frobnicate"], ["pull"], ["verify"], ["--retries", "x", "list"], ["--bogus", "list"]):
        r = cli.run(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip()


def test_library_write_failure_keeps_the_previous_version(cli, tmp_path):
    """A write of library.json that fails part-way (a file-size limit makes write() fail with EFBIG, as a full disk
    fails with ENOSPC; works without root): the command says so and the previous library.json stays whole."""
    import resource
    import signal
    import subprocess

    first = copy_unit(tmp_path / "first", names=(MODEL,))
    assert cli.run("import", str(first)).returncode == 0
    state = cli.models / "library.json"
    before = state.read_bytes()
    second = copy_unit(tmp_path / "second", names=(MODEL,))

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) // 2, len(before) // 2))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    r = subprocess.run(cli.args("import", str(second)), env=cli.env, capture_output=True, text=True, timeout=60,
                       preexec_fn=limit)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == f"{state}: cannot write: File too large", r.stderr
    assert state.read_bytes() == before, "library.json was replaced by an incomplete write"
    assert sorted(p.name for p in cli.models.iterdir()) == ["library.json"], "a temporary file was left behind"
    assert [e["id"] for e in cli.library()] == [str(first)]


def test_malformed_library_state_is_one_line(cli):
    cli.models.mkdir(parents=True)
    state = cli.models / "library.json"
    for text, why in [("", "the file is empty"), ("[]", "not a JSON object"),
                      ('{"version": 1, "models": [{"id": "x", "files": {}}]}', "model 0: 'files' is not an array"),
                      ('{"version": 1, "models": [{"id": "x", "files": [{"path": 3}]}]}',
                       "model 0, file 0: 'path' is not a string")]:
        state.write_text(text)
        r = cli.run("list")
        assert r.returncode == 1
        assert r.stderr.strip() == f"{state}: not a library state file ({why}); move it aside to start an empty " \
                                   "library", r.stderr


def test_bad_catalog_file_is_one_line(cli, tmp_path):
    bad = tmp_path / "catalog.json"
    bad.write_text('{"version": 1, "entries": [{"id": "x"}]}')
    args = cli.args("search", "x")
    args[args.index("--catalog") + 1] = str(bad)
    import subprocess
    r = subprocess.run(args, env=cli.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert r.stderr.strip() == f"{bad}: entry 0 ('x'): needs an id and a name"
