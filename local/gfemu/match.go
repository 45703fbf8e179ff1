package gfemu

import "sort"

// Match returns the servers an allocation request may get, best first. A
// server matches when its region equals region exactly, it has every
// requested attribute with the same value, and the request carries every
// key the server listed as required. Lower priority numbers come first, ties
// go to the earliest RegisteredAt, and remaining ties keep input order.
// Match neither modifies nor retains servers.
func Match(servers []Server, region string, attrs map[string]string) []Server {
	var out []Server
	for _, s := range servers {
		if matches(s, region, attrs) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority < out[j].Priority
		}
		return out[i].RegisteredAt.Before(out[j].RegisteredAt)
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
