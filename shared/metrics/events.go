package metrics

import "github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"

// Events turns published lifecycle events into metrics: they are the
// record of truth's transitions, so link time and unhealthy instances are
// measured once each, whichever function made the change.
type Events struct{ EMF *EMF }

// Published records events now on the bus, and failed: how many were not
// (events refused or not tried, and a stream record that could not be
// read: EventsPublishFailedAlarm watches both).
func (m Events) Published(evs []eventcatalog.Event, failed int) {
	m.EMF.Emit(nil, Metric{"EventsPublished", float64(len(evs)), "Count"}, Metric{"EventsPublishFailed", float64(failed), "Count"})
	unhealthy := map[string]int{}
	for _, e := range evs {
		switch e.Type {
		case eventcatalog.GameServerLinked:
			if e.LinkTime > 0 {
				m.EMF.Emit(nil, Metric{"LinkTime", float64(e.LinkTime.Milliseconds()), "Milliseconds"})
			}
		case eventcatalog.GameInstanceUnhealthy:
			unhealthy[e.Instance.UnhealthyReason]++
		}
	}
	for reason, n := range unhealthy {
		m.EMF.Emit(map[string]string{"Reason": reason}, Metric{"GameInstancesUnhealthy", float64(n), "Count"})
	}
}
