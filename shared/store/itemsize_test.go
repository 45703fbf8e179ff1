package store

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestItemSizeFollowsTheDocumentedRules(t *testing.T) {
	item := map[string]types.AttributeValue{
		"id":   &types.AttributeValueMemberS{Value: "abc"},                                                                           // 2 + 3
		"n":    &types.AttributeValueMemberN{Value: "1200"},                                                                          // 1 + (2 significant digits → 1) + 1
		"ok":   &types.AttributeValueMemberBOOL{Value: true},                                                                         // 2 + 1
		"tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}},                // 4 + 3 + 1 + 1
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "vv"}}}, // 1 + 3 + 1 + 1 + 2
	}
	if got, want := ItemSize(item), 5+3+3+9+8; got != want {
		t.Fatalf("ItemSize = %d, want %d", got, want)
	}
}

func TestNumberSize(t *testing.T) {
	for _, tc := range []struct {
		n    string
		want int
	}{{"0", 1}, {"7", 2}, {"-5", 2}, {"100", 2}, {"1200", 2}, {"0.001", 2}, {"10.01", 3}, {"1.50e10", 2}, {"123456", 4}, {"-1.5E-7", 2}} {
		if got := numberSize(tc.n); got != tc.want {
			t.Errorf("numberSize(%q) = %d, want %d", tc.n, got, tc.want)
		}
	}
}
