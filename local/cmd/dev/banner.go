package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// bannerText says what runs where, so the stack can be used without
// reading local/dev.yaml first, and walks through the API: allocate, end,
// rooms, fallback, a placement that waits for a drained region, FlexMatch.
var bannerText = template.Must(template.New("banner").Funcs(template.FuncMap{
	"values": func(m map[string]string) string { return strings.Join(slices.Sorted(maps.Values(m)), ", ") },
	"drain": func(spec string) string {
		d, err := stack.ParseDrain(spec)
		if err != nil {
			return spec + ": " + err.Error()
		}
		return d.String()
	},
	"regions": allocatorRegions,
}).Parse(`
=== GameFabric allocation service, running locally ===

Dashboard           {{.Dashboard}}   (regions, game servers, game instances, events; allocate and end games)
HTTP API            {{.S.APIURL}}   (NO IAM auth locally; deployed, the allocation routes need SigV4)
{{range .S.Routes}}  {{printf "%-7s %-45s" .Method .Path}} -> {{.FunctionLogicalID}}
{{end}}{{range .S.FunctionURLs}}function URL        {{.URL}}   ({{.LogicalID}}: every path and method -> {{.FunctionLogicalID}}; AuthType {{.AuthType}})
{{end}}{{with .S.GameLiftAPI}}GameLift API        {{.URL}}   (StartGameSessionPlacement, DescribeGameSessionPlacement, StopGameSessionPlacement; SigV4 for gamelift in {{.Region}})
  key pair          {{.AccessKeyID}} / {{.SecretAccessKey}}   (GameLiftApiKeys in moto's Secrets Manager)
{{end}}game servers        link back to {{.S.GameServerURL}}   (their pragmaBackendAddress: link, heartbeat, end)
{{range .S.Schedules}}schedule            {{printf "%-18s" .Expression}} -> {{.FunctionLogicalID}}
{{end}}{{range $i, $a := .S.Allocators}}Allocator {{printf "%-9s" .Name}} {{.URL}}   allocate: {{.AllocateURL}}   registry: {{.RegistryURL}}
  Regions           {{regions $a (eq $i 0)}}
  rate limit        {{if gt .QPS 0.0}}{{.QPS}} qps, burst {{.Burst}}{{else}}none{{end}}; callback Authorization: {{if eq .CallbackAuth "bearer"}}Bearer {{end}}<token>
{{end}}{{with .S.Agones}}Agones allocator    {{.Allocator.URL}}/gameserverallocation   (mutual TLS, a CA made for this run) serves {{.Region}}{{with .RoomsCounter}}, rooms on the Counter {{.}}{{end}}
  game servers      each with its own Agones SDK server; the payload in their annotations (ALLOC_PAYLOAD_ANNOTATION=payload-)
{{end}}Ping Service        {{.S.Ping.URL}}   (its own tokens; discovers through {{range $i, $a := .S.Allocators}}{{if $i}}, {{end}}{{.Name}}{{end}})
DynamoDB Local      {{.S.DynamoDB}}   tables: {{values .S.Tables}}
Secrets Manager     {{.S.SecretsManager}}   (moto; also SQS and EventBridge)
{{range $id, $name := .S.EventBuses}}event bus           {{$name}} ({{$id}}); every event it gets is printed as an "event ..." line
{{end}}{{range .S.Mappings}}stream              {{.}}
{{end}}{{range .S.QueueSources}}sqs event source    {{.}}
{{end}}{{range .S.Rules}}rule                {{.LogicalID}} on {{or .EventBusName "the default bus"}} -> {{range $i, $t := .Targets}}{{if $i}}, {{end}}{{.FunctionLogicalID}}{{end}}{{if not .Enabled}} (disabled){{end}} (asynchronous: retried, then the on-failure destination)
{{end}}{{with .S.GameLiftURL}}GameLift            {{.}}   (stand-in for DescribeMatchmaking: the matches' tickets)
{{end}}{{range $id, $url := .S.Queues}}queue               {{printf "%-26s" $id}} {{$url}}
{{end}}{{range .S.Allocators}}  Allocator {{printf "%-7s" .Name}} {{.SecretARN}}
{{end}}{{with .S.Agones}}  Agones client     {{.SecretARN}}   ({"tls.crt", "tls.key", "ca.crt"})
{{end}}  Ping Service      {{.S.Ping.SecretARN}}
game servers        {{.Fleet}}
{{range .Cfg.GameFabric.Drain}}drain               {{drain .}}
{{end}}
Try:
  curl -s -X POST {{.S.APIURL}}/v1/allocations -H 'content-type: application/json' \
       -d '{"gameInstanceId":"gi-1","desiredRegion":"us-west","gameServerVersion":"prag::sample-game-armada-set"}'
  curl -s {{.S.APIURL}}/v1/allocations/gi-1
  curl -s {{.S.APIURL}}/v1/regions

{{if .S.Mappings}}Each allocation, link, end and region change then shows up below as "event <detail-type> ..." (EventsFunction via the DynamoDB streams).
{{end}}Then end the game like a player would: make play ID=gi-1 (IWON to the game port of the allocation's "server"), or End on the dashboard.
{{with .RoomRegions}}Servers in {{.}} host several games at once: allocate gi-2 there too and it takes a room on gi-1's server ("placement": "room").
{{end}}{{with index .Cfg.Parameters "FallbackRegion"}}A region whose servers are all taken falls back to {{.}}, across Allocators ("fallbackUsed": true).
{{end}}Watch a placement wait: Drain 20 s on the dashboard's {{.WaitRegion}} row (or make dev DRAIN={{.WaitRegion}}:20s/1m), then allocate there
with "queueTimeoutSeconds":60,"dedicated":true: 202 Queued ("queuedUntil"), then Allocated when the region refills.
{{if .S.Rules}}Play FlexMatch: make match PLAYERS=4 (or Play a match on the dashboard) puts a MatchmakingSucceeded event on the default bus;
MatchmakingFunction places the match (its game instance is the matchId) and GameFabricMatchmakingSucceeded follows with its server.
{{end}}{{if .S.GameLiftAPI}}Place a GameLift game session with the AWS CLI: make gamelift-place (start-game-session-placement in the queue "arena",
then describe-game-session-placement until it is FULFILLED, with the server's IpAddress and Port).
{{end}}Ctrl-C stops everything.
`))

func banner(s *stack.Stack, cfg stack.Config, dashboardURL string) string {
	var fleet, rooms []string
	for region, procs := range cfg.Fleet.Regions {
		n, most := 0, 0
		for _, p := range procs {
			n += p.ConcurrentExecutions
			most = max(most, p.Rooms)
		}
		a, _ := s.AllocatorFor(region)
		line := fmt.Sprintf("%s: %d (Allocator %s", region, n, a.Name)
		if s.Agones != nil && region == s.Agones.Region {
			line = fmt.Sprintf("%s: %d (Agones", region, n)
		}
		if most >= 2 {
			line += fmt.Sprintf(", %d rooms each", most)
			rooms = append(rooms, region)
		}
		fleet = append(fleet, line+")")
	}
	slices.Sort(fleet)
	slices.Sort(rooms)
	// The Region drained to show a placement wait: the one dev.yaml drains,
	// else the fallback (a plan's last resort).
	wait := cmp.Or(cfg.Parameters["FallbackRegion"], "us-west")
	for _, spec := range slices.Backward(cfg.GameFabric.Drain) {
		if d, err := stack.ParseDrain(spec); err == nil {
			wait = d.Region
		}
	}
	var b strings.Builder
	err := bannerText.Execute(&b, map[string]any{"S": s, "Cfg": cfg, "Dashboard": dashboardURL,
		"Fleet": strings.Join(fleet, ", "), "RoomRegions": strings.Join(rooms, ", "), "WaitRegion": wait})
	if err != nil {
		return fmt.Sprintf("the banner: %v\n", err)
	}
	return b.String()
}

// allocatorRegions lists what an Allocator serves: "us-west as dev-us-west".
func allocatorRegions(a *stack.Allocator, first bool) string {
	var out []string
	for region, s := range a.Regions {
		out = append(out, fmt.Sprintf("%s as %q", region, s))
	}
	slices.Sort(out)
	if first {
		out = append(out, "any other Region under its own name")
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
