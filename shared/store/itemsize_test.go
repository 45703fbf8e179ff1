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
