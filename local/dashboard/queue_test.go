package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestViewOfQueue(t *testing.T) {
	until, next := time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 9, 0, time.UTC)
	q := &gameinstance.Queue{Until: until, NextAt: next, Ticket: "secret-ticket"}
	tests := []struct {
		name                string
		r                   gameinstance.Record
		wantUntil, wantNext time.Time
	}{
		{"never queued", gameinstance.Record{State: gameinstance.StateAllocated}, time.Time{}, time.Time{}},
		{"queued: its deadline and next attempt", gameinstance.Record{State: gameinstance.StateQueued, Queue: q}, until, next},
		{"the worker asking a region", gameinstance.Record{State: gameinstance.StateAllocating, Queue: q}, until, time.Time{}},
		{"placed after waiting: the deadline it had", gameinstance.Record{State: gameinstance.StateAllocated, Queue: q}, until, time.Time{}},
		{"cancelled", gameinstance.Record{State: gameinstance.StateFailed, Queue: q,
			Failure: &gameinstance.Failure{Code: gameinstance.CodePlacementCancelled}}, until, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := viewOf(tt.r)
			if !v.QueuedUntil.Equal(tt.wantUntil) || !v.NextAttemptAt.Equal(tt.wantNext) {
				t.Errorf("queuedUntil %v, nextAttemptAt %v; want %v, %v", v.QueuedUntil, v.NextAttemptAt, tt.wantUntil, tt.wantNext)
			}
		})
	}
}

// A Queued row as the page gets it: state, deadline, next attempt and the
// attempts so far, never the queue's ticket; and the drained region with
// the Drain buttons' period.
func TestStateShowsQueuedAndDrained(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	api := &fakeAPI{regions: `{"regions":[]}`}
	d := newDash(t, Sources{APIURL: api.start(t),
		Instances: func(context.Context) (instanceListing, error) {
			return instanceListing{Records: []gameinstance.Record{{GameInstanceID: "gi-q", State: gameinstance.StateQueued, CreatedAt: t0,
				Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west"},
				Queue:       &gameinstance.Queue{StartedAt: t0, Until: t0.Add(time.Minute), NextAt: t0.Add(5 * time.Second), Ticket: "secret-ticket"},
				Attempts:    []gameinstance.Attempt{{Region: "us-west", Status: 404}, {Region: "us-west", Status: 404, MaxPlayerLatencyMs: 80}}}}}, nil
		},
		Served: []Served{{Region: "us-west", Allocator: "us"}, {Region: "eu-central-1", Allocator: "eu"}},
		Drain:  func(string, time.Duration) (time.Time, error) { return time.Time{}, nil },
		DrainedUntil: func(region string) (time.Time, bool) {
			return t0.Add(20 * time.Second), region == "us-west"
		}})
	rec, _ := do(t, d, http.MethodGet, "/api/state", "")
	if strings.Contains(rec.Body.String(), "secret-ticket") {
		t.Fatal("the state shows the queue's ticket")
	}
	var st struct {
		DrainFor  int `json:"drainForSeconds"`
		Instances []struct {
			State         string `json:"state"`
			QueuedUntil   string `json:"queuedUntil"`
			NextAttemptAt string `json:"nextAttemptAt"`
			Attempts      []struct {
				MaxPlayerLatencyMs float64 `json:"maxPlayerLatencyMs"`
			} `json:"attempts"`
		} `json:"instances"`
		Regions []struct {
			Region       string `json:"region"`
			DrainedUntil string `json:"drainedUntil"`
		} `json:"regions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Instances) != 1 {
		t.Fatalf("instances %+v", st.Instances)
	}
	q := st.Instances[0]
	if q.State != "Queued" || q.QueuedUntil != "2026-01-02T03:05:05Z" || q.NextAttemptAt != "2026-01-02T03:04:10Z" ||
		len(q.Attempts) != 2 || q.Attempts[1].MaxPlayerLatencyMs != 80 {
		t.Errorf("the queued row = %+v", q)
	}
	got := fmt.Sprint(st.Regions)
	if st.DrainFor != 20 || got != "[{eu-central-1 } {us-west 2026-01-02T03:04:25Z}]" {
		t.Errorf("drainForSeconds %d, regions %s", st.DrainFor, got)
	}
	// Without a way to drain, the page gets no Drain buttons.
	_, doc := do(t, newDash(t, Sources{APIURL: api.start(t)}), http.MethodGet, "/api/state", "")
	if doc["drainForSeconds"] != float64(0) {
		t.Errorf("drainForSeconds %v without a Drain source", doc["drainForSeconds"])
	}
}

// The allocate form passes the queue timeout and dedicated on, and a 202
// reads as Queued until its deadline, not as a failure.
func TestAllocateQueued(t *testing.T) {
	api := &fakeAPI{allocate: func(b map[string]string) (int, string) {
		return http.StatusAccepted, fmt.Sprintf(`{"gameInstanceId":%q,"state":"Queued","queuedUntil":"2026-01-02T03:05:05Z","attempts":[{"region":"us-west","status":404}]}`, b["gameInstanceId"])
	}}
	d := newDash(t, Sources{APIURL: api.start(t)})
	rec, doc := do(t, d, http.MethodPost, "/api/allocate", `{"gameInstanceId":"gi-q","region":"us-west","queueTimeoutSeconds":60,"dedicated":true}`)
	if rec.Code != http.StatusOK || doc["ok"] != true || doc["message"] != "gi-q is Queued until 03:05:05 UTC: no capacity yet, the service tries again as it frees" {
		t.Fatalf("%d %v", rec.Code, doc)
	}
	var sent struct {
		QueueTimeoutSeconds *int `json:"queueTimeoutSeconds"`
		Dedicated           bool `json:"dedicated"`
	}
	if err := json.Unmarshal([]byte(api.bodies[0]), &sent); err != nil || sent.QueueTimeoutSeconds == nil || *sent.QueueTimeoutSeconds != 60 || !sent.Dedicated {
		t.Errorf("the API got %s", api.bodies[0])
	}
	// No queue timeout on the form: none is sent, the deployment's applies.
	do(t, d, http.MethodPost, "/api/allocate", `{"gameInstanceId":"gi-r","region":"us-west"}`)
	if strings.Contains(api.bodies[1], "queueTimeoutSeconds") || strings.Contains(api.bodies[1], "dedicated") {
		t.Errorf("the API got %s", api.bodies[1])
	}
}

// Cancel is a DELETE of a Queued placement only: the same DELETE would end
// a game in play.
func TestCancel(t *testing.T) {
	api := &fakeAPI{records: map[string]string{
		"gi-queued": `{"gameInstanceId":"gi-queued","state":"Queued","attempts":[]}`,
		"gi-busy":   `{"gameInstanceId":"gi-busy","state":"Queued","attempts":[]}`,
		"gi-linked": `{"gameInstanceId":"gi-linked","state":"Linked","attempts":[]}`,
	}, del: func(id string) (int, string) {
		if id == "gi-busy" { // the queue worker is asking a region right now
			return http.StatusConflict, `{"error":{"code":"ALLOCATION_IN_PROGRESS","message":"the placement is being tried; retry"}}`
		}
		return http.StatusOK, `{"gameInstanceId":"gi-queued","state":"Failed","attempts":[],"error":{"code":"PLACEMENT_CANCELLED","message":"cancelled"}}`
	}}
	d := newDash(t, Sources{APIURL: api.start(t)})
	tests := []struct {
		id          string
		wantStatus  int
		wantMsg     string
		wantCode    string
		wantDeleted bool
	}{
		{"gi-queued", 200, "gi-queued is Failed (PLACEMENT_CANCELLED)", "PLACEMENT_CANCELLED", true},
		{"gi-busy", 409, "being tried", "ALLOCATION_IN_PROGRESS", true},
		{"gi-linked", 409, "gi-linked is Linked: only a Queued placement can be cancelled", "", false},
		{"gi-unknown", 404, "no game instance", "NOT_FOUND", false},
		{"bad id!", 400, "a valid gameInstanceId is required", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			api.mu.Lock()
			api.deleted = nil
			api.mu.Unlock()
			body, _ := json.Marshal(map[string]string{"gameInstanceId": tt.id})
			rec, doc := do(t, d, http.MethodPost, "/api/cancel", string(body))
			code, _ := doc["code"].(string)
			if rec.Code != tt.wantStatus || !strings.Contains(fmt.Sprint(doc["message"]), tt.wantMsg) || code != tt.wantCode || doc["ok"] != (tt.wantStatus == 200) {
				t.Fatalf("%d %v", rec.Code, doc)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			if (len(api.deleted) == 1) != tt.wantDeleted {
				t.Errorf("DELETEs sent: %v", api.deleted)
			}
		})
	}
}

func TestDrainButton(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var calls []string
	drain := func(region string, d time.Duration) (time.Time, error) {
		calls = append(calls, fmt.Sprintf("%s %s", region, d))
		if region == "nowhere" {
			return time.Time{}, errors.New(`no Allocator lists Region "nowhere"`)
		}
		if d == 0 {
			return time.Time{}, nil
		}
		return t0.Add(d), nil
	}
	tests := []struct {
		name, body string
		noDrain    bool
		wantStatus int
		wantMsg    string
		wantCall   string // "" = Drain not called
	}{
		{"the button's 20 s", `{"region":"us-west"}`, false, 200, "us-west's Allocator runs dry until 03:04:25 UTC", "us-west 20s"},
		{"refill", `{"region":" us-west ","seconds":0}`, false, 200, "us-west's Allocator refilled", "us-west 0s"},
		{"the longest", `{"region":"us-west","seconds":600}`, false, 200, "until 03:14:05 UTC", "us-west 10m0s"},
		{"too long", `{"region":"us-west","seconds":601}`, false, 400, "0 to 600 seconds", ""},
		{"negative", `{"region":"us-west","seconds":-1}`, false, 400, "0 to 600 seconds", ""},
		{"no region", `{"seconds":20}`, false, 400, "a region", ""},
		{"a Region no Allocator lists", `{"region":"nowhere"}`, false, 400, "no Allocator lists", "nowhere 20s"},
		{"unknown field", `{"region":"us-west","for":"20s"}`, false, 400, "unknown field", ""},
		{"no emulated Allocators", `{"region":"us-west"}`, true, 501, "cannot drain", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = nil
			src := Sources{Drain: drain}
			if tt.noDrain {
				src.Drain = nil
			}
			rec, doc := do(t, newDash(t, src), http.MethodPost, "/api/drain", tt.body)
			if rec.Code != tt.wantStatus || !strings.Contains(fmt.Sprint(doc["message"]), tt.wantMsg) || doc["ok"] != (tt.wantStatus == 200) {
				t.Fatalf("%d %v", rec.Code, doc)
			}
			if got := strings.Join(calls, ","); got != tt.wantCall {
				t.Errorf("Drain called with %q, want %q", got, tt.wantCall)
			}
		})
	}
}
