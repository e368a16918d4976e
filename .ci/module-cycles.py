#!/usr/bin/env python3
"""Fail CI when the modules of a Rust crate depend on each other in a circle.

Usage: python3 .ci/module-cycles.py CRATE_SRC_DIR [--root-module PATH]... [--dot FILE] [--edges]
       python3 .ci/module-cycles.py --self-test
Exit status: 1 if a cycle exists, 0 if none, 2 on a usage error.

Nodes: every module file reached from the crate root(s) (lib.rs and/or main.rs, or each
--root-module) through `mod name;` declarations: `a.rs` and `a/mod.rs` are `a`, `a/b.rs` is
`a::b`. Test code is not part of the graph: a `#[cfg(test)]` item (`mod tests { .. }`, a test
helper, a statement) is dropped, and a `#[cfg(test)] mod x;` file and everything below it
(`core/tests/`) is never read. Comments, strings and char literals are removed first. An inline
`mod x { .. }` that is not test code counts as part of its file.

Edges: module A depends on module B when code in A names an item defined in B:
  * a private `use` (not `pub`/`pub(..)`), each leaf of its expanded tree, whose path starts with
    `crate`, `super`, `self` or a module name in scope (a child, or an imported module);
  * a path in code (`crate::x::Y`, `super::Y`, `conn::spawn` after `use super::conn;`);
  * a name that A re-exports with `pub use` and also uses in its own code (first use counted);
  * a macro invocation `m!`, not imported, of a `macro_rules! m` defined in exactly one module.
A path is resolved to the module that *defines* its item: module names are walked as far as
they go, then names imported or re-exported there (`pub use`, globs included) are followed,
recursively, to their definition. So `use super::X`, where the parent's mod.rs only says
`pub use x::X`, is an edge to `x`, not to the parent; a name not found falls back to the
deepest module the path named. A glob `use super::*` is an edge to the parent's file. Not
edges: a `pub use` line itself (it routes names: a mod.rs that re-exports its children does not
depend on them), importing a module (`use super::conn;`: its uses count), `mod child;`,
self-edges, and paths into other crates (std, tokio, shepherd_protocol, ...).
A cycle is a strongly connected component of more than one module.
"""
import argparse
import os
import re
import sys
import tempfile

ITEM_KWS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod"}
EXTERNAL = ("external",)  # what a name imported from another crate resolves to
IDENT = re.compile(r"(?:r#)?(\w+)")
RAW_STR = re.compile(r'[bc]?r(#*)"')
CFG_TEST = ["[", "cfg", "(", "test", ")", "]"]


def lex(text):
    """Tokens (kind, value, line), kind in id/p/str/life, without comments or literal text."""
    toks, i, n, line = [], 0, len(text), 1
    while i < n:
        c, start = text[i], i
        if c.isspace() or text.startswith("//", i):
            i = i + 1 if c.isspace() else (text.find("\n", i) + 1 or n + 1) - 1  # to the newline
        elif text.startswith("/*", i):  # block comments nest
            depth, i = 1, i + 2
            while i < n and depth:
                depth += text.startswith("/*", i) - text.startswith("*/", i)
                i += 2 if text.startswith(("/*", "*/"), i) else 1
        elif m := RAW_STR.match(text, i):  # r"..", r#".."#, br"..", cr".."
            end = text.find('"' + m.group(1), m.end())
            i = n if end < 0 else end + 1 + len(m.group(1))
            toks.append(("str", text[m.end():i - 1 - len(m.group(1))], line))
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            i += 1 if c == '"' else 2
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            toks.append(("str", text[start:i - 1].split('"', 1)[1], line))
        elif c == "'" or (c == "b" and text.startswith("'", i + 1)):
            i += c == "b"
            if text.startswith("\\", i + 1):  # '\n', '\'', '\u{..}'
                i = text.find("'", i + 3) + 1 or n
            elif i + 2 < n and text[i + 2] == "'":  # 'a'
                i += 3
            else:  # a lifetime or a label: 'a, 'static
                m = IDENT.match(text, i + 1)
                i = m.end() if m else i + 1
                toks.append(("life", text[start:i], line))
        elif m := IDENT.match(text, i):  # numbers too: harmless as names
            toks.append(("id", m.group(1), line))
            i = m.end()
        else:
            tok = "::" if text.startswith("::", i) else c
            toks.append(("p", tok, line))
            i += len(tok)
        line += text.count("\n", start, i)
    return toks


def is_p(toks, i, value):
    return 0 <= i < len(toks) and toks[i][0] == "p" and toks[i][1] == value


def val(toks, i):
    return toks[i][1] if 0 <= i < len(toks) else None


def strip_tests(toks):
    """Drops `#[cfg(test)]` items; returns (tokens, test-only `mod x;` names, whole file is test)."""
    out, test_mods, i = [], set(), 0
    while i < len(toks):
        if is_p(toks, i, "#") and is_p(toks, i + 1, "!") and [t[1] for t in toks[i + 2:i + 8]] == CFG_TEST:
            return [], set(), True
        if not (is_p(toks, i, "#") and [t[1] for t in toks[i + 1:i + 7]] == CFG_TEST):
            out.append(toks[i])
            i += 1
            continue
        i += 7
        while is_p(toks, i, "#") and is_p(toks, i + 1, "["):  # the item's other attributes
            depth, i = 1, i + 2
            while i < len(toks) and depth:
                depth += is_p(toks, i, "[") - is_p(toks, i, "]")
                i += 1
        k = i
        while val(toks, k) in ("pub", "(", "crate", "super", "self", "in", ")"):
            k += 1
        if val(toks, k) == "mod" and is_p(toks, k + 2, ";"):
            test_mods.add(val(toks, k + 1))
        depth = 0  # skip the item or statement: to `;` or `,`, or past its `{ .. }`
        while i < len(toks):
            kind, v, _ = toks[i]
            if kind == "p" and v in ")]}" and depth == 0:
                break
            i += 1
            if kind == "p" and v in "([{":
                depth += 1
            elif kind == "p" and v in ")]}":
                depth -= 1
                if depth == 0 and v == "}":
                    i += is_p(toks, i, ";")
                    break
            elif kind == "p" and v in ";," and depth == 0:
                break
    return out, test_mods, False


def parse_use(toks, i, prefix, out):
    """Expands the use tree at toks[i] into out as (segments, alias or None, glob?, line)."""
    segs = list(prefix)
    if is_p(toks, i, "::"):
        segs, i = segs + ["::"], i + 1  # `::name`: another crate
    while i < len(toks):
        kind, v, line = toks[i]
        if kind == "p" and v == "{":
            i += 1
            while i < len(toks) and not is_p(toks, i, "}"):
                i = parse_use(toks, i, segs, out)
                i += is_p(toks, i, ",")
            return i + 1
        if kind == "p" and v == "*":
            out.append((segs, None, True, line))
            return i + 1
        if kind != "id":
            return i + 1
        path, alias, i = (segs, segs[-1], i + 1) if v == "self" and segs else (segs + [v], v, i + 1)
        if is_p(toks, i, "::"):
            segs, i = path, i + 1
            continue
        if val(toks, i) == "as":
            alias, i = val(toks, i + 1), i + 2
        out.append((path, None if alias == "_" else alias, False, line))
        return i
    return i


def adjust(segs, inline):
    """In an inline `mod x { .. }` (merged into its file's module) the first `super`s stay put."""
    supers = next((k for k, s in enumerate(segs) if s != "super"), len(segs))
    if not inline or not supers:
        return segs
    return ["self"] + segs[supers:] if supers <= inline else segs[inline:]


class Module:
    def __init__(self, path, file, parent, root):
        self.path, self.file, self.parent, self.root = path, file, parent, root or self
        self.name = "::".join(path) or "crate"
        self.children, self.defs, self.macros = {}, set(), set()
        self.uses = []  # (segments, alias, glob, line, is_pub)
        self.paths = []  # (segments, line)
        self.macro_calls = []  # (name, line)
        self.first_use = {}  # identifier -> first line it is used on in code

    def scan(self, toks):
        """Reads definitions, uses, code paths and macro calls; returns the `mod x;` lines."""
        decls, stack, path_attr, i = [], [], None, 0
        while i < len(toks):
            kind, v, line = toks[i]
            prev = val(toks, i - 1) if i else None
            depth = len(stack) - stack.count("macro")  # `name! { .. }` braces are transparent
            if kind == "p" and v == "{":
                stack.append("macro" if depth == 0 and prev == "!" else "mod" if val(toks, i - 2) == "mod" else "block")
            elif kind == "p" and v == "}":
                stack and stack.pop()
            elif kind == "p" and v == "#" and [t[1] for t in toks[i + 1:i + 4]] == ["[", "path", "="]:
                path_attr = val(toks, i + 4)
            elif kind != "id":
                pass
            elif v == "use":
                is_pub = prev == "pub" or (prev == ")" and "pub" in [t[1] for t in toks[max(0, i - 8):i]])
                leaves = []
                i = parse_use(toks, i + 1, [], leaves)
                self.uses += [(adjust(s, stack.count("mod")), a, g, ln, is_pub) for s, a, g, ln in leaves]
                while i < len(toks) and not is_p(toks, i, ";"):
                    i += 1
            elif v == "mod" and is_p(toks, i + 2, ";") and depth == 0:
                decls.append((val(toks, i + 1), path_attr))
                path_attr, i = None, i + 1
            elif v == "macro_rules" and is_p(toks, i + 1, "!"):
                self.macros.add(val(toks, i + 2))
                self.defs.add(val(toks, i + 2))
                i += 2
            elif v in ITEM_KWS and i + 1 < len(toks) and toks[i + 1][0] == "id" and val(toks, i + 1) not in ITEM_KWS:
                if depth == 0:
                    self.defs.add(val(toks, i + 1))
                i += 1
            elif toks[i - 1][0] == "p" and prev in ("::", "$", "."):
                pass  # the tail of a path, a macro variable, a field or a method
            elif is_p(toks, i + 1, "::") and not (prev == "in" and is_p(toks, i - 2, "(")):  # pub(in x)
                segs = [v]
                while is_p(toks, i + 1, "::") and i + 2 < len(toks) and toks[i + 2][0] == "id":
                    segs.append(val(toks, i + 2))
                    i += 2
                self.paths.append((adjust(segs, stack.count("mod")), line))
            elif is_p(toks, i + 1, "!") and val(toks, i + 2) in ("(", "[", "{"):
                self.macro_calls.append((v, line))
            else:
                self.first_use.setdefault(v, line)
            i += 1
        return decls


class Crate:
    def __init__(self, src, roots):
        self.modules, self.test_paths = [], set()
        for root in roots:
            self.load(os.path.join(src, root), [], None, None)

    def load(self, file, path, parent, root):
        with open(file, encoding="utf-8", errors="replace") as f:
            toks, test_mods, test_file = strip_tests(lex(f.read()))
        here = os.path.dirname(file)
        child_dir = here if parent is None or os.path.basename(file) == "mod.rs" else os.path.splitext(file)[0]
        if test_file:
            self.test_paths.update((file, child_dir))
            return None
        mod = Module(path, file, parent, root)
        self.modules.append(mod)
        for name, path_attr in mod.scan(toks):
            candidates = [os.path.join(here, path_attr)] if path_attr else [
                os.path.join(child_dir, name + ".rs"), os.path.join(child_dir, name, "mod.rs")]
            found = [p for p in candidates if os.path.isfile(p)]
            if found and (child := self.load(found[0], path + [name], mod, mod.root)):
                mod.children[name] = child
                mod.defs.add(name)
        for name in test_mods:
            self.test_paths.update((os.path.join(child_dir, name + ".rs"), os.path.join(child_dir, name)))
        return mod

    def lookup(self, mod, name, guard):
        """What `name` means in mod: ("mod", M), ("item", definer, name), EXTERNAL, None if unknown."""
        if name in mod.children:
            return ("mod", mod.children[name])
        if name in mod.defs:
            return ("item", mod, name)
        if (mod, name) in guard:  # `pub use a::X` in b and `pub use b::X` in a
            return None
        guard = guard | {(mod, name)}
        for segs, alias, glob, _, _ in mod.uses:
            if alias == name and not glob:
                return self.resolve(mod, segs, guard) or EXTERNAL
        for segs, alias, glob, _, _ in mod.uses:
            if glob and (source := self.resolve(mod, segs, guard)) and source[0] == "mod":
                if found := self.lookup(source[1], name, guard):
                    return found
        return None

    def resolve(self, mod, segs, guard=frozenset()):
        """("mod", M) or ("item", definer, name) for a path used in mod; None for other crates."""
        cur, i = mod, 0
        if segs[0] == "crate":
            cur, i = mod.root, 1
        elif segs[0] in ("self", "super"):
            i = segs[0] == "self"
            while i < len(segs) and segs[i] == "super":
                cur, i = cur.parent or cur, i + 1
        else:
            found = self.lookup(mod, segs[0], guard)
            if found in (None, EXTERNAL) or found[0] == "item":
                return None if found is EXTERNAL else found
            cur, i = found[1], 1
        for name in segs[i:]:
            found = self.lookup(cur, name, guard)
            if found is None:
                return ("item", cur, name)  # unknown here (made by a macro?): the deepest module
            if found is EXTERNAL or found[0] == "item":
                return None if found is EXTERNAL else found
            cur = found[1]
        return ("mod", cur)

    def in_crate(self, mod, head):
        return head in ("crate", "self", "super") or self.lookup(mod, head, frozenset()) not in (None, EXTERNAL)

    def edges(self):
        """{(A, B): [(file, line, what)]} over the modules."""
        edges, homes = {}, {}
        for m in self.modules:
            for name in m.macros:
                homes.setdefault((m.root, name), []).append(m)

        def add(a, found, line, what):
            if found and found[1] is not a:
                edges.setdefault((a, found[1]), []).append((a.file, line, what))

        for m in self.modules:
            for segs, alias, glob, line, is_pub in m.uses:
                text = "::".join(segs) + "::*" * glob
                if is_pub and alias in m.first_use and not glob:
                    add(m, self.resolve(m, segs), m.first_use[alias], f"{alias} (its own `pub use {text}`)")
                elif not is_pub and self.in_crate(m, segs[0]):
                    found = self.resolve(m, segs)
                    if found and (glob or found[0] == "item"):  # an imported module counts where used
                        add(m, found, line, "use " + text)
            for segs, line in m.paths:
                if self.in_crate(m, segs[0]) and (segs[0] in ("crate", "self", "super")
                                                  or self.lookup(m, segs[0], frozenset())[0] == "mod"):
                    add(m, self.resolve(m, segs), line, "::".join(segs))
            for name, line in m.macro_calls:
                if len(homes.get((m.root, name), [])) == 1 and name not in {u[1] for u in m.uses} | m.defs:
                    add(m, ("mod", homes[(m.root, name)][0]), line, name + "!")
        return edges


def tarjan(nodes, succ):
    """Strongly connected components (Tarjan's algorithm, iterative: no recursion limit)."""
    index, low, on_stack, stack, sccs, work = {}, {}, set(), [], [], []

    def enter(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(succ.get(node, ()))))

    for start in (n for n in nodes if n not in index):
        enter(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    enter(child)
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                sccs.append([stack.pop()])
                while sccs[-1][-1] is not node:
                    sccs[-1].append(stack.pop())
                on_stack.difference_update(sccs[-1])
    return sccs


def analyze(src, roots):
    crate = Crate(src, roots)
    edges = crate.edges()
    succ = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    cycles = [sorted(c, key=lambda m: m.name) for c in tarjan(crate.modules, succ) if len(c) > 1]
    return crate, edges, sorted(cycles, key=lambda c: c[0].name)


def describe(sites):
    """`file:line  what` lines, the leaves of one `use` tree put back together."""
    by_line = {}
    for file, line, what in sites:
        by_line.setdefault((file, line), set()).add(what)
    out = []
    for (file, line), whats in sorted(by_line.items(), key=lambda kv: kv[0][1]):
        uses = {}
        for w in sorted(whats):
            head, _, leaf = w.rpartition("::")
            uses.setdefault(head if w.startswith("use ") and head else w, []).append(leaf)
        out.append((file, line, ", ".join(h if not h.startswith("use ") else f"{h}::{ls[0]}" if len(ls) == 1
                                          else f"{h}::{{{', '.join(ls)}}}" for h, ls in uses.items())))
    return out


def run(src, roots, dot=None, show_edges=False):
    crate, edges, cycles = analyze(src, roots)
    rel = lambda f: os.path.relpath(f, src)  # noqa: E731
    label = (lambda m: m.name) if len(roots) == 1 else (lambda m: f"[{rel(m.root.file)}] {m.name}")
    order = lambda e: (label(e[0]), label(e[1]))  # noqa: E731
    for n, cycle in enumerate(cycles, 1):
        inner = sorted((e for e in edges if e[0] in cycle and e[1] in cycle), key=order)
        print(f"cycle {n}: {len(cycle)} modules, {len(inner)} edges: "
              + ", ".join(f"{label(m)} ({rel(m.file)})" for m in cycle))
        for e in inner:
            sites = describe(edges[e])
            print(f"  {label(e[0])} -> {label(e[1])}  [{len(sites)} site{'s' * (len(sites) != 1)}]")
            for file, line, what in sites:
                print(f"      {rel(file)}:{line}  {what}")
    if show_edges:
        for e in sorted(edges, key=order):
            sites = "; ".join(f"{rel(f)}:{ln} {w}" for f, ln, w in describe(edges[e]))
            print(f"edge {label(e[0])} -> {label(e[1])}  ({sites})")
        for path in sorted(p for p in crate.test_paths if os.path.exists(p)):
            print(f"skipped (test-only): {rel(path)}")
    if dot:
        cyclic = {(a, b) for c in cycles for a, b in edges if a in c and b in c}
        with open(dot, "w", encoding="utf-8") as f:
            f.write("digraph modules {\n  rankdir=LR;\n  node [shape=box, fontname=monospace];\n")
            for m in crate.modules:
                f.write(f'  "{label(m)}"{" [color=red]" if any(m in c for c in cycles) else ""};\n')
            for e in sorted(edges, key=order):
                f.write(f'  "{label(e[0])}" -> "{label(e[1])}"{" [color=red]" if e in cyclic else ""};\n')
            f.write("}\n")
    known = [os.path.realpath(p) for p in crate.test_paths | {m.file for m in crate.modules}]
    unread = sorted(rel(p) for d, _, fs in os.walk(src) for p in (os.path.join(d, f) for f in fs if f.endswith(".rs"))
                    if not any(os.path.realpath(p) in (k, k + ".rs") or os.path.realpath(p).startswith(k + os.sep)
                               for k in known))
    if unread:
        print(f"module-cycles: note: {len(unread)} .rs files outside the module tree, not read: "
              + ", ".join(unread[:8]) + (", ..." if len(unread) > 8 else ""))
    print(f"module-cycles: {src.rstrip('/')}: {len(crate.modules)} modules, {len(edges)} edges, "
          f"{len(cycles)} cycle{'s' * (len(cycles) != 1)}")
    return 1 if cycles else 0


def self_test():
    def graph(files):
        with tempfile.TemporaryDirectory(prefix="module-cycles-") as d:
            for name, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
                with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                    f.write(text)
            crate, edges, cycles = analyze(d, ["lib.rs"])
        return ({m.name for m in crate.modules}, {(a.name, b.name) for a, b in edges},
                [sorted(m.name for m in c) for c in cycles])

    failed = []

    def check(name, ok):
        print(f"self-test {'ok  ' if ok else 'FAIL'} {name}")
        failed.extend([] if ok else [name])

    _, edges, cycles = graph({
        "lib.rs": "mod a;\nmod b;\n",
        "a.rs": "use crate::b::B;\npub struct A;\n",
        "b/mod.rs": "mod c;\npub struct B;\nfn f() { c::g(); }\n",
        "b/c.rs": "pub fn g() -> super::super::a::A { crate::a::A }\n"})
    check("a real cycle is found (use, path to a child, super::super path)",
          cycles == [["a", "b", "b::c"]] and edges == {("a", "b"), ("b", "b::c"), ("b::c", "a")})
    _, edges, cycles = graph({
        "lib.rs": "mod c;\nmod p;\npub use p::{X, Y};\n",
        "c.rs": "fn h() -> crate::X { crate::Y }\n",
        "p/mod.rs": "mod x;\nmod y;\npub use x::*;\npub(crate) use self::y::{self as why, Y, Y as Why};\n"
                    "pub fn helper() {}\n",
        "p/x.rs": "use super::Why;\npub struct X;\n",
        "p/y.rs": "pub struct Y;\nfn g() { super::helper(); super::why::Y; }\n"})
    check("a parent re-exporting children (glob, rename, self) is not a cycle",
          edges == {("p::x", "p::y"), ("p::y", "p"), ("c", "p::x"), ("c", "p::y")} and cycles == [])
    mods, edges, cycles = graph({
        "lib.rs": "mod a;\nmod b;\n#[cfg(test)]\nmod t;\n",
        "a.rs": "use crate::b::B;\npub struct A;\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
        "b.rs": "pub struct B;\n#[cfg(test)]\nuse crate::a::A;\nfn f() {\n    #[cfg(test)]\n"
                "    crate::a::A;\n}\n#[cfg(test)]\nmod tests { use super::*; fn g() { crate::a::A; } }\n",
        "t.rs": "mod u;\nuse crate::a::A;\n", "t/u.rs": "use crate::a::A;\n"})
    check("cfg(test) code and test-only files are skipped",
          cycles == [] and edges == {("a", "b")} and mods == {"crate", "a", "b"})
    _, edges, cycles = graph({
        "lib.rs": "mod a;\nmod b;\n",
        "a.rs": "use crate::b::B;\npub struct A;\n",
        "b.rs": "pub struct B;\n// use crate::a::A;\n/* crate::a::A /* nested */ crate::a::A */\n"
                "/// crate::a::A\nconst S: &str = \"crate::a::A \\\" crate::a::A\";\n"
                "const R: &str = r#\"use crate::a::A; \"# ;\nconst C: char = '\"';\n"
                "const Q: char = '\\'';\nfn f<'a>(x: &'a str) -> &'a str { let _ = b'\"'; x }\n"})
    check("comments, strings and char literals are not edges", edges == {("a", "b")} and cycles == [])
    return 1 if failed else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", nargs="?", metavar="CRATE_SRC_DIR", help="the crate's sources, e.g. server/src")
    ap.add_argument("--root-module", action="append", metavar="PATH",
                    help="a crate root file, relative to CRATE_SRC_DIR (default: lib.rs and/or main.rs)")
    ap.add_argument("--dot", metavar="FILE", help="write the graph in Graphviz dot to FILE")
    ap.add_argument("--edges", action="store_true", help="print every edge, for debugging")
    ap.add_argument("--self-test", action="store_true", help="run the script's own tests")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.src or not os.path.isdir(args.src):
        ap.error(f"not a directory: {args.src}" if args.src else "CRATE_SRC_DIR is required")
    roots = [r for r in args.root_module or ("lib.rs", "main.rs") if os.path.isfile(os.path.join(args.src, r))]
    if not roots or len(roots) < len(args.root_module or ()):
        ap.error(f"no crate root {' or '.join(args.root_module or ('lib.rs', 'main.rs'))} in {args.src}")
    return run(args.src, roots, args.dot, args.edges)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
