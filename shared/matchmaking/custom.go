package matchmaking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// CustomEventData is the matchmaking configuration's CustomEventData, as
// GameFabric's FlexMatch guide defines it ({"region", "attributes"}), with
// the allocation API's gameServerVersion as the other way to name the
// version. Attributes are the Allocator attributes the service sends:
// env and armadaset.
type CustomEventData struct {
	// Region is the match's region when its players reported no latencies.
	Region            string            `json:"region"`
	GameServerVersion string            `json:"gameServerVersion"`
	Attributes        map[string]string `json:"attributes"`
}

// Version is the gameServerVersion the match asks for: gameServerVersion,
// else "<env>::<armadaset>" from the attributes, else "" (the fallbacks).
func (c CustomEventData) Version() string {
	if c.GameServerVersion != "" {
		return c.GameServerVersion
	}
	env, set := c.Attributes["env"], c.Attributes["armadaset"]
	if env == "" && set == "" {
		return ""
	}
	return env + "::" + set
}

// ParseCustomEventData reads customEventData strictly: empty is allowed
// (every setting from the deployment's fallbacks); anything else must be
// one JSON object of known fields. An unknown field is refused rather than
// ignored: a misspelt "regoin" would otherwise send every match to the
// fallback region without a word.
func ParseCustomEventData(s string) (CustomEventData, error) {
	var c CustomEventData
	if strings.TrimSpace(s) == "" {
		return c, nil
	}
	if len(s) > maxCustomData {
		return c, fmt.Errorf("customEventData is %d bytes; GameLift allows %d", len(s), maxCustomData)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return CustomEventData{}, fmt.Errorf("customEventData is not a JSON object of region, gameServerVersion and attributes: %s",
			strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return CustomEventData{}, errors.New("customEventData has data after its JSON object")
	}
	if !bytes.HasPrefix(bytes.TrimSpace([]byte(s)), []byte("{")) {
		return CustomEventData{}, errors.New("customEventData must be a JSON object")
	}
	for k := range c.Attributes {
		if k != "env" && k != "armadaset" {
			return CustomEventData{}, fmt.Errorf("customEventData.attributes names %q; the service sends only env and armadaset to the Allocator", bounded(k))
		}
	}
	if c.GameServerVersion != "" && len(c.Attributes) > 0 {
		return CustomEventData{}, errors.New("customEventData names both gameServerVersion and attributes; name the version one way")
	}
	return c, nil
}
