package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoRegexpCompiledAtInit: every Lambda function imports this package,
// so its package initialisation runs at every cold start. Compiling a
// regular expression there cost 0.5 to 2.3 ms (bounded repetitions
// expand); compile on first use instead, or check with a loop.
func TestNoRegexpCompiledAtInit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			ast.Inspect(gen, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // runs when called, not at init
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "regexp" {
							t.Errorf("%s: package-level regexp.%s runs at every cold start", fset.Position(n.Pos()), sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
	}
}
