# SPDX-License-Identifier: MIT
# The vision half of tests/bench/vision_h200.sh. `prepare DIR` writes a 256x256 test image and the numpy float64
# embedding of it through the full-width projector (the weights make_vision_fixtures.py --scale full writes, as
# rounded to F16); `summary DIR` compares each backend's embeddings with that reference and with each other, and
# prints the 1 MP encode times.
import glob
import json
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "fixtures"))
sys.path.insert(0, os.path.join(here, "..", "reference"))
import make_vision_fixtures as fx  # noqa: E402
import vision_reference as ref  # noqa: E402

SIDE = 256


def prepare(d):
    hp = fx.FULL
    img = fx.test_image(SIDE, SIDE, 5)
    with open(os.path.join(d, f"img_{SIDE}.png"), "wb") as f:
        f.write(fx.png_bytes(img))
    hb, wb, _ = ref.smart_resize(SIDE, SIDE, hp["patch"], hp["merge"])
    patches = ref.preprocess(img, hb, wb, hp["patch"], hp["merge"])
    w = {k: (v.astype(np.float16) if v.ndim >= 2 else v).astype(np.float64) for k, v in fx.random_weights(hp, 11).items()}
    w = {k: v.reshape(v.shape[0], -1) if v.ndim > 2 else v for k, v in w.items()}
    refhp = dict(merge=hp["merge"], heads=hp["heads"], eps=hp["eps"], width=hp["width"], blocks=hp["blocks"],
                 pos_grid=hp["pos_grid"])
    ref.encode(w, refhp, patches, hb // hp["patch"], wb // hp["patch"]).astype(np.float32).tofile(
        os.path.join(d, f"ref_{SIDE}.f32"))


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def summary(d):
    want = np.fromfile(os.path.join(d, f"ref_{SIDE}.f32"), np.float32)
    print(f"full-width projector (27 blocks, width 1152), {SIDE}x{SIDE} image against numpy float64:")
    for path in sorted(glob.glob(os.path.join(d, f"emb_{SIDE}_*.f32"))):
        got = np.fromfile(path, np.float32)
        name = path.rsplit("_", 1)[1][:-4]
        print(f"  {name:8s} max relative difference {rel(got, want):.3g}" if got.size == want.size
              else f"  {name:8s} wrong size {got.size} (want {want.size})")
    print("1 MP (1024x1024, 4096 patches, 1024 tokens) encode, seconds per run:")
    embs = {}
    for path in sorted(glob.glob(os.path.join(d, "time_*.json"))):
        name = path.rsplit("_", 1)[1][:-5]
        try:
            doc = json.load(open(path))
        except ValueError:
            print(f"  {name:8s} no result")
            continue
        s = doc["seconds"]
        print(f"  {name:8s} best {min(s):.3f}  runs {' '.join(f'{x:.3f}' for x in s)}  ({doc['backend']})")
        embs[name] = np.fromfile(os.path.join(d, f"emb_1024_{name}.f32"), np.float32)
    names = sorted(embs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            print(f"  1 MP {a} vs {b}: max relative difference {rel(embs[a], embs[b]):.3g}")


if __name__ == "__main__":
    {"prepare": prepare, "summary": summary}[sys.argv[1]](sys.argv[2])
