package console

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// assetTypes are the content types of the files under assets/static.
var assetTypes = map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}

// serveAsset serves an embedded static file (stylesheet, script, icon).
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/assets/")
	typ, ok := assetTypes[path.Ext(name)]
	if !ok || strings.Contains(name, "/") || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(assets, "assets/static/"+name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// pages are the parsed templates, one set per page (the layout and the
// page's content).
type pages map[string]*template.Template

var pageNames = []string{"lanes", "lane", "events", "event", "actions", "replay", "reconcile", "error"}

func parsePages() (pages, error) {
	p := pages{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/parts.html", "assets/"+name+".html")
		if err != nil {
			return nil, err
		}
		p[name] = t
	}
	return p, nil
}
