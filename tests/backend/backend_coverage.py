# SPDX-License-Identifier: MIT
"""Which backends the op suite ran on: every backend a build has must run it (a skipped backend is a failure).

  backend_coverage.py check BACKEND_OPS_TEST BACKENDS          (a CTest test) runs a few op-suite cases on every
                                                               backend of the build; fails when one skips or fails
  backend_coverage.py summary JUNIT_XML BACKENDS [EMBER_CLI]    the test command's closing line: the backends and the
                                                               op-suite cases each passed in this run; exit 1 when a
                                                               built backend passed none or skipped any
BACKENDS is the build's list, e.g. "cpu,vulkan" (CMake writes it to build/ember-backends.txt).
"""
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

# The op suite's instances (tests/backend/backend_ops_test.cpp kBackends) of each built backend.
INSTANCES = {
    "cpu": ["cpu_1_thread", "cpu_2_threads"],
    "vulkan": ["vulkan", "vulkan_float"],
    "cuda": ["cuda"],
    "hip": ["hip"],
}
# Cheap cases that every backend implements, enough to show the backend ran.
CHECK_FILTER = "AllBackends/BackendOps.SoftmaxRows/*:AllBackends/BackendOps.ElementwiseWithBroadcast/*"


def built(backends):
    names = [b for b in backends.replace(",", ";").split(";") if b]
    unknown = [b for b in names if b not in INSTANCES]
    if unknown:
        sys.exit(f"backend_coverage: unknown backend(s) {unknown} (known: {sorted(INSTANCES)})")
    return names


def instance_of(test_name):
    """'AllBackends/BackendOps.SoftmaxRows/vulkan  # GetParam() = vulkan' -> 'vulkan'."""
    return test_name.split("  #", 1)[0].strip().rsplit("/", 1)[-1]


def check(binary, backends):
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "ops.json"
        run = subprocess.run([binary, f"--gtest_filter={CHECK_FILTER}", f"--gtest_output=json:{report}"],
                             capture_output=True, text=True, timeout=600)
        if not report.exists():
            print(run.stdout[-4000:], run.stderr[-4000:])
            sys.exit(f"backend_coverage: {binary} wrote no report (exit {run.returncode})")
        cases = [t for suite in json.loads(report.read_text())["testsuites"] for t in suite["testsuite"]]
    problems = []
    for backend in built(backends):
        for instance in INSTANCES[backend]:
            mine = [t for t in cases if t["name"].endswith("/" + instance)]
            ran = [t for t in mine if t.get("result") == "COMPLETED" and not t.get("failures")]
            skipped = [t for t in mine if t.get("result") == "SKIPPED"]
            print(f"{backend}: {instance}: {len(ran)} of {len(mine)} cases ran and passed, {len(skipped)} skipped")
            if not mine:
                problems.append(f"{instance}: no op-suite case was built for it")
            elif skipped or len(ran) != len(mine):
                problems.append(f"{instance}: {len(mine) - len(ran)} of {len(mine)} cases did not run and pass")
    if problems:
        sys.exit("the op suite did not run on every backend of this build: " + "; ".join(problems))


def device_names(ember_cli, backend):
    """The usable devices of `backend`, best first as make_backend picks them (a GPU before a CPU implementation)."""
    try:
        out = subprocess.run([ember_cli, "devices", "--json"], capture_output=True, text=True, timeout=120).stdout
        devices = [d for d in json.loads(out)["devices"] if d["backend"] == backend and d["usable"]]
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return []
    devices.sort(key=lambda d: d["type"] == "CPU")
    return [d["name"] for d in devices]


def summary(junit, backends, ember_cli=None):
    root = ET.parse(junit).getroot()
    passed, skipped = {}, {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        if not name.startswith("backend_ops_test.AllBackends/"):
            continue
        instance = instance_of(name)
        if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            skipped[instance] = skipped.get(instance, 0) + 1
        elif case.get("status") == "run" and case.find("failure") is None:
            passed[instance] = passed.get(instance, 0) + 1
    parts, problems = [], []
    for backend in built(backends):
        count = sum(passed.get(i, 0) for i in INSTANCES[backend])
        skips = sum(skipped.get(i, 0) for i in INSTANCES[backend])
        label = backend
        if backend != "cpu" and ember_cli:
            names = device_names(ember_cli, backend)
            if names:
                label += f" ({names[0]})"
        parts.append(f"{label}: {count} op-suite cases passed" + (f", {skips} skipped" if skips else ""))
        if count == 0 or skips:
            problems.append(backend)
    print("backends: " + "; ".join(parts))
    if problems:
        print(f"the op suite did not run on every built backend: {', '.join(problems)}")
        return 1
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "summary":
        sys.exit(summary(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
