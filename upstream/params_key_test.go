package upstream

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// keyVariants returns values of type t that differ from each other in
// the ways that keys must tell apart: empty and not, nil and empty, nil
// and a pointer to a zero, a value and its neighbours, one string and two
// that concatenate to it. For a struct: the zero value, and each field set
// to each of its variants with the others zero (so that a field the key
// forgets gives a collision with the zero value).
func keyVariants(t reflect.Type) []reflect.Value {
	var out []reflect.Value
	add := func(v any) { out = append(out, reflect.ValueOf(v).Convert(t)) }
	switch t.Kind() {
	case reflect.String:
		for _, s := range []string{"", "a", "b", "ab", "\x00", "\x01a"} {
			add(s)
		}
	case reflect.Int, reflect.Int32:
		for _, n := range []int64{0, 1, -1, 300, math.MaxInt32} {
			add(n)
		}
	case reflect.Uint32, reflect.Uint64:
		for _, n := range []uint64{0, 1, 300, math.MaxUint32} {
			add(n)
		}
	case reflect.Bool:
		add(false)
		add(true)
	case reflect.Pointer:
		out = append(out, reflect.Zero(t))
		for _, v := range keyVariants(t.Elem()) {
			p := reflect.New(t.Elem())
			p.Elem().Set(v)
			out = append(out, p)
		}
	case reflect.Slice:
		out = append(out, reflect.Zero(t), reflect.MakeSlice(t, 0, 0))
		elems := keyVariants(t.Elem())
		for _, v := range elems {
			out = append(out, reflect.Append(reflect.MakeSlice(t, 0, 1), v))
		}
		for _, pair := range [][2]int{{0, 1}, {1, 2}, {2, 1}, {1, 0}} {
			out = append(out, reflect.Append(reflect.MakeSlice(t, 0, 2), elems[pair[0]], elems[pair[1]]))
		}
	case reflect.Struct:
		out = append(out, reflect.Zero(t))
		for i := range t.NumField() {
			for _, v := range keyVariants(t.Field(i).Type)[1:] {
				s := reflect.New(t).Elem()
				s.Field(i).Set(v)
				out = append(out, s)
			}
		}
	default:
		panic("keyVariants: no variants of " + t.String())
	}
	return out
}

// randomKeyVariant returns a value of struct type t whose every field is
// one of its variants, picked at random.
func randomKeyVariant(rng *rand.Rand, t reflect.Type) reflect.Value {
	s := reflect.New(t).Elem()
	for i := range t.NumField() {
		f := t.Field(i).Type
		if f.Kind() == reflect.Struct {
			s.Field(i).Set(randomKeyVariant(rng, f))
			continue
		}
		vs := keyVariants(f)
		s.Field(i).Set(vs[rng.IntN(len(vs))])
	}
	return s
}

// TestParamsKeysInjective: over every params type, parameters that
// differ in any one field (nil and empty lists, nil pointers and pointers
// to zeros, strings that concatenate alike in two fields included), and
// many that differ in several, have different keys; equal ones have the
// same key.
func TestParamsKeysInjective(t *testing.T) {
	type keyed interface{ AppendKey([]byte) []byte }
	rng := rand.New(rand.NewPCG(5, 6))
	for _, zero := range []keyed{Pagination{}, AssetsParams{}, FundingPaymentsParams{}, DelegationsParams{}, TransactionsParams{}} {
		typ := reflect.TypeOf(zero)
		values := keyVariants(typ)
		for range 5000 {
			values = append(values, randomKeyVariant(rng, typ))
		}
		seen := map[string]reflect.Value{}
		for _, v := range values {
			p := v.Interface().(keyed)
			key := string(p.AppendKey(nil))
			if key != string(p.AppendKey([]byte("prefix"))[len("prefix"):]) {
				t.Fatalf("%s %+v: the key depends on what it is appended to", typ, p)
			}
			if other, ok := seen[key]; ok && !reflect.DeepEqual(other.Interface(), p) {
				t.Fatalf("%s: %+v and %+v share the key %q", typ, other.Interface(), p, key)
			}
			seen[key] = v
		}
		if len(seen) < 20 {
			t.Fatalf("%s: only %d distinct keys", typ, len(seen))
		}
	}
}
