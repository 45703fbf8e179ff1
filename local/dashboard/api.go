package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// newAPIClient calls the local HTTP API the way a game backend would, with
// the backend client, one try per call: the dashboard shows every answer
// as it came, and a person clicks again.
func newAPIClient(apiURL string) (*allocclient.Client, error) {
	return allocclient.New(allocclient.Options{BaseURL: apiURL, MaxAttempts: 1,
		HTTPClient: &http.Client{Timeout: allocateTimeout}})
}

// failedClient answers every call with why the client could not be built
// (a malformed APIURL), so the page shows it instead of the server dying.
type failedClient struct{ err error }

// apiCalls is what the dashboard asks of the API.
type apiCalls interface {
	Regions(ctx context.Context) (*allocclient.Regions, error)
	Allocate(ctx context.Context, r allocclient.AllocateRequest) (*allocclient.Allocation, error)
	Get(ctx context.Context, gameInstanceID string) (*allocclient.Allocation, error)
	// End is DELETE: it cancels a Queued placement.
	End(ctx context.Context, gameInstanceID string) (*allocclient.Allocation, error)
}

func (f failedClient) Regions(context.Context) (*allocclient.Regions, error) { return nil, f.err }
func (f failedClient) Allocate(context.Context, allocclient.AllocateRequest) (*allocclient.Allocation, error) {
	return nil, f.err
}
func (f failedClient) Get(context.Context, string) (*allocclient.Allocation, error) {
	return nil, f.err
}
func (f failedClient) End(context.Context, string) (*allocclient.Allocation, error) {
	return nil, f.err
}

// apiFailure is the status and code the page shows for err: the API's
// own answer when there was one, 502 when it could not be reached.
func apiFailure(err error) (status int, code, message string, body *allocclient.Allocation) {
	var e *allocclient.Error
	if errors.As(err, &e) {
		msg := e.Message
		if msg == "" {
			msg = http.StatusText(e.Status)
		}
		return e.Status, e.Code, msg, e.Allocation
	}
	return http.StatusBadGateway, "", fmt.Sprintf("the local API does not answer: %v", err), nil
}
