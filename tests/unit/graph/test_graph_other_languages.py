"""JavaScript, TypeScript and Go: definitions and imports through their query files."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import index
from tests.unit.graph.graph_helpers import put


def test_javascript_typescript_go(tmp_path: Path) -> None:
    put(tmp_path, "web/util.js", """\
        export function slug(s) { return s.toLowerCase(); }
        export const LIMIT = 3;
        """)
    put(tmp_path, "web/app.js", """\
        import React from 'react';
        import { slug as mk } from './util';
        class Page extends React.Component {
          render() { return mk('A'); }
        }
        function main() { return new Page(); }
        """)
    put(tmp_path, "web/types.ts", """\
        import { slug } from './util';
        export interface Named { name: string }
        export class Person implements Named {
          name = 'x';
          greet(): string { return slug(this.name); }
        }
        export type Id = string;
        """)
    put(tmp_path, "go/util/util.go", """\
        package util

        func Helper() int { return 1 }
        """)
    put(tmp_path, "go/main.go", """\
        package main

        import (
            "fmt"
            u "example.com/proj/go/util"
        )

        type Server struct{ n int }

        func (s *Server) Run() int { return u.Helper() }

        func main() { fmt.Println(helper2()) }

        func helper2() int { return 2 }
        """)
    g = index(tmp_path)
    assert {"web/util.js::slug", "web/util.js::LIMIT", "web/app.js::Page",
            "web/app.js::Page.render", "web/app.js::main"} <= set(g.symbols)
    assert g.symbol("web/app.js::Page.render").kind == "method"
    assert g.symbol("web/app.js::Page").language == "javascript"
    assert {"web/types.ts::Named", "web/types.ts::Person", "web/types.ts::Person.greet",
            "web/types.ts::Id"} <= set(g.symbols)
    assert g.symbol("web/types.ts::Person").language == "typescript"
    assert {"go/main.go::Server", "go/main.go::Server.Run", "go/main.go::main",
            "go/util/util.go::Helper"} <= set(g.symbols)
    assert g.symbol("go/main.go::Server.Run").parent == "go/main.go::Server"
    assert g.symbol("go/main.go::Server.Run").kind == "method"

    refs = {(r.src, r.name): r.target for r in g.references}
    assert refs["web/app.js::Page.render", "mk"] == "web/util.js::slug"
    assert refs["web/app.js::<module>", "react"] == "react"
    assert refs["web/app.js::main", "Page"] == "web/app.js::Page"
    assert refs["web/types.ts::Person.greet", "slug"] == "web/util.js::slug"
    assert refs["go/main.go::Server.Run", "u.Helper"] == "go/util/util.go::Helper"
    assert refs["go/main.go::main", "fmt.Println"] == "fmt.Println"
    assert refs["go/main.go::main", "helper2"] == "go/main.go::helper2"
    assert "imports" in g.graph.edges["web/app.js::<module>", "web/util.js::slug"]["kinds"]

    only_py = index(tmp_path, languages={"python"})
    assert not only_py.files


def test_only_python_names_are_nfkc_normalised(tmp_path: Path) -> None:
    """Python binds `ﬁx` as `fix` (NFKC); JavaScript keeps identifiers as written."""
    put(tmp_path, "a.js", "function \ufb01x() { return 1; }\n")
    put(tmp_path, "a.py", "def \ufb01x():\n    return 1\n")
    graph = index(tmp_path)
    assert "a.js::\ufb01x" in graph.symbols
    assert "a.py::fix" in graph.symbols
