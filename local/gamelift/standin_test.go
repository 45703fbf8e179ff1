package gamelift

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	gl "github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"
)

// client is the real GameLift client of the pinned SDK, pointed at s.
func client(t *testing.T, s *StandIn) *gl.Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return gl.New(gl.Options{Region: "eu-central-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
}

func TestTheSDKReadsTheTickets(t *testing.T) {
	s := New()
	start := time.Date(2026, 11, 24, 12, 0, 0, 250e6, time.UTC)
	s.Put(Ticket{TicketID: "t-1", ConfigurationName: "standalone", ConfigurationArn: "arn:aws:gamelift:eu-central-1:123456789012:matchmakingconfiguration/standalone",
		Status: "COMPLETED", StartTime: start, Players: []Player{
			{PlayerID: "p1", Team: "red", LatencyInMs: map[string]int{"custom-eu-central-1": 40, "us-west": 150}},
			{PlayerID: "p2", LatencyInMs: map[string]int{"eu-central-1": 55}}}},
		Ticket{TicketID: "t.2", Status: "COMPLETED", Players: []Player{{PlayerID: "p3", LatencyInMs: map[string]int{}}}})
	out, err := client(t, s).DescribeMatchmaking(context.Background(), &gl.DescribeMatchmakingInput{TicketIds: []string{"t-1", "missing", "t.2"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TicketList) != 2 {
		t.Fatalf("%d tickets, want the 2 that exist", len(out.TicketList))
	}
	first := out.TicketList[0]
	if aws.ToString(first.TicketId) != "t-1" || first.Status != types.MatchmakingConfigurationStatusCompleted ||
		!aws.ToTime(first.StartTime).Equal(start) || aws.ToString(first.ConfigurationName) != "standalone" || len(first.Players) != 2 {
		t.Fatalf("ticket %+v", first)
	}
	p1 := first.Players[0]
	if aws.ToString(p1.PlayerId) != "p1" || aws.ToString(p1.Team) != "red" ||
		!reflect.DeepEqual(p1.LatencyInMs, map[string]int32{"custom-eu-central-1": 40, "us-west": 150}) {
		t.Fatalf("player %+v", p1)
	}
	if got := s.Calls(); !reflect.DeepEqual(got, [][]string{{"t-1", "missing", "t.2"}}) {
		t.Fatalf("calls %v", got)
	}
}

func TestBadRequestsAndFaults(t *testing.T) {
	eleven := strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")
	for _, tc := range []struct {
		name   string
		ids    []string
		faults []Fault
		code   string
		calls  int // calls that reached the stand-in's tickets (the SDK's retries included)
		ok     bool
	}{
		{"more than 10 ids", eleven, nil, "InvalidRequestException", 0, false},
		{"an id outside the pattern", []string{"t/1"}, nil, "InvalidRequestException", 0, false},
		{"an id too long", []string{strings.Repeat("t", 129)}, nil, "InvalidRequestException", 0, false},
		{"a modelled fault is the SDK's typed error", []string{"t"}, []Fault{{400, "com.amazonaws.gamelift#InvalidRequestException", "bad ticket"}}, "InvalidRequestException", 1, false},
		{"throttling is retried by the SDK", []string{"t"}, []Fault{{400, "ThrottlingException", "slow down"}}, "", 2, true},
		{"an internal error is retried by the SDK", []string{"t"}, []Fault{{500, "InternalServiceException", "oops"}}, "", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			s.Put(Ticket{TicketID: "t", Status: "COMPLETED"})
			s.Fail(tc.faults...)
			_, err := client(t, s).DescribeMatchmaking(context.Background(), &gl.DescribeMatchmakingInput{TicketIds: tc.ids},
				func(o *gl.Options) { o.RetryMaxAttempts = 3 })
			var api smithy.APIError
			switch {
			case tc.ok && err != nil:
				t.Fatalf("err = %v", err)
			case !tc.ok && (!errors.As(err, &api) || api.ErrorCode() != tc.code):
				t.Fatalf("err = %v, want %s", err, tc.code)
			case len(s.Calls()) != tc.calls:
				t.Fatalf("%d calls, want %d", len(s.Calls()), tc.calls)
			}
		})
	}
}

func TestASlowStandInIsBoundedByTheCaller(t *testing.T) {
	s := New()
	s.Delay(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client(t, s).DescribeMatchmaking(ctx, &gl.DescribeMatchmakingInput{TicketIds: []string{"t"}})
	if err == nil || time.Since(start) > time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestOtherRequestsAreRefusedTheWayTheProtocolSays(t *testing.T) {
	srv := httptest.NewServer(New())
	defer srv.Close()
	for _, tc := range []struct {
		name, path string
		header     bool
		status     int
	}{
		{"another operation", "/service/GameLift/operation/StartMatchmaking", true, http.StatusNotFound},
		{"without the protocol header", Operation, false, http.StatusBadRequest},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(""))
		if tc.header {
			req.Header.Set("smithy-protocol", "rpc-v2-cbor")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("smithy-protocol") != "rpc-v2-cbor" || resp.Header.Get("Content-Type") != "application/cbor" {
			t.Errorf("%s: %d %v", tc.name, resp.StatusCode, resp.Header)
		}
	}
}
