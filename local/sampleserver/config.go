package main

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// Config is the server's configuration. The ALLOC_* names are the
// allocation sidecar's, so the same environment drives either setup.
type Config struct {
	RegistryURL     string            // ALLOC_URL, ends in /servers
	Region          string            // ALLOC_REGION
	RegistryToken   string            // ALLOC_TOKEN; a secret, never logged
	Priority        int               // ALLOC_PRIORITY
	Attributes      map[string]string // ALLOC_ATTRIBUTES, k=v,k=v
	RequiredAttrs   []string          // ALLOC_REQUIRED_ATTRS, keys
	PayloadFile     string            // ALLOC_PAYLOAD_FILE, absolute
	RegistryTimeout time.Duration     // ALLOC_TIMEOUT seconds; keep-alive every third

	Host              string        // HOST: bound and advertised
	GamePort          int           // GAME_PORT, 0 picks a free port
	AllocPort         int           // ALLOC_PORT, 0 picks a free port
	ServerName        string        // SERVER_NAME, "" derives one from region and game port
	HealthPeriod      time.Duration // HEALTH_PERIOD, the backend's
	HeartbeatInterval time.Duration // HEARTBEAT_INTERVAL; 0 = the backend's advice (the SDK's default)
	MaxGameLength     time.Duration // MAX_GAME_LENGTH, counted from each session's start
	IdleShutdown      time.Duration // IDLE_SHUTDOWN, 0 waits for an allocation forever
	// Rooms is how many sessions the server hosts at once (ROOMS, 2-256),
	// offered when its first session links; 0 (ROOMS unset or 1) is a
	// dedicated server.
	Rooms       int
	SessionPort int // SESSION_PORT, the session callback's; 0 picks a free port

	// Agones: the payload is in the GameServer's annotations, read through
	// the Agones SDK server (ALLOC_PAYLOAD_ANNOTATION, AGONES_SDK_HTTP_PORT);
	// nil on GameFabric.
	Agones *gameserver.AgonesSDK

	Logs io.Writer // not from the environment; nil means os.Stderr
}

// configFromEnv reads and validates everything at once, so a bad
// deployment fails at start with one error naming every problem.
func configFromEnv(getenv func(string) string) (Config, error) {
	p := envParser{getenv: getenv}
	sdk, err := gameserver.AgonesSDKFromEnv(getenv)
	if err != nil {
		p.fail("%v", err)
	}
	// On Agones the SDK server stands for the registry and the sidecar.
	need := p.required
	if sdk != nil {
		need = p.get
	}
	c := Config{
		Agones:            sdk,
		RegistryURL:       p.registryURL("ALLOC_URL", need),
		Region:            need("ALLOC_REGION"),
		RegistryToken:     need("ALLOC_TOKEN"),
		Priority:          p.int("ALLOC_PRIORITY", 0, -1<<31, 1<<31-1),
		Attributes:        p.attributes("ALLOC_ATTRIBUTES"),
		RequiredAttrs:     p.list("ALLOC_REQUIRED_ATTRS"),
		PayloadFile:       p.payloadFile("ALLOC_PAYLOAD_FILE"),
		RegistryTimeout:   time.Duration(p.int("ALLOC_TIMEOUT", 30, 1, 3600)) * time.Second,
		Host:              p.host("HOST"),
		GamePort:          p.int("GAME_PORT", 0, 0, 65535),
		AllocPort:         p.int("ALLOC_PORT", 0, 0, 65535),
		ServerName:        p.serverName("SERVER_NAME"),
		HealthPeriod:      p.duration("HEALTH_PERIOD", gameserver.DefaultHealthPeriod, false),
		HeartbeatInterval: p.duration("HEARTBEAT_INTERVAL", 0, false),
		MaxGameLength:     p.duration("MAX_GAME_LENGTH", 30*time.Minute, false),
		IdleShutdown:      p.duration("IDLE_SHUTDOWN", 0, true),
		Rooms:             p.rooms("ROOMS"),
		SessionPort:       p.int("SESSION_PORT", 0, 0, 65535),
	}
	// A required key the server does not carry itself could never be
	// matched: requested attributes must be a subset of the server's.
	for _, k := range c.RequiredAttrs {
		if _, ok := c.Attributes[k]; !ok {
			p.fail("ALLOC_REQUIRED_ATTRS: %q is not a key of ALLOC_ATTRIBUTES, so no request could match", k)
		}
	}
	// Unset (0), the SDK heartbeats at the interval the backend's answers
	// name: HEALTH_PERIOD behind the function URL, a third of it behind the
	// HTTP API.
	if c.HeartbeatInterval > c.HealthPeriod {
		p.fail("HEARTBEAT_INTERVAL (%s) must be at most HEALTH_PERIOD (%s), or the backend marks the game Unhealthy", c.HeartbeatInterval, c.HealthPeriod)
	}
	if c.GamePort != 0 && c.GamePort == c.AllocPort {
		p.fail("GAME_PORT and ALLOC_PORT must differ")
	}
	if c.SessionPort != 0 && (c.SessionPort == c.GamePort || c.SessionPort == c.AllocPort) {
		p.fail("SESSION_PORT must differ from GAME_PORT and ALLOC_PORT")
	}
	if len(p.problems) > 0 {
		return Config{}, fmt.Errorf("invalid configuration: %s", strings.Join(p.problems, "; "))
	}
	return c, nil
}

// envParser collects problems instead of stopping at the first.
type envParser struct {
	getenv   func(string) string
	problems []string
}

func (p *envParser) fail(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

func (p *envParser) get(name string) string { return strings.TrimSpace(p.getenv(name)) }

func (p *envParser) required(name string) string {
	v := p.get(name)
	if v == "" {
		p.fail("%s is required", name)
	}
	return v
}

func (p *envParser) int(name string, def, lo, hi int) int {
	v := p.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail("%s must be an integer from %d to %d, got %q", name, lo, hi, v)
		return def
	}
	return n
}

// rooms reads ROOMS: 1 is a dedicated server, as is leaving it unset.
func (p *envParser) rooms(name string) int {
	v := p.get(name)
	if v == "" || v == "1" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 || n > gameserver.MaxRooms {
		p.fail("%s must be an integer from 2 to %d (sessions hosted at once), or 1 or unset for a dedicated server, got %q",
			name, gameserver.MaxRooms, v)
		return 0
	}
	return n
}

func (p *envParser) duration(name string, def time.Duration, zeroOK bool) time.Duration {
	v := p.get(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d == 0 && !zeroOK) {
		p.fail("%s must be a positive duration such as 10s or 30m, got %q", name, v)
		return def
	}
	return d
}

func (p *envParser) registryURL(name string, need func(string) string) string {
	v := strings.TrimSuffix(need(name), "/")
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(u.Path, "/servers") ||
		u.RawQuery != "" || u.Fragment != "" {
		p.fail("%s must be an http(s) URL ending in /servers, got %q", name, v)
	}
	return v
}

func (p *envParser) list(name string) []string {
	var out []string
	for item := range strings.SplitSeq(p.get(name), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func (p *envParser) attributes(name string) map[string]string {
	attrs := map[string]string{}
	for _, item := range p.list(name) {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		_, dup := attrs[k]
		switch {
		case !ok || k == "":
			p.fail("%s: %q is not key=value", name, item)
		case dup:
			p.fail("%s: key %q appears twice", name, k)
		default:
			attrs[k] = strings.TrimSpace(v)
		}
	}
	return attrs
}

func (p *envParser) payloadFile(name string) string {
	abs, err := filepath.Abs(cmp.Or(p.get(name), "payload.json"))
	if err != nil {
		p.fail("%s: %v", name, err)
	}
	// Checked now rather than at allocation, when failing would waste the
	// game instance the allocator just handed us.
	if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
		p.fail("%s: directory %s does not exist", name, filepath.Dir(abs))
	}
	return abs
}

func (p *envParser) host(name string) string {
	v := cmp.Or(p.get(name), "127.0.0.1")
	// The host is advertised to the registry and to players, so it must
	// be an address they can reach, not a wildcard.
	if ip := net.ParseIP(v); ip == nil || ip.IsUnspecified() {
		p.fail("%s must be a specific IP address, got %q", name, v)
	}
	return v
}

func (p *envParser) serverName(name string) string {
	v := p.get(name)
	// The name travels in the space-separated WELCOME line and the link
	// body (at most 255 characters there).
	if len(v) > 255 || strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		p.fail("%s must be at most 255 printable characters without spaces", name)
	}
	return v
}
