#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Serves the model-manager test hub (tests/models/hub_server.py) slowly, for the downloads page screenshot.

    serve_hub.py HUB_ROOT BYTES_PER_SECOND

Prints the hub's URL on one line, then serves until stdin closes (or the process is killed).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))
from hub_server import HubServer  # noqa: E402


def main() -> int:
    root, rate = Path(sys.argv[1]), int(sys.argv[2])
    with HubServer(root) as hub:
        hub.add_fault("throttle", bytes_per_s=rate, times=1000)
        print(hub.url, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
