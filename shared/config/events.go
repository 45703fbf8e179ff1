package config

import "log/slog"

// Events is EventsFunction's configuration.
type Events struct {
	// Bus is EVENT_BUS_NAME: the EventBridge bus events are put on.
	Bus      string
	LogLevel slog.Level
}

// LoadEvents reads EventsFunction's configuration.
func LoadEvents(getenv func(string) string) (Events, error) {
	r := reader{getenv: getenv}
	c := Events{Bus: r.required("EVENT_BUS_NAME"), LogLevel: r.level("LOG_LEVEL")}
	if err := r.err(); err != nil {
		return Events{}, err
	}
	return c, nil
}
