package store

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// GameServerKey is the key attribute of GameServersTable: the server's
// address as GameFabric answered it.
const GameServerKey = "address"

// FreeRoomsIndex is GameServersTable's sparse index of accepting servers:
// hash key roomPool (present only while the server accepts), range key
// freeRooms, so one Query lists a pool's servers with a free room, fullest
// (Packed) or emptiest (Distributed) first.
const FreeRoomsIndex = "FreeRoomsIndex"

// gameServerItem is a game-server record's DynamoDB shape. The counts move
// only together with sessions, in the same conditional write, so
// roomsInUse is always the size of sessions and freeRooms is roomCapacity
// minus roomsInUse. ("capacity" and "free" are DynamoDB reserved words.)
type gameServerItem struct {
	Address          string         `dynamodbav:"address"`
	Region           string         `dynamodbav:"region"`
	Environment      string         `dynamodbav:"environment"`
	ArmadaSet        string         `dynamodbav:"armadaSet"`
	IP               string         `dynamodbav:"ip"`
	Ports            map[string]int `dynamodbav:"ports"`
	RoomCapacity     int            `dynamodbav:"roomCapacity"`
	RoomsInUse       int            `dynamodbav:"roomsInUse"`
	FreeRooms        int            `dynamodbav:"freeRooms"`
	Sessions         []string       `dynamodbav:"sessions,stringset,omitempty"`
	Accepting        bool           `dynamodbav:"accepting"`
	RoomPool         string         `dynamodbav:"roomPool,omitempty"`
	ClosedReason     string         `dynamodbav:"closedReason,omitempty"`
	CallbackURL      string         `dynamodbav:"callbackUrl,omitempty"`
	CallbackToken    string         `dynamodbav:"callbackToken,omitempty"`
	CallbackFailures int            `dynamodbav:"callbackFailures"`
	CreatedAt        string         `dynamodbav:"createdAt"`
	UpdatedAt        string         `dynamodbav:"updatedAt"`
	ExpiresAt        int64          `dynamodbav:"expiresAt,omitempty"`
}

// PoolKey is the roomPool value of a pool's accepting servers.
func PoolKey(p gameinstance.RoomPool) string {
	return p.Region + "/" + p.Environment + "/" + p.ArmadaSet
}

// DecodeGameServer reads a GameServersTable item (or an index item, which
// holds only some attributes) into its record.
func DecodeGameServer(av map[string]types.AttributeValue) (gameinstance.GameServer, error) {
	var it gameServerItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return gameinstance.GameServer{}, fmt.Errorf("decode game server: %w", err)
	}
	if it.Address == "" {
		return gameinstance.GameServer{}, errors.New("decode game server: item without address")
	}
	return gameinstance.GameServer{
		Address: it.Address, Region: it.Region, Environment: it.Environment, ArmadaSet: it.ArmadaSet,
		IP: it.IP, Ports: it.Ports, Capacity: it.RoomCapacity, InUse: it.RoomsInUse,
		Accepting: it.Accepting, ClosedReason: it.ClosedReason, CallbackURL: it.CallbackURL, CallbackToken: it.CallbackToken,
		CallbackFailures: it.CallbackFailures, Sessions: it.Sessions,
		CreatedAt: ParseTime(it.CreatedAt), UpdatedAt: ParseTime(it.UpdatedAt),
	}, nil
}

// expr builds one UpdateItem's expression: SET, ADD, DELETE and REMOVE
// clauses with their names and values, written by the helpers below so
// every write of a game server spells its attributes the same way.
type expr struct {
	set, add, del, remove []string
	names                 map[string]string
	values                map[string]types.AttributeValue
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// name is the placeholder of an attribute (every one gets one: several of
// ours are reserved words).
func (e *expr) name(attr string) string {
	n := "#" + attr
	e.names[n] = attr
	return n
}

// value is the placeholder of a value.
func (e *expr) value(key string, v types.AttributeValue) string {
	k := ":" + key
	e.values[k] = v
	return k
}

func (e *expr) str(key, v string) string {
	return e.value(key, &types.AttributeValueMemberS{Value: v})
}

func (e *expr) num(key string, v int64) string {
	return e.value(key, &types.AttributeValueMemberN{Value: formatInt(v)})
}

func (e *expr) sessionSet(id string) string {
	return e.value("session", &types.AttributeValueMemberSS{Value: []string{id}})
}

func (e *expr) update() string {
	var out string
	for _, c := range []struct {
		verb  string
		parts []string
	}{{"SET", e.set}, {"ADD", e.add}, {"DELETE", e.del}, {"REMOVE", e.remove}} {
		if len(c.parts) == 0 {
			continue
		}
		if out != "" {
			out += " "
		}
		out += c.verb + " " + strings.Join(c.parts, ", ")
	}
	return out
}

// touch sets updatedAt and pushes the record's expiry out: a record nobody
// writes for the retention (a closed server whose sessions all ended, an
// idle one that died) expires.
func (e *expr) touch(now time.Time, retention time.Duration) {
	e.set = append(e.set, e.name("updatedAt")+" = "+e.str("now", FormatTime(now)),
		e.name("expiresAt")+" = "+e.num("expires", now.Add(retention).Unix()))
}

// close stops the server accepting: it leaves the index.
func (e *expr) close(reason string) {
	e.set = append(e.set, e.name("accepting")+" = "+e.value("false", &types.AttributeValueMemberBOOL{Value: false}),
		e.name("closedReason")+" = "+e.str("reason", reason))
	e.remove = append(e.remove, e.name("roomPool"))
}

// holds is the condition that the session holds a room on the server.
func (e *expr) holds(id string) string {
	return "contains(" + e.name("sessions") + ", " + e.str("id", id) + ")"
}

// release gives the session's room back.
func (e *expr) release(id string) {
	one := e.num("one", 1)
	e.set = append(e.set, e.name("roomsInUse")+" = "+e.name("roomsInUse")+" - "+one,
		e.name("freeRooms")+" = "+e.name("freeRooms")+" + "+one)
	e.del = append(e.del, e.name("sessions")+" "+e.sessionSet(id))
}
