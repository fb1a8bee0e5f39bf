#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the real TensorFlow files in ../shared/tf-fixtures.

    make_seeds.py SHARED_DIR OUT_DIR [GRAFT_WRITTEN_DIR]

Writes OUT_DIR/<target>/<n> (at most MAX_FILES small files per target and source). Sources: the
TensorFlow files of SHARED_DIR/tf-fixtures and, when given, a folder of files graft itself wrote
(`graft demo --dir`: a Saver checkpoint + .meta, a SavedModel, a GraphDef, an event file, .npy).
Run at build time: the seeds live in the build tree, never in the repository."""
import os
import pathlib
import struct
import sys

MAX_BYTES = 256 * 1024
MAX_FILES = 150


def small(paths):
    out = []
    for p in sorted(paths):
        try:
            if p.is_file() and 0 < p.stat().st_size <= MAX_BYTES:
                out.append(p)
        except OSError:
            pass
    # spread the pick over the whole list, not the first folder only
    step = max(1, len(out) // MAX_FILES)
    return out[::step][:MAX_FILES]


def main():
    shared, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    sources = []
    fx = shared / "tf-fixtures"
    if fx.is_dir():
        sources.append(list(fx.rglob("*")))
    else:
        print(f"make_seeds: {fx} is absent: no seeds from TensorFlow's files")
    if len(sys.argv) > 3 and pathlib.Path(sys.argv[3]).is_dir():
        sources.append(list(pathlib.Path(sys.argv[3]).rglob("*")))
    picks = {"npy": [], "graph_def": [], "meta_graph": [], "events": []}
    for files in sources:
        picks["npy"] += small(p for p in files if p.suffix == ".npy")
        picks["graph_def"] += small(p for p in files if p.suffix in (".pb", ".pbtxt") and p.name != "saved_model.pb")
        picks["meta_graph"] += small(p for p in files if p.suffix == ".meta" or p.name == "saved_model.pb")
        picks["events"] += small(p for p in files if "tfevents" in p.name)
    for name, paths in picks.items():
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        for i, p in enumerate(paths):
            (d / f"{i:04d}").write_bytes(p.read_bytes())
    # checkpoint: 2-byte little-endian index length (fuzz_support.hpp's split2), index, data shard;
    # V1 checkpoints and `checkpoint` state files go in whole (the target reads the first part as both)
    d = out / "checkpoint"
    d.mkdir(parents=True, exist_ok=True)
    n = 0
    for files in sources:
        for idx in small(p for p in files if p.suffix == ".index"):
            data = idx.with_suffix(".data-00000-of-00001")
            if not data.is_file() or data.stat().st_size > MAX_BYTES:
                continue
            ib = idx.read_bytes()
            if len(ib) > 0xFFFF:
                continue
            (d / f"{n:04d}").write_bytes(struct.pack("<H", len(ib)) + ib + data.read_bytes())
            n += 1
        for p in small(p for p in files if p.name == "checkpoint" or p.suffix == ".ckpt"):
            b = p.read_bytes()
            (d / f"{n:04d}").write_bytes(struct.pack("<H", min(len(b), 0xFFFF)) + b)
            n += 1
    # npy: the fixtures hold none; a few of each kind graft reads, written as numpy writes them
    d = out / "npy"
    kinds = [("<f4", (2, 3), 4), ("<f8", (3,), 8), ("<i4", (2, 2), 4), ("<i8", (1,), 8), ("|u1", (4,), 1),
             ("<f2", (2,), 2), ("|b1", (3,), 1), ("<f4", (), 4), ("<f4", (0, 4), 4), (">f8", (2, 2), 8),
             ("<U2", (2,), 8), ("<c8", (1,), 8)]
    for i, (descr, shape, item) in enumerate(kinds):
        order = "True" if descr.startswith(">") else "False"
        dims = "(" + ", ".join(str(dim) for dim in shape) + ")" if len(shape) != 1 else f"({shape[0]},)"
        header = f"{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {dims}, }}"
        header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        count = 1
        for dim in shape:
            count *= dim
        body = bytes((j * 7) % 251 for j in range(count * item))
        (d / f"np{i:02d}").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + body)
    picks["npy"] = kinds
    print(f"make_seeds: " + ", ".join(f"{k} {len(v)}" for k, v in picks.items()) + f", checkpoint {n}")


if __name__ == "__main__":
    main()
