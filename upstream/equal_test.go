package upstream

import (
	"math"
	"reflect"

	"github.com/google/go-cmp/cmp"
)

// sameDecoded reports whether two decoded values are the same, as
// reflect.DeepEqual does, except that a Float64 equals another with the
// same bits: the wire's "NaN" decodes to a NaN, which DeepEqual never
// finds equal to itself.
func sameDecoded(a, b any) bool {
	return cmp.Equal(a, b,
		cmp.Exporter(func(reflect.Type) bool { return true }),
		cmp.Comparer(func(x, y Float64) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }))
}
