// Package doccheck checks the project's Markdown pages: every relative link
// names a file that exists (and, with a #fragment into a Markdown page, a
// heading or anchor of it), and every `make TARGET` the pages show in code
// names a target the Makefile has. Links to other sites are not followed.
// It also reads the string literals of the Go code, where alarm
// descriptions, suppression reasons and errors point readers at a page as
// docs/<page>.md#anchor, and checks those pointers the same way.
package doccheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Problem is one broken reference, at a line of a page.
type Problem struct {
	// File is the page's path relative to the checked root, with slashes.
	File string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Page is a Markdown page read for checking.
type Page struct {
	// Path is relative to the root, with slashes.
	Path string
	// Links are the page's link targets outside code, as written.
	Links []Ref
	// Code holds each code span and each line of a code block.
	Code []Ref
	// Anchors are the fragments the page defines: GitHub's heading slugs
	// and explicit id or name attributes.
	Anchors map[string]bool
}

// Ref is a piece of text at a line.
type Ref struct {
	Line int
	Text string
}

var (
	fence       = regexp.MustCompile("^\\s{0,3}(`{3,}|~{3,})")
	heading     = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLink  = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef      = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?([^\s>]+)>?`)
	htmlAnchor  = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:id|name)="([^"]+)"`)
	htmlHref    = regexp.MustCompile(`<a\s[^>]*href="([^"]+)"`)
	scheme      = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	linkInTitle = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	targetName  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.%/-]*$`)
	// goDocRef is a pointer into docs/ inside a Go string: a page, and
	// optionally one of its anchors.
	goDocRef = regexp.MustCompile(`\bdocs/[A-Za-z0-9_.-]+\.md(?:#[\p{L}\p{N}_-]+)?`)
)

// Parse reads a Markdown page: its links, its code and its anchors.
func Parse(pagePath string, doc []byte) *Page {
	p := &Page{Path: pagePath, Anchors: map[string]bool{}}
	seen := map[string]int{}
	var open string // the fence that opened the current code block
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case open == "":
				open = m[1]
				continue
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(line) == m[1]:
				open = ""
				continue
			}
		}
		if open != "" {
			p.Code = append(p.Code, Ref{n, line})
			continue
		}
		masked, spans := maskCode(line)
		for _, s := range spans {
			p.Code = append(p.Code, Ref{n, s})
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := Slug(m[2])
			if k, dup := seen[slug]; dup {
				seen[slug] = k + 1
				slug += "-" + strconv.Itoa(k+1)
			} else {
				seen[slug] = 0
			}
			p.Anchors[slug] = true
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(masked, -1) {
			p.Anchors[m[1]] = true
		}
		for _, m := range inlineLink.FindAllStringSubmatch(masked, -1) {
			p.Links = append(p.Links, Ref{n, m[1]})
		}
		for _, m := range htmlHref.FindAllStringSubmatch(masked, -1) {
			p.Links = append(p.Links, Ref{n, m[1]})
		}
		if m := refDef.FindStringSubmatch(masked); m != nil {
			p.Links = append(p.Links, Ref{n, m[1]})
		}
	}
	return p
}

// maskCode replaces each code span of a line with x's of the same length,
// so that link syntax inside code is not read as a link but a link whose
// text holds code still is, and returns the spans' contents.
func maskCode(line string) (string, []string) {
	b := []byte(line)
	var spans []string
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		ticks := string(b[i:j])
		end := strings.Index(string(b[j:]), ticks)
		if end < 0 {
			i = j
			continue
		}
		end += j
		spans = append(spans, strings.TrimSpace(string(b[j:end])))
		for k := j; k < end; k++ {
			b[k] = 'x'
		}
		i = end + len(ticks)
	}
	return string(b), spans
}

// Slug is the anchor GitHub gives a heading: its text without markup,
// lower-cased, with every character but letters, digits, spaces, hyphens
// and underscores dropped and each space turned into a hyphen.
func Slug(title string) string {
	title = linkInTitle.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Checker checks pages under a root against the files there and a set of
// make targets.
type Checker struct {
	Root    string
	Targets map[string]bool
	pages   map[string]*Page
}

// Check reads the pages (paths relative to the root) and returns every
// problem found, in page order.
func (c *Checker) Check(pages []string) ([]Problem, error) {
	c.pages = map[string]*Page{}
	var out []Problem
	for _, rel := range pages {
		p, err := c.page(rel)
		if err != nil {
			return nil, err
		}
		for _, l := range p.Links {
			if msg := c.checkLink(p, l.Text); msg != "" {
				out = append(out, Problem{p.Path, l.Line, msg})
			}
		}
		for _, code := range p.Code {
			for _, t := range MakeTargets(code.Text) {
				if !c.Targets[t] {
					out = append(out, Problem{p.Path, code.Line, fmt.Sprintf("make %s: the Makefile has no target %q", t, t)})
				}
			}
		}
	}
	return out, nil
}

func (c *Checker) page(rel string) (*Page, error) {
	rel = path.Clean(filepath.ToSlash(rel))
	if p, ok := c.pages[rel]; ok {
		return p, nil
	}
	doc, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	p := Parse(rel, doc)
	c.pages[rel] = p
	return p, nil
}

// checkLink returns what is wrong with a link of page p, or "".
func (c *Checker) checkLink(p *Page, target string) string {
	if target == "" {
		return "empty link"
	}
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return "" // another site: not followed
	}
	file, frag, _ := strings.Cut(target, "#")
	file, err := url.PathUnescape(file)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	dest := p.Path
	if file != "" {
		if strings.HasPrefix(file, "/") {
			dest = path.Clean(strings.TrimPrefix(file, "/"))
		} else {
			dest = path.Join(path.Dir(p.Path), file)
		}
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return fmt.Sprintf("link %q leaves the repository", target)
		}
		info, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(dest)))
		if err != nil {
			return fmt.Sprintf("link %q: no file %s", target, dest)
		}
		if info.IsDir() {
			if frag != "" {
				return fmt.Sprintf("link %q: %s is a directory, it has no anchors", target, dest)
			}
			return ""
		}
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return "" // line anchors of source files are GitHub's own
	}
	q, err := c.page(dest)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	if !q.Anchors[strings.ToLower(frag)] && !q.Anchors[frag] {
		return fmt.Sprintf("link %q: %s has no heading or anchor %q", target, dest, frag)
	}
	return ""
}

// GoFiles lists the Go source files under root, relative to it with
// slashes: every .go file but tests, outside the directories the go command
// ignores (testdata, and names starting with . or _). Tests are left out:
// they repeat the pointers of the code they check, and build page trees of
// their own for the checker.
func GoFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if file != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, err := filepath.Rel(root, file)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// CheckGo reads the string literals of Go files (paths relative to the
// root) and returns a problem for every docs/<page>.md or
// docs/<page>.md#anchor in one whose page, or anchor of the page, does not
// exist.
func (c *Checker) CheckGo(files []string) ([]Problem, error) {
	if c.pages == nil {
		c.pages = map[string]*Page{}
	}
	var out []Problem
	for _, rel := range files {
		rel = path.Clean(filepath.ToSlash(rel))
		src, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		var sc scanner.Scanner
		var bad error
		sc.Init(fset.AddFile(rel, -1, len(src)), src, func(pos token.Position, msg string) {
			bad = errors.Join(bad, fmt.Errorf("%s: %s", pos, msg))
		}, 0)
		for {
			pos, tok, lit := sc.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING {
				continue
			}
			text, err := strconv.Unquote(lit)
			if err != nil {
				continue // the scanner reported it
			}
			for _, ref := range goDocRef.FindAllString(text, -1) {
				// A pointer names the page from the repository's root.
				if msg := c.checkLink(&Page{Path: rel}, "/"+ref); msg != "" {
					out = append(out, Problem{rel, fset.Position(pos).Line, strings.Replace(msg, `link "/`+ref+`"`, fmt.Sprintf("string %q", ref), 1)})
				}
			}
		}
		if bad != nil {
			return nil, fmt.Errorf("read %s: %w", rel, bad)
		}
	}
	return out, nil
}

// MakeTargets returns the targets of every make command in a piece of
// shell: the words after `make` that are neither options nor variable
// assignments, up to the end of the command. Placeholders (words with
// characters no target name has, such as <name>) are not targets.
func MakeTargets(code string) []string {
	var out []string
	words := shellWords(code)
	for i := 0; i < len(words); i++ {
		if words[i] != "make" || (i > 0 && !commandStart(words[i-1])) {
			continue
		}
		for j := i + 1; j < len(words); j++ {
			w := words[j]
			if isSeparator(w) || strings.HasPrefix(w, "#") {
				break
			}
			switch {
			case w == "-C" || w == "-f" || w == "-I" || w == "-o" || w == "-W":
				j++
			case strings.HasPrefix(w, "-"), strings.Contains(w, "="):
			case targetName.MatchString(w):
				out = append(out, w)
			}
		}
	}
	return out
}

// commandStart reports whether the word before `make` lets it start a
// command: a separator, or a variable assignment (FOO=1 make dev).
func commandStart(prev string) bool {
	return isSeparator(prev) || strings.Contains(prev, "=") || prev == "$(" || prev == "then" || prev == "do"
}

func isSeparator(w string) bool {
	switch w {
	case "&&", "||", ";", "|", "(", ")", "&", "$(":
		return true
	}
	return false
}

// shellWords splits shell text into words, keeping quoted text in one word
// and separators (&& || ; | ( ) &) apart.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\'':
			end := strings.IndexByte(s[i+1:], ch)
			if end < 0 {
				end = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case ch == ' ' || ch == '\t':
			flush()
		case ch == '$' && i+1 < len(s) && s[i+1] == '(':
			flush()
			out = append(out, "$(")
			i++
		case ch == '&' || ch == '|' || ch == ';' || ch == '(' || ch == ')':
			flush()
			if (ch == '&' || ch == '|') && i+1 < len(s) && s[i+1] == ch {
				out = append(out, string([]byte{ch, ch}))
				i++
			} else {
				out = append(out, string(ch))
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return out
}

// MakefileTargets lists the targets make knows in dir: the rules of its
// Makefile with every variable and pattern expanded, as `make -pRrq`
// prints its database.
func MakefileTargets(dir string) (map[string]bool, error) {
	cmd := exec.Command("make", "-pRrq", "-f", "Makefile", "doccheck-no-such-target")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("make -pRrq in %s: %w", dir, err)
	}
	targets := map[string]bool{}
	prev := ""
	for line := range strings.SplitSeq(string(out), "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && prev != "# Not a target:" && !strings.HasPrefix(line, "#") &&
			!strings.HasPrefix(line, "\t") && !strings.Contains(name, "=") && !strings.HasPrefix(line[len(name):], ":=") &&
			targetName.MatchString(name) && !strings.HasPrefix(name, ".") {
			targets[name] = true
		}
		prev = line
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("make -pRrq in %s printed no targets", dir)
	}
	delete(targets, "Makefile")
	return targets, nil
}

// Sorted returns a set's members in order.
func Sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
