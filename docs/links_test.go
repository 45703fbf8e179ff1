// Package docs holds no code: its test keeps README.md and the pages in this
// directory linked. The README is the way in, so it stays short and every
// page is one link away from it; a page moved or a heading renamed must not
// leave a link behind that GitHub would render dead.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is issue 26's bound: the README says what the service is,
// how to run and test it, the walkthrough, deploy and links; the rest is a
// page here.
const maxReadmeLines = 400

// root is the repository, seen from this directory.
const root = ".."

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// page is one Markdown file: the anchors its headings make and its links.
type page struct {
	anchors map[string]bool
	links   []string
	lines   int
}

// pages reads README.md and every docs/*.md, keyed by path from the root.
func pages(t *testing.T) map[string]page {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]page{}
	for _, name := range append([]string{filepath.Join(root, "README.md")}, names...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.ToSlash(rel)] = parse(string(b))
	}
	return out
}

// parse finds the headings and links outside code: fenced blocks and
// inline code spans are not Markdown a reader can follow.
func parse(text string) page {
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	var prose []string
	inFence := false
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	p.lines = len(lines)
	for _, line := range lines {
		if fence.MatchString(line) {
			inFence = !inFence
			prose = append(prose, "")
			continue
		}
		if inFence {
			prose = append(prose, "")
			continue
		}
		prose = append(prose, line)
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[2])
			// GitHub numbers a repeated heading's anchor: x, x-1, x-2.
			if n := seen[s]; n > 0 {
				seen[s]++
				s = fmt.Sprintf("%s-%d", s, n)
			} else {
				seen[s] = 1
			}
			p.anchors[s] = true
		}
	}
	// A link's text may run over a line break, so links are found in the
	// whole prose, not line by line.
	body := codeSpan.ReplaceAllString(strings.Join(prose, "\n"), "")
	for _, m := range inlineLink.FindAllStringSubmatch(body, -1) {
		p.links = append(p.links, m[2])
	}
	return p
}

// slug is GitHub's anchor for a heading: its text without Markdown, lower
// case, letters, digits, '-' and '_' kept, each space a '-', the rest gone.
func slug(h string) string {
	h = inlineLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"`POST /v1/allocations`":                          "post-v1allocations",
		"`GET /v1/allocations/{gameInstanceId}`":          "get-v1allocationsgameinstanceid",
		"The game server's side":                          "the-game-servers-side",
		"Rooms: several game instances per game server":   "rooms-several-game-instances-per-game-server",
		"6. Queued placements":                            "6-queued-placements",
		"Capacity back → `Allocated`":                     "capacity-back--allocated",
		"Game-server SDK (Go)":                            "game-server-sdk-go",
		"See [the API](api.md)":                           "see-the-api",
		"HEALTH_PERIOD and the_sweep":                     "health_period-and-the_sweep",
		"Events, alarms and the dashboard":                "events-alarms-and-the-dashboard",
		"Configuration: `local/dev.yaml`":                 "configuration-localdevyaml",
		"A game when servers hold 4 rooms (not the goal)": "a-game-when-servers-hold-4-rooms-not-the-goal",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestParseSkipsCodeAndNumbersRepeatedHeadings(t *testing.T) {
	p := parse("# A\n\n## A\n\n```sh\n# not a heading [x](gone.md)\n```\n\n" +
		"`[y](gone.md)` and [z\nz](b.md#c)\n")
	for _, a := range []string{"a", "a-1"} {
		if !p.anchors[a] {
			t.Errorf("anchor %q missing from %v", a, p.anchors)
		}
	}
	if p.anchors["not-a-heading"] {
		t.Error("a comment in a code block became a heading")
	}
	if len(p.links) != 1 || p.links[0] != "b.md#c" {
		t.Errorf("links = %q, want only b.md#c", p.links)
	}
}

// TestReadmeIsShort holds the README to what a newcomer reads first.
func TestReadmeIsShort(t *testing.T) {
	if n := pages(t)["README.md"].lines; n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move a section to a page in docs/ and link it", n, maxReadmeLines)
	}
}

// TestNoDeadLinks fails on a relative link to a file that is not there, or
// to a heading (file.md#anchor) that no heading of that file makes.
func TestNoDeadLinks(t *testing.T) {
	all := pages(t)
	for from, p := range all {
		for _, link := range p.links {
			if scheme.MatchString(link) {
				continue // http(s), mailto: not ours to check offline
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := from
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(from), path))
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					t.Errorf("%s: link %q: %s does not exist", from, link, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			tp, ok := all[target]
			if !ok {
				if strings.HasSuffix(target, ".md") {
					t.Errorf("%s: link %q: %s is not a page this test reads", from, link, target)
				}
				continue
			}
			if !tp.anchors[anchor] {
				t.Errorf("%s: link %q: no heading of %s makes the anchor #%s", from, link, target, anchor)
			}
		}
	}
}

// TestEveryPageIsLinkedFromTheReadme keeps each page in docs/ one link away
// from the README, so a page cannot be written and then lost.
func TestEveryPageIsLinkedFromTheReadme(t *testing.T) {
	all := pages(t)
	linked := map[string]bool{}
	for _, link := range all["README.md"].links {
		path, _, _ := strings.Cut(link, "#")
		linked[filepath.ToSlash(filepath.Clean(path))] = true
	}
	for name := range all {
		if name != "README.md" && !linked[name] {
			t.Errorf("README.md does not link %s", name)
		}
	}
}
