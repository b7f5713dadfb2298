package graph

import (
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradenet/gateway/upstream"
)

// TestTransactionTypeStrings keeps typeStrings and the schema's enum in
// step: every value has its strings, and its description quotes exactly
// those.
func TestTransactionTypeStrings(t *testing.T) {
	def := NewExecutableSchema(Config{}).Schema().Types["TransactionType"]
	if def == nil {
		t.Fatal("the schema has no TransactionType")
	}
	if len(def.EnumValues) != 34 || len(typeStrings) != 34 {
		t.Errorf("%d enum values and %d in typeStrings, want the 34 command kinds of v0.74", len(def.EnumValues), len(typeStrings))
	}
	quoted := regexp.MustCompile(`"([^"]+)"`)
	for _, v := range def.EnumValues {
		want := typeStrings[upstream.TransactionType(v.Name)]
		if len(want) == 0 {
			t.Errorf("%s has no type strings in typeStrings", v.Name)
			continue
		}
		var got []string
		for _, m := range quoted.FindAllStringSubmatch(v.Description, -1) {
			got = append(got, m[1])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the description quotes other strings than typeStrings (-typeStrings +description):\n%s", v.Name, diff)
		}
	}
	if len(typeOfString) != 37 {
		t.Errorf("%d valid type strings, want 37 (34, and 3 spellings of cores before v0.72)", len(typeOfString))
	}
}

func TestTypeFilter(t *testing.T) {
	got, err := typeFilter("cmdTypes",
		[]upstream.TransactionType{upstream.TransactionTypeRegisterNewNode, upstream.TransactionTypeSubmitOrder},
		[]string{"Submit Order", "Register new Node", "Chain Event"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Register New Node", "Register new Node", "Submit Order", "Chain Event"}
	if !slices.Equal(got, want) {
		t.Errorf("typeFilter = %q, want %q (each value's every spelling, each string once)", got, want)
	}
	if got, err := typeFilter("cmdTypes", nil, nil); err != nil || got != nil {
		t.Errorf("no types: %q, %v; want no filter", got, err)
	}
}
