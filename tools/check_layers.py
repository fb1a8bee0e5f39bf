#!/usr/bin/env python3
"""check_layers.py — graft's include layering, as docs/ARCHITECTURE.md draws it, checked.

Every header under include/graft/ and every file under src/ belongs to one layer (by folder, with
the few per-file exceptions listed below). A file may include graft headers of its own layer and of
the layers below it, never of a layer above; and no chain of graft includes may lead back to the
file it started from (a cycle, which #pragma once hides until the order of includes changes).

    tools/check_layers.py [repo-root]     exit 0: clean; 1: each violation printed, one per line

CI runs it (tests/CMakeLists.txt: test `include_layers`). When the layering changes on purpose,
change LAYERS here and the diagram in docs/ARCHITECTURE.md together.
"""
import os
import re
import sys

# Bottom to top. A layer may include itself and everything before it in this list.
LAYERS = [
    "core",           # dtype, shape, buffer, tensor, io, threads, error
    "formats",        # formats/: .npy, IDX and the byte-level TF formats (formats/tf/: wire codec,
                      # TensorProto, checkpoint bundles/V1/state, sstable, snappy)
    "graph",          # the IR, op table, graph_builder
    "formats-graph",  # formats/tf_graph/: GraphDef/MetaGraphDef/SavedModel (read and write the IR)
    "ops",            # op families over graft::tensor
    "device",         # the device interface graft::cuda's runtime offers the executor
    "dist",           # communicators (local, MPI, NCCL) and the gradient fusion engine
    "exec",           # session, kernel registry, cpu_kernels/*.hpp
    "cuda",           # GPU kernels bound to the executor
    "autodiff",
    "train",
    "surgery",
    "embedded",       # the embedded exporter: a frozen graph -> one self-contained C++ header
    "typed",
    "top",            # umbrella headers (graft.hpp, graph_all.hpp, ...), tools, examples
]

# Folder (relative to include/graft/ or the repo root for src/) -> layer.
FOLDERS = {
    "include/graft/core": "core",
    "include/graft/formats": "formats",
    "include/graft/formats/tf_graph": "formats-graph",
    "include/graft/graph": "graph",
    "include/graft/ops": "ops",
    "include/graft/exec": "exec",
    "include/graft/cuda": "cuda",
    "include/graft/device": "device",
    "include/graft/dist": "dist",
    "include/graft/autodiff": "autodiff",
    "include/graft/train": "train",
    "include/graft/surgery": "surgery",
    "include/graft/embedded": "embedded",
    "include/graft/typed": "typed",
    "include/graft": "top",
    "src/cuda": "cuda",
    "src/formats": "formats",
    "src/formats/tf_graph": "formats-graph",
}

# Files whose layer is not their folder's, and why.
FILES = {
    # The compiled parts (core/config.hpp's list; ARCHITECTURE.md, Targets): each file its part's layer.
    "src/compiled/elementwise_ops.cpp": "ops",
    "src/compiled/op_table.cpp": "graph",
    "src/compiled/gradient_rules.cpp": "autodiff",
    "src/compiled/gradients.cpp": "autodiff",
    "src/compiled/session.cpp": "exec",
    "src/compiled/clone.cpp": "surgery",
    "src/compiled/import.cpp": "surgery",
    "src/compiled/saver.cpp": "train",
    "src/compiled/typed_runtime.cpp": "typed",
    # Data-parallel training and sharded checkpoints build training graphs and drive sessions.
    "include/graft/dist/data_parallel.hpp": "train",
    "include/graft/dist/sharded_checkpoint.hpp": "train",
    # graft::cuda's host runtime includes core/ only: sessions call it through this header.
    "include/graft/device/cuda_runtime.hpp": "device",
}
# src/compiled/exec_kernels*.cpp compile the CPU kernel table: the executor's layer.
PATTERNS = [(re.compile(r"^src/compiled/exec_kernels[a-z0-9_]*\.cpp$"), "exec")]

INCLUDE = re.compile(r'^\s*#\s*include\s+"(graft/[^"]+)"')
IF = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b\s*(.*)$")
ENDIF = re.compile(r"^\s*#\s*endif\b")
# core/config.hpp's one switch: a compiled part's header includes its definitions under
# `#if !defined(GRAFT_SEPARATE_COMPILATION) || defined(GRAFT_COMPILING_<PART>)`.
FALLBACK = re.compile(r"^!\s*defined\s*\(?\s*GRAFT_SEPARATE_COMPILATION\b")


def includes_of(text):
    """(line, target, in_fallback) for each graft include, tracking the header-only fallbacks."""
    stack, out = [], []
    for n, line in enumerate(text.splitlines(), 1):
        m = IF.match(line)
        if m:
            stack.append(m.group(1) == "if" and bool(FALLBACK.match(m.group(2))))
            continue
        if ENDIF.match(line):
            if stack:
                stack.pop()
            continue
        m = INCLUDE.match(line)
        if m:
            out.append((n, m.group(1), any(stack)))
    return out


def layer_of(rel):
    if rel in FILES:
        return FILES[rel]
    for pat, layer in PATTERNS:
        if pat.match(rel):
            return layer
    d = os.path.dirname(rel)
    while d:
        if d in FOLDERS:
            return FOLDERS[d]
        d = os.path.dirname(d)
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = []
    for top in ("include/graft", "src"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith((".hpp", ".cpp", ".h", ".cu", ".cuh")):
                    files.append(os.path.relpath(os.path.join(dirpath, n), root))
    rank = {name: i for i, name in enumerate(LAYERS)}
    problems = []
    edges = {}
    for rel in sorted(files):
        layer = layer_of(rel)
        if layer is None:
            problems.append(f"{rel}: in no layer (add its folder to FOLDERS in tools/check_layers.py)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        edges[rel] = []
        for line, inc, fallback in includes_of(text):
            target = "include/" + inc
            if not os.path.exists(os.path.join(root, target)):
                continue  # generated (graft_tf/*.pb.h lives under proto/) or build-time headers
            if not fallback:
                edges[rel].append(target)
            tl = layer_of(target)
            if tl is not None and rank[tl] > rank[layer]:
                problems.append(f"{rel}:{line}: layer '{layer}' includes {inc} of the higher layer '{tl}'")
    # The interface + implementation idiom: drop detail/X -> H when H is in detail/'s parent folder
    # and H reaches detail/X.
    def reaches(a, b):
        todo, seen = [a], {a}
        while todo:
            x = todo.pop()
            for y in edges.get(x, []):
                if y == b:
                    return True
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return False
    for rel in list(edges):
        parts = rel.split("/")
        if "detail" not in parts[:-1]:
            continue
        parent = "/".join(parts[:parts.index("detail")])
        edges[rel] = [t for t in edges[rel]
                      if not (os.path.dirname(t) == parent and "detail" not in t.split("/") and reaches(t, rel))]
    # Cycles among graft's own files (iterative DFS; report each cycle once by its smallest file).
    state, seen_cycles = {}, set()
    for start in sorted(edges):
        if state.get(start):
            continue
        stack = [(start, iter(edges.get(start, [])))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            s = state.get(nxt, 0)
            if s == 1:
                cyc = path[path.index(nxt):]
                key = tuple(sorted(cyc))
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    problems.append("include cycle: " + " -> ".join(cyc + [nxt]))
            elif s == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(edges.get(nxt, []))))
    for p in problems:
        print(p)
    print(f"check_layers: {len(files)} files, {sum(len(v) for v in edges.values())} graft includes, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
