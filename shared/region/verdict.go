package region

// Verdict is the region-health breaker's answer for one region: whether
// to try it now. It lives here, with the region names, because both the
// allocation (which asks) and the breaker (which answers) speak of it, and
// neither domain should import the other for a type.
type Verdict struct {
	Try    bool
	Reason string // why it is skipped, or that it is a half-open probe
	// Known: the region is one the deployment knows (it has a health
	// record), so it may name a metric dimension.
	Known bool
}
