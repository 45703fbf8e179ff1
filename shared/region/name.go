// Package region is the one rule for our region names: what callers may
// request, what GAMEFABRIC_ALLOCATORS may list and what the ping cache may
// serve. A name accepted in one place is accepted in all of them.
package region

import (
	"regexp"
	"strings"
)

// MaxName is the longest region name.
const MaxName = 64

// Rule says in words what Valid checks, for error messages.
const Rule = "at most 64 lowercase letters, digits and . _ -, starting with a letter or digit"

var pattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Normalize is how names are compared: region names are case-insensitive
// for callers.
func Normalize(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Valid reports whether name (already normalized) is a region name.
func Valid(name string) bool { return len(name) <= MaxName && pattern.MatchString(name) }
