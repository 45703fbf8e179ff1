// Package region is the one rule for our region names: what callers may
// request, what GAMEFABRIC_ALLOCATORS may list and what the ping cache may
// serve. A name accepted in one place is accepted in all of them.
package region

import "strings"

// MaxName is the longest region name.
const MaxName = 64

// Rule says in words what Valid checks, for error messages.
const Rule = "at most 64 lowercase letters, digits and . _ -, starting with a letter or digit"

// Normalize is how names are compared: region names are case-insensitive
// for callers.
func Normalize(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Valid reports whether name (already normalized) is a region name.
// It checks ^[a-z0-9][a-z0-9._-]*$ with a loop: a package-level regexp
// would be compiled at every cold start of every function.
func Valid(name string) bool {
	if name == "" || len(name) > MaxName || !lowerAlnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !lowerAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
