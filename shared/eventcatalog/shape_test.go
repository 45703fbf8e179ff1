package eventcatalog

import (
	"reflect"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// A game-instance event's detail carries every field GET
// /v1/allocations/{id} answers (docs/events.md), under the same name but
// for the one it published first under another; its times are strings
// (timestamp), the same text.
func TestInstanceDetailCarriesTheAllocation(t *testing.T) {
	renamed := map[string]string{"latencyFilterRelaxed": "latencyRelaxed"}
	detail := map[string]reflect.Type{}
	for _, f := range apishape.Fields(reflect.TypeFor[InstanceDetail]()) {
		detail[f.Name] = f.Type
	}
	for _, f := range apishape.Fields(reflect.TypeFor[apishape.Allocation]()) {
		name := f.Name
		if r, ok := renamed[name]; ok {
			name = r
		}
		typ, ok := detail[name]
		switch {
		case !ok:
			t.Errorf("the allocation's %s is not in the event detail (InstanceDetail)", f.Name)
		case typ != f.Type && !(f.Type == reflect.TypeFor[time.Time]() && typ.Kind() == reflect.String):
			t.Errorf("the allocation's %s is a %v, the event detail's %s a %v", f.Name, f.Type, name, typ)
		}
	}
}
