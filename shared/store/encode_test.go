package store

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestEncodeIsWhatTheStoreReads(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := gameinstance.Record{GameInstanceID: "gi-enc", State: gameinstance.StateLinked, Region: "us-west", Version: 3,
		CreatedAt: at, UpdatedAt: at, LinkedAt: at, LastHeartbeatAt: at.Add(time.Minute), HealthDeadline: at.Add(3 * time.Minute),
		LeaseExpiresAt: at, Server: &gameinstance.Server{Address: "10.0.0.1:7000", IP: "10.0.0.1", Ports: map[string]int{"game": 7000}}}
	av, err := Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := av["healthShard"].(*types.AttributeValueMemberS); !ok || s.Value != HealthShard("gi-enc") {
		t.Fatalf("healthShard = %v, want %s", av["healthShard"], HealthShard("gi-enc"))
	}
	got, err := decode(av)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != rec.State || got.Version != 3 || !got.HealthDeadline.Equal(rec.HealthDeadline) ||
		!got.LastHeartbeatAt.Equal(rec.LastHeartbeatAt) || got.Server.Address != rec.Server.Address {
		t.Fatalf("decoded %+v, want %+v", got, rec)
	}
}

// Every field of a record round-trips, the rooms' included: a field left
// out of item.go would vanish at the next write.
func TestRecordRoundTrips(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := gameinstance.Record{GameInstanceID: "gi-rt", State: gameinstance.StateAllocated, Region: "us-west", Version: 2,
		Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west", GameServerVersion: "prod::arena", ServerArgs: "-x", RegionInputs: "d",
			Scheduling: gameinstance.SchedulingDistributed, Dedicated: true},
		Environment: "prod", ArmadaSet: "arena", PartnerGameTokenHash: "h", ClaimID: "c",
		Server:    &gameinstance.Server{Address: "10.0.0.1:7000", IP: "10.0.0.1", Ports: map[string]int{"game": 7000}},
		Placement: gameinstance.PlacementRoom, RoomServer: "10.0.0.1:7000",
		Attempts: []gameinstance.Attempt{{Region: "eu", Status: 503, AllocatorKind: gameinstance.AllocatorGameFabric},
			{Region: "eu-metal", Status: 429, AllocatorKind: gameinstance.AllocatorAgones},
			{Region: "us-west", Status: 200, DurationMs: 3, Placement: gameinstance.PlacementRoom, Server: "10.0.0.1:7000"},
			{Region: "us-west", Status: 200, AllocatorKind: gameinstance.AllocatorAgones, GameServerName: "fleet-x", NodeName: "node-1"}},
		LeaseExpiresAt: at, CreatedAt: at, UpdatedAt: at, HealthDeadline: at.Add(time.Minute)}
	av, err := Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decode(av)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, rec)
	}
	// A GameFabric attempt does not store its kind (it is the default).
	if first := av["attempts"].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value; first["allocatorKind"] != nil {
		t.Fatalf("a GameFabric attempt stores its kind: %v", first)
	}
}

// Every attribute a record has is written: attributeOrder names each of
// item's but the key and the version, and every optional one.
func TestAttributeOrderCoversTheItem(t *testing.T) {
	order := map[string]bool{}
	for _, name := range attributeOrder {
		order[name] = true
	}
	typ := reflect.TypeFor[item]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("dynamodbav"), ",")
		if name != "gameInstanceId" && name != "version" && !order[name] {
			t.Errorf("attributeOrder lacks %q", name)
		}
	}
	for _, name := range optional {
		if !order[name] {
			t.Errorf("attributeOrder lacks the optional %q", name)
		}
	}
	if len(order) != typ.NumField()-2 {
		t.Errorf("attributeOrder has %d names, item %d attributes besides its key and version", len(order), typ.NumField()-2)
	}
}
