package gfemu

import (
	"cmp"
	"slices"
)

// Match returns the servers an allocation request may get, best first. A
// server matches when its region equals region exactly, it has every
// requested attribute with the same value, and the request carries every
// key the server listed as required. Lower priority numbers come first, ties
// go to the earliest RegisteredAt, and remaining ties keep input order.
// Match neither modifies nor retains servers.
func Match(servers []Server, region string, attrs map[string]string) []Server {
	out := slices.DeleteFunc(slices.Clone(servers), func(s Server) bool { return !matches(s, region, attrs) })
	slices.SortStableFunc(out, func(a, b Server) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), a.RegisteredAt.Compare(b.RegisteredAt))
	})
	return out
}

func matches(s Server, region string, attrs map[string]string) bool {
	if region == "" || s.Region != region {
		return false
	}
	for k, v := range attrs {
		if have, ok := s.Attributes[k]; !ok || have != v {
			return false
		}
	}
	for _, k := range s.RequiredAttributes {
		if _, ok := attrs[k]; !ok {
			return false
		}
	}
	return true
}
