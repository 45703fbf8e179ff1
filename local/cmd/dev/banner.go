package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// banner says what runs where, so the stack can be used without reading
// local/dev.yaml first.
func banner(s *stack.Stack, cfg stack.Config, dashboardURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n=== GameFabric allocation service, running locally ===\n\n")
	fmt.Fprintf(&b, "Dashboard           %s   (regions, game servers, game instances, events; allocate and end games)\n", dashboardURL)
	fmt.Fprintf(&b, "HTTP API            %s   (NO IAM auth locally; deployed, the allocation routes need SigV4)\n", s.APIURL)
	for _, r := range s.Routes {
		fmt.Fprintf(&b, "  %-7s %-45s -> %s\n", r.Method, r.Path, r.FunctionLogicalID)
	}
	for _, u := range s.FunctionURLs {
		fmt.Fprintf(&b, "function URL        %s   (%s: every path and method -> %s; AuthType %s)\n", u.URL, u.LogicalID, u.FunctionLogicalID, u.AuthType)
	}
	fmt.Fprintf(&b, "game servers        link back to %s   (their pragmaBackendAddress: link, heartbeat, end)\n", s.GameServerURL)
	for _, sch := range s.Schedules {
		fmt.Fprintf(&b, "schedule            %-18s -> %s\n", sch.Expression, sch.FunctionLogicalID)
	}
	var names []string
	for i, a := range s.Allocators {
		names = append(names, a.Name)
		fmt.Fprintf(&b, "Allocator %-9s %s   allocate: %s   registry: %s\n", a.Name, a.URL, a.AllocateURL(), a.RegistryURL())
		fmt.Fprintf(&b, "  Regions           %s\n", allocatorRegions(a, i == 0))
		fmt.Fprintf(&b, "  rate limit        %s; callback Authorization: %s\n", rateLimit(a), callbackAuth(a))
	}
	fmt.Fprintf(&b, "Ping Service        %s   (its own tokens; discovers through %s)\n", s.Ping.URL, strings.Join(names, ", "))
	fmt.Fprintf(&b, "DynamoDB Local      %s   tables: %s\n", s.DynamoDB, strings.Join(sortedValues(s.Tables), ", "))
	fmt.Fprintf(&b, "Secrets Manager     %s   (moto; also SQS and EventBridge)\n", s.SecretsManager)
	for logical, name := range s.EventBuses {
		fmt.Fprintf(&b, "event bus           %s (%s); every event it gets is printed as an \"event ...\" line\n", name, logical)
	}
	for _, m := range s.Mappings {
		fmt.Fprintf(&b, "stream              %s\n", m)
	}
	for _, m := range s.QueueSources {
		fmt.Fprintf(&b, "sqs event source    %s\n", m)
	}
	for _, r := range s.Rules {
		fmt.Fprintf(&b, "rule                %s\n", describeRule(s, r))
	}
	if s.GameLiftURL != "" {
		fmt.Fprintf(&b, "GameLift            %s   (stand-in for DescribeMatchmaking: the matches' tickets)\n", s.GameLiftURL)
	}
	for _, logical := range sortedKeys(s.Queues) {
		fmt.Fprintf(&b, "queue               %-26s %s\n", logical, s.Queues[logical])
	}
	for _, a := range s.Allocators {
		fmt.Fprintf(&b, "  Allocator %-7s %s\n", a.Name, a.SecretARN)
	}
	fmt.Fprintf(&b, "  Ping Service      %s\n", s.Ping.SecretARN)
	var regions []string
	for region, procs := range cfg.Fleet.Regions {
		n, rooms := 0, 0
		for _, p := range procs {
			n += p.ConcurrentExecutions
			rooms = max(rooms, p.Rooms)
		}
		a, _ := s.AllocatorFor(region)
		line := fmt.Sprintf("%s: %d (Allocator %s", region, n, a.Name)
		if rooms >= 2 {
			line += fmt.Sprintf(", %d rooms each", rooms)
		}
		regions = append(regions, line+")")
	}
	sort.Strings(regions)
	fmt.Fprintf(&b, "game servers        %s\n", strings.Join(regions, ", "))
	for _, d := range cfg.GameFabric.Drain {
		fmt.Fprintf(&b, "drain               %s\n", describeDrain(d))
	}
	b.WriteString("\n")
	try(&b, s, cfg)
	return b.String()
}

// try is the banner's walk through the API: allocate, end, rooms,
// fallback, and a placement that waits for a drained region.
func try(b *strings.Builder, s *stack.Stack, cfg stack.Config) {
	fmt.Fprintf(b, "Try:\n")
	fmt.Fprintf(b, "  curl -s -X POST %s/v1/allocations -H 'content-type: application/json' \\\n", s.APIURL)
	fmt.Fprintf(b, "       -d '{\"gameInstanceId\":\"gi-1\",\"desiredRegion\":\"us-west\",\"gameServerVersion\":\"prag::sample-game-armada-set\"}'\n")
	fmt.Fprintf(b, "  curl -s %s/v1/allocations/gi-1\n", s.APIURL)
	fmt.Fprintf(b, "  curl -s %s/v1/regions\n\n", s.APIURL)
	if len(s.Mappings) > 0 {
		fmt.Fprintf(b, "Each allocation, link, end and region change then shows up below as \"event <detail-type> ...\" (EventsFunction via the DynamoDB streams).\n")
	}
	fmt.Fprintf(b, "Then end the game like a player would: make play ID=gi-1 (IWON to the game port of the allocation's \"server\"), or End on the dashboard.\n")
	if roomy := roomRegions(cfg); len(roomy) > 0 {
		fmt.Fprintf(b, "Servers in %s host several games at once: allocate gi-2 there too and it takes a room on gi-1's server (\"placement\": \"room\").\n",
			strings.Join(roomy, ", "))
	}
	if fb := cfg.Parameters["FallbackRegion"]; fb != "" {
		fmt.Fprintf(b, "A region whose servers are all taken falls back to %s, across Allocators (\"fallbackUsed\": true).\n", fb)
	}
	region := waitRegion(cfg)
	fmt.Fprintf(b, "Watch a placement wait: Drain 20 s on the dashboard's %s row (or make dev DRAIN=%s:20s/1m), then allocate there\n", region, region)
	fmt.Fprintf(b, "with \"queueTimeoutSeconds\":60,\"dedicated\":true: 202 Queued (\"queuedUntil\"), then Allocated when the region refills.\n")
	if len(s.Rules) > 0 {
		fmt.Fprintf(b, "Play FlexMatch: make match PLAYERS=4 (or Play a match on the dashboard) puts a MatchmakingSucceeded event on the default bus;\n")
		fmt.Fprintf(b, "MatchmakingFunction places the match (its game instance is the matchId) and GameFabricMatchmakingSucceeded follows with its server.\n")
	}
	fmt.Fprintf(b, "Ctrl-C stops everything.\n")
}

// describeRule says where a rule listens and what it invokes:
// "MatchmakingRule on the default bus -> MatchmakingFunction".
func describeRule(s *stack.Stack, r template.EventRule) string {
	bus := "the default bus"
	if r.EventBusName != "" {
		bus = r.EventBusName
	}
	var targets []string
	for _, tg := range r.Targets {
		targets = append(targets, tg.FunctionLogicalID)
	}
	line := fmt.Sprintf("%s on %s -> %s", r.LogicalID, bus, strings.Join(targets, ", "))
	if !r.Enabled {
		line += " (disabled)"
	}
	return line + " (asynchronous: retried, then the on-failure destination)"
}

// waitRegion is the Region the banner drains to show a placement wait: the
// one dev.yaml drains, else the fallback (a plan's last resort).
func waitRegion(cfg stack.Config) string {
	for _, spec := range cfg.GameFabric.Drain {
		if d, err := stack.ParseDrain(spec); err == nil {
			return d.Region
		}
	}
	if fb := cfg.Parameters["FallbackRegion"]; fb != "" {
		return fb
	}
	return "us-west"
}

// describeDrain is a gamefabric.drain entry as the stack will run it.
func describeDrain(spec string) string {
	d, err := stack.ParseDrain(spec)
	if err != nil {
		return spec + ": " + err.Error()
	}
	return d.String()
}

// roomRegions are the regions whose game servers offer rooms.
func roomRegions(cfg stack.Config) []string {
	var out []string
	for region, procs := range cfg.Fleet.Regions {
		for _, p := range procs {
			if p.Rooms >= 2 {
				out = append(out, region)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// allocatorRegions lists what an Allocator serves: "us-west as dev-us-west".
func allocatorRegions(a *stack.Allocator, first bool) string {
	var out []string
	for region, s := range a.Regions {
		out = append(out, fmt.Sprintf("%s as %q", region, s))
	}
	sort.Strings(out)
	if first {
		out = append(out, "any other Region under its own name")
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func rateLimit(a *stack.Allocator) string {
	if a.QPS <= 0 {
		return "none"
	}
	return fmt.Sprintf("%g qps, burst %d", a.QPS, a.Burst)
}

func callbackAuth(a *stack.Allocator) string {
	if a.CallbackAuth == stack.CallbackAuthBearer {
		return "Bearer <token>"
	}
	return "<token>"
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
