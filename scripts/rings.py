#!/usr/bin/env python3
"""The include graph between folders, and its rings.

    scripts/rings.py            fail (exit 1) on any ring between folders
    scripts/rings.py --graph    print every edge between folders, then the rings

A file's folder is the folder it sits in; a public header
(include/engine/X.h, include/audit/X.h, ...) belongs to the folder of the
source file that implements it (the .c, .cpp of the same base name under
src/), or, when there is none, to the folder it is the face of
(include/ui/ui.h to src/ui, include/engine/event.h to src/engine). An edge A -> B says that
a file of folder A includes a header of folder B. A ring is a strongly
connected set of two or more folders: a floor that includes a floor above
it. Includes are resolved as the compiler does: beside the including file,
then include/, then src/engine/ (the engine's private include directory).
Comments and literals are not read (an include inside a comment is none).
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
SEARCH = ['include', 'src/engine']


def tracked(root):
    out = subprocess.run(['git', 'ls-files', '--', 'src', 'include'],
                         cwd=root, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split('\n')
            if p.endswith(('.c', '.h', '.cpp'))
            and os.path.isfile(os.path.join(root, p))]


def resolve(root, path, name):
    for base in [os.path.dirname(path)] + SEARCH:
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def folder_of(path, sources):
    """A public header's folder is its implementation's, else the source
    folder it is the face of (include/ui/ui.h: src/ui); any other file's,
    its own."""
    if path.startswith('include/') and path.endswith('.h'):
        stem = os.path.basename(path)[:-2]
        impl = sources.get(stem)
        if impl is not None:
            return os.path.dirname(impl)
        return 'src/' + os.path.dirname(path)[len('include/'):]
    return os.path.dirname(path)


def rings(nodes, edges):
    """Tarjan's strongly connected components with two or more nodes."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(__file__), '..'))
    graph = '--graph' in sys.argv[1:]
    files = tracked(root)
    sources = {}
    for p in files:
        if p.startswith('src/') and p.endswith(('.c', '.cpp')):
            sources[os.path.splitext(os.path.basename(p))[0]] = p
    edges, why, nodes = {}, {}, set()
    for p in files:
        with open(os.path.join(root, p), encoding='utf-8',
                  errors='replace') as f:
            text = COMMENT.sub(' ', f.read())
        a = folder_of(p, sources)
        nodes.add(a)
        for name in INCLUDE.findall(text):
            target = resolve(root, p, name)
            if target is None:
                continue
            b = folder_of(target, sources)
            if a == b:
                continue
            nodes.add(b)
            edges.setdefault(a, set()).add(b)
            why.setdefault((a, b), []).append(f'{p} -> {target}')
    if graph:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f'{a} -> {b}  ({len(why[(a, b)])}: '
                      f'{why[(a, b)][0]})')
    found = rings(nodes, edges)
    for comp in found:
        print(f'rings: a ring of {len(comp)} folders: {", ".join(comp)}')
        members = set(comp)
        for a in comp:
            for b in sorted(edges.get(a, ())):
                if b in members:
                    print(f'rings:   {a} -> {b}: {why[(a, b)][0]}'
                          + (f' (+{len(why[(a, b)]) - 1} more)'
                             if len(why[(a, b)]) > 1 else ''))
    if found:
        return 1
    print(f'rings: {len(nodes)} folders, {sum(map(len, edges.values()))}'
          ' edges between them, no ring')
    return 0


if __name__ == '__main__':
    sys.exit(main())
